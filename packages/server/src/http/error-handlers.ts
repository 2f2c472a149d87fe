// Every error answer in our shape, {request_id, error, code, details?} (api/errors.ts), never Fastify's:
// what a route or hook threw, a path no route has, and what the router refused before any hook ran.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { BASE_HEADERS, routerError, STATUS_OF, sendError, toServiceError } from '../api/errors.ts';
import type { App } from '../app-type.ts';
import type { Deps } from '../deps.ts';
import { ServiceError } from '../errors.ts';
import { refusedBeforeRoute } from './refused-before-route.ts';
import { logRequest } from './request-log.ts';

export function errorHandlers(app: App, deps: Deps) {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const serviceError = toServiceError(error, request.headers['content-type']);
    if (STATUS_OF[serviceError.code] >= 500)
      request.log.error({ request_id: request.id, err: error }, 'request failed');
    return sendError(request, reply, serviceError);
  });

  app.setNotFoundHandler((request, reply) =>
    sendError(request, reply, refusedBeforeRoute(deps, request, true) ?? new ServiceError('route_not_found')),
  );
}

/**
 * Errors the router raises before any hook runs (a broken %-escape, an over-long path parameter): the
 * `frameworkErrors` option, given when the instance is made.
 */
export function answerRouterError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  // Fastify does not report these replies to the log controller: write their request line here.
  const started = performance.now();
  reply.raw.once('finish', () => logRequest(request, reply, performance.now() - started));
  reply.headers(BASE_HEADERS);
  reply.header('x-request-id', request.id);
  return sendError(request, reply, routerError(error));
}
