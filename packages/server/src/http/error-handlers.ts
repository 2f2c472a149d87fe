// Every error answer in our shape, {request_id, error, code, details?} (api/errors.ts), never Fastify's:
// what a route or hook threw, a path no route has, and what the router refused before any hook ran.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { BASE_HEADERS, routerError, sendError, toServiceError } from '../api/errors.ts';
import type { App, PageSurfaces } from '../app-type.ts';
import type { Deps } from '../deps.ts';
import { ServiceError, STATUS_OF } from '../errors.ts';
import { refusedBeforeRoute } from './refused-before-route.ts';
import { logRequest } from './request-log.ts';

export function errorHandlers(app: App, deps: Deps, surfaces: Surfaces) {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const serviceError = toServiceError(error, request.headers['content-type']);
    if (STATUS_OF[serviceError.code] >= 500)
      request.log.error({ request_id: request.id, err: error }, 'request failed');
    return sendError(request, reply, serviceError);
  });

  // A path no route has: under a surface of pages (a share link cut short in a chat), a page in words.
  app.setNotFoundHandler((request, reply) => {
    const error = refusedBeforeRoute(deps, request, true) ?? new ServiceError('route_not_found');
    const page = surfaces.pageHandlerOf(request.url);
    return page ? page(error, request, reply) : sendError(request, reply, error);
  });
}

type PageErrorHandler = Parameters<PageSurfaces['add']>[1];

/** The paths that answer in pages, by prefix (app-type.ts PageSurfaces). */
export class Surfaces implements PageSurfaces {
  private readonly pages: { prefix: string; handle: PageErrorHandler }[] = [];

  add(prefix: string, handle: PageErrorHandler): void {
    this.pages.push({ prefix, handle });
  }

  /** The error handler of the pages `url` is under, if it is under any. */
  pageHandlerOf(url: string): PageErrorHandler | undefined {
    const path = url.split('?')[0] ?? '';
    return this.pages.find(({ prefix }) => path === prefix || path.startsWith(`${prefix}/`))?.handle;
  }
}

/**
 * Errors the router raises before any hook runs (a broken %-escape, an over-long path parameter): the
 * `frameworkErrors` option, given when the instance is made. Under a surface of pages, a page.
 */
export function routerErrorAnswer(surfaces: Surfaces) {
  return function answerRouterError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
    // Fastify does not report these replies to the log controller: write their request line here.
    const started = performance.now();
    reply.raw.once('finish', () => logRequest(request, reply, performance.now() - started));
    reply.headers(BASE_HEADERS);
    reply.header('x-request-id', request.id);
    const page = surfaces.pageHandlerOf(request.url);
    if (page) return page(routerError(error), request, reply);
    return sendError(request, reply, routerError(error));
  };
}
