// buildApp(deps): the whole HTTP surface on one Fastify instance, which never listens by itself
// (main.ts does), so tests drive it through inject() or a port of their choosing.

import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { ErrorObject } from 'ajv';
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
  type RouteOptions,
} from 'fastify';
import { CORS_ALLOWED_HEADERS, clientNetwork } from './api/auth.ts';
import { ApiError, type ErrorCode } from './api/errors.ts';
import { idempotencyOnSend } from './api/idempotency.ts';
import { registerApiRoutes } from './api/index.ts';
import { ErrorSchema } from './api/schemas.ts';
import { addSharedSchema, describeErrors, validatorCompiler } from './api/validation.ts';
import type { Deps } from './deps.ts';
import { ids } from './ids.ts';

export type App = FastifyInstance<
  import('node:http').Server,
  import('node:http').IncomingMessage,
  import('node:http').ServerResponse,
  import('fastify').FastifyBaseLogger,
  TypeBoxTypeProvider
>;

const BODY_LIMIT_BYTES = 256 * 1024;

/**
 * One log line per request, when it completes. The route pattern, never the URL: pay-page URLs carry
 * access tokens. No headers and no bodies, so keys and card numbers cannot reach the log.
 */
class RequestLog extends LogController {
  constructor() {
    super({ requestIdLogLabel: 'request_id' });
  }

  override incomingRequest(): void {}

  override requestCompleted(
    _error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    logRequest(request, reply, reply.elapsedTime);
  }
}

function logRequest(request: FastifyRequest, reply: FastifyReply, ms: number) {
  reply.log.info(
    {
      request_id: request.id,
      method: request.method,
      route: request.routeOptions.url ?? '(no route)',
      status: reply.statusCode,
      ms: Math.round(ms * 100) / 100,
    },
    'request',
  );
}

/** Fastify's own errors that a client causes, with the code we answer them with. */
const FASTIFY_CLIENT_ERRORS: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'invalid_json',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'invalid_request',
  FST_ERR_CTP_BODY_TOO_LARGE: 'body_too_large',
  FST_ERR_CTP_INVALID_TYPE: 'invalid_json',
};

/**
 * Requests Node's HTTP parser refuses (a malformed request line, headers over the limit) never become a
 * Fastify request: answer them on the socket, in our shape, as Fastify's own handler would.
 */
function answerClientError(error: Error & { code?: string }, socket: Socket) {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const apiError =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? new ApiError('headers_too_large')
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new ApiError('request_timeout')
        : new ApiError('invalid_request', { message: 'The request is not valid HTTP.' });
  const id = ids.request();
  const body = JSON.stringify({ request_id: id, error: apiError.message, code: apiError.code });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${apiError.statusCode} ${STATUS_CODES[apiError.statusCode]}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${id}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

function sendError(request: FastifyRequest, reply: FastifyReply, error: ApiError) {
  if (error.headers) reply.headers(error.headers);
  const body: Record<string, unknown> = { request_id: request.id, error: error.message, code: error.code };
  if (error.details?.length) body.details = error.details;
  return reply.code(error.statusCode).type('application/json; charset=utf-8').send(JSON.stringify(body));
}

function toApiError(error: FastifyError & { validation?: ErrorObject[] }): ApiError {
  if (error instanceof ApiError) return error;
  if (error.validation) {
    const details = describeErrors(error.validation);
    const code = error.validation.every((e) => e.instancePath.startsWith('/cart'))
      ? 'invalid_cart'
      : 'invalid_request';
    return new ApiError(code, { message: details[0] ?? 'The request is not valid.', details });
  }
  // JSON.parse errors, prototype poisoning and the like arrive as SyntaxError with status 400.
  if (error instanceof SyntaxError)
    return new ApiError('invalid_json', { message: `The request body is not valid JSON: ${error.message}` });
  const known = error.code ? FASTIFY_CLIENT_ERRORS[error.code] : undefined;
  if (known) return new ApiError(known);
  if (error.statusCode === 429) return new ApiError('rate_limited');
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    return new ApiError('invalid_request', { message: error.message });
  }
  return new ApiError('internal_error');
}

export interface BuildOptions {
  /** Hears of every route as it is registered, before any plugin changes it (tests list routes with it). */
  onRoute?: (route: RouteOptions) => void;
}

export async function buildApp(deps: Deps, options: BuildOptions = {}): Promise<App> {
  const { config } = deps;
  const app = Fastify({
    loggerInstance: deps.logger,
    logController: new RequestLog(),
    // No child logger per request (pino's child() costs on every request): the few lines we log name
    // their request_id themselves.
    childLoggerFactory: (logger) => logger,
    genReqId: () => ids.request(),
    requestIdHeader: false,
    trustProxy: config.trustProxy,
    bodyLimit: BODY_LIMIT_BYTES,
    return503OnClosing: true,
    clientErrorHandler: answerClientError,
    routerOptions: { ignoreTrailingSlash: true },
    // Errors the router raises before any hook runs (a broken %-escape, an over-long path parameter):
    // answered in our shape too, never Fastify's.
    frameworkErrors: (error, request, reply) => {
      // Fastify does not report these replies to the log controller: write their request line here.
      const started = performance.now();
      reply.raw.once('finish', () => logRequest(request, reply, performance.now() - started));
      reply.header('x-request-id', request.id);
      const apiError =
        error.code === 'FST_ERR_BAD_URL'
          ? new ApiError('invalid_request', { message: 'The request URL is not valid (a broken %-escape).' })
          : error.code === 'FST_ERR_MAX_PARAM_LENGTH'
            ? new ApiError('invalid_request', { message: 'A path segment of the request URL is too long.' })
            : new ApiError('internal_error');
      return sendError(request, reply, apiError);
    },
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as App;
  if (options.onRoute) app.addHook('onRoute', options.onRoute);

  // JSON only: a text/plain body is 400 invalid_json like any other non-JSON body. An empty body is no
  // body, because clients that always send Content-Type: application/json call DELETE and the body-less
  // POSTs that way; a route that needs a body still answers 400 through its schema.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body.length === 0) return done(null, undefined);
    return parseJson(request, String(body), done);
  });

  app.setValidatorCompiler(validatorCompiler);
  addSharedSchema(ErrorSchema);
  app.addSchema(ErrorSchema);

  // Hooks that run on every request take callbacks, not promises: they are on every request's path.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    if (!request.routeOptions.config.public && isBlocked(deps, request.ip))
      return done(new ApiError('ip_blocked'));
    done();
  });

  // Every JSON object we answer carries request_id (SPEC.md §4), placed first.
  app.addHook('preSerialization', (request, _reply, payload, done) => {
    if (payload && typeof payload === 'object' && !Array.isArray(payload) && !('request_id' in payload)) {
      return done(null, { request_id: request.id, ...payload });
    }
    done(null, payload);
  });

  app.addHook('onSend', idempotencyOnSend(deps));

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const apiError = toApiError(error);
    if (apiError.statusCode >= 500)
      request.log.error({ request_id: request.id, err: error }, 'request failed');
    return sendError(request, reply, apiError);
  });

  app.setNotFoundHandler((request, reply) => sendError(request, reply, new ApiError('route_not_found')));

  await app.register(rateLimit, {
    global: false,
    redis: deps.redis,
    nameSpace: `${config.redisKeyPrefix}ratelimit:`,
    enableDraftSpec: true,
    // Per client: an IPv4 address, or an IPv6 /64 (one allocation), as the failed-auth limits count.
    keyGenerator: (request) => clientNetwork(request.ip),
    // A rate-limit store that does not answer must not take the API down with it.
    skipOnError: true,
    errorResponseBuilder: (_request, context) =>
      new ApiError('rate_limited', { message: `Too many requests; retry in ${context.after}.` }),
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Group Checkout API',
        version: '1.0.0',
        description: 'One cart, paid for together. See docs/api.md for the guide.',
      },
      servers: [{ url: config.publicBaseUrl }],
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });

  // CORS preflight for browser calls with a publishable key (DESIGN.md §4).
  app.options(`${config.apiPrefix}/*`, { schema: { hide: true } }, async (request, reply) => {
    const origin = request.headers.origin;
    if (origin) {
      reply.header('access-control-allow-origin', origin);
      reply.header('access-control-allow-methods', 'GET, POST, OPTIONS');
      reply.header('access-control-allow-headers', CORS_ALLOWED_HEADERS);
      reply.header('access-control-max-age', '600');
      reply.header('vary', 'Origin');
    }
    return reply.code(204).send();
  });

  registerApiRoutes(app, deps);

  // Sent as text so that no request_id is added: it would make the document invalid OpenAPI. The
  // X-Request-Id header still names the request.
  app.get(`${config.apiPrefix}/openapi.json`, { schema: { hide: true } }, async (_request, reply) =>
    reply.type('application/json; charset=utf-8').send(JSON.stringify(app.swagger())),
  );
  return app;
}

function isBlocked(deps: Deps, ip: string): boolean {
  const list = deps.config.ipBlocklist;
  if (!deps.config.ipBlocklistText) return false;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped?.[1]) return list.check(mapped[1], 'ipv4');
  return list.check(ip, ip.includes(':') ? 'ipv6' : 'ipv4');
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Health probes and documents that answer even to blocked addresses. */
    public?: boolean;
  }
}
