// buildApp(deps): the whole HTTP surface on one Fastify instance, which never listens by itself
// (main.ts does), so tests drive it through inject() or a port of their choosing.

import type { Socket } from 'node:net';
import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
  type onRequestHookHandler,
  type preParsingHookHandler,
  type RouteOptions,
} from 'fastify';
import { type AuthRequirement, clientNetwork } from './api/auth.ts';
import {
  answerClientError,
  answerOnSocket,
  BASE_HEADERS,
  invalidJsonBody,
  routerError,
  STATUS_OF,
  sendError,
  toServiceError,
} from './api/errors.ts';
import * as health from './api/health.ts';
import { idempotencyOnSend } from './api/idempotency.ts';
import {
  MAX_JSON_DEPTH,
  mayHoldNul,
  nestedDeeperThan,
  nulAt,
  nulInUrl,
  nulRefused,
  tooDeep,
  urlHoldsNul,
} from './api/json.ts';
import { merchantApi } from './api/merchant/index.ts';
import { payApi } from './api/pay/index.ts';
import { ErrorSchema, hooksOf, refuseNullBody, takesNoBody } from './api/schemas.ts';
import { addSharedSchema, validatorCompiler } from './api/validation.ts';
import type { Deps } from './deps.ts';
import { ServiceError } from './errors.ts';
import { ids } from './ids.ts';
import { hostedPages } from './pages/index.ts';

export type App = FastifyInstance<
  import('node:http').Server,
  import('node:http').IncomingMessage,
  import('node:http').ServerResponse,
  import('fastify').FastifyBaseLogger,
  TypeBoxTypeProvider
>;

const BODY_LIMIT_BYTES = 256 * 1024;
/** A connection with nothing going on is closed after this; Fastify keeps idle keep-alives 72 s. */
const CONNECTION_IDLE_MS = 75_000;

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
    // Slow clients (docs/decisions.md#slow-clients): headers must arrive within headersTimeoutMs and the
    // whole request within requestTimeoutMs, checked every second; an idle connection is closed after
    // the keep-alive time. Without these a client sending half a body holds a connection forever.
    requestTimeout: config.requestTimeoutMs,
    connectionTimeout: CONNECTION_IDLE_MS,
    http: {
      headersTimeout: config.headersTimeoutMs,
      connectionsCheckingInterval: Math.min(1_000, config.headersTimeoutMs),
    },
    clientErrorHandler: answerClientError,
    routerOptions: { ignoreTrailingSlash: true },
    // Errors the router raises before any hook runs (a broken %-escape, an over-long path parameter):
    // answered in our shape too, never Fastify's.
    frameworkErrors: (error, request, reply) => {
      // Fastify does not report these replies to the log controller: write their request line here.
      const started = performance.now();
      reply.raw.once('finish', () => logRequest(request, reply, performance.now() - started));
      reply.headers(BASE_HEADERS);
      reply.header('x-request-id', request.id);
      return sendError(request, reply, routerError(error));
    },
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as App;
  if (options.onRoute) app.addHook('onRoute', options.onRoute);
  if (config.maxConnectionsPerIp > 0) capConnectionsPerClient(app, config.maxConnectionsPerIp);

  // JSON only: a text/plain body is 400 invalid_json like any other non-JSON body. An empty body is no
  // body, because clients that always send Content-Type: application/json call DELETE and the body-less
  // POSTs that way; a route that needs a body still answers 400 through its schema. JSON nested deeper
  // than MAX_JSON_DEPTH is refused before it is parsed (docs/api.md#errors): code that walks a body
  // recursively (JSON.stringify, the validator) must never meet one deep enough to overflow the stack.
  // Fastify's parser refuses __proto__ and constructor.prototype keys (prototype poisoning). A NUL in any
  // string is refused, naming the field: PostgreSQL cannot store it (api/json.ts).
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = String(body);
    if (text.length === 0) return done(null, undefined);
    if (nestedDeeperThan(text, MAX_JSON_DEPTH)) return done(tooDeep(), undefined);
    return parseJson(request, text, (error, value) => {
      if (error) return done(invalidJsonBody(text), undefined);
      const nul = mayHoldNul(text) ? nulAt(value) : undefined;
      return nul === undefined ? done(null, value) : done(nulRefused(nul), undefined);
    });
  });

  app.setValidatorCompiler(validatorCompiler);
  addSharedSchema(ErrorSchema);
  app.addSchema(ErrorSchema);

  // Hooks that run on every request take callbacks, not promises: they are on every request's path.
  app.addHook('onRequest', (request, reply, done) => {
    reply.headers(BASE_HEADERS);
    reply.header('x-request-id', request.id);
    done();
  });

  // The IP blocklist and a URL holding NUL (no id, token or parameter of ours does, and PostgreSQL cannot
  // compare text with one). A rate-limited route checks them after its limit, in its first preParsing
  // hook, so that refused requests are counted and carry the RateLimit headers like any other; other
  // routes at once. Chosen per route as it is registered: nothing is looked up per request.
  const refusedBeforeRoute = (request: FastifyRequest, checkBlocklist: boolean): ServiceError | undefined => {
    if (checkBlocklist && isBlocked(deps, request.ip)) return new ServiceError('ip_blocked');
    if (urlHoldsNul(request.url)) return nulInUrl();
    return undefined;
  };
  app.addHook('onRoute', (route) => {
    if (takesNoBody(route.schema)) route.preValidation = [refuseNullBody, ...hooksOf(route.preValidation)];
    const checkBlocklist = !route.config?.public;
    if (route.config?.rateLimit) {
      const guard: preParsingHookHandler = (request, _reply, payload, done) => {
        const refused = refusedBeforeRoute(request, checkBlocklist);
        return refused ? done(refused) : done(null, payload);
      };
      route.preParsing = [guard, ...hooksOf(route.preParsing)];
    } else {
      const guard: onRequestHookHandler = (request, _reply, done) => {
        const refused = refusedBeforeRoute(request, checkBlocklist);
        return refused ? done(refused) : done();
      };
      route.onRequest = [guard, ...hooksOf(route.onRequest)];
    }
  });

  // Every JSON object we answer carries request_id (docs/api.md#conventions), placed first: the one place
  // it is added to answers, so handlers never set it.
  app.addHook('preSerialization', (request, _reply, payload, done) => {
    if (payload && typeof payload === 'object' && !Array.isArray(payload) && !('request_id' in payload)) {
      return done(null, { request_id: request.id, ...payload });
    }
    done(null, payload);
  });

  app.addHook('onSend', idempotencyOnSend(deps));

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const serviceError = toServiceError(error, request.headers['content-type']);
    if (STATUS_OF[serviceError.code] >= 500)
      request.log.error({ request_id: request.id, err: error }, 'request failed');
    return sendError(request, reply, serviceError);
  });

  app.setNotFoundHandler((request, reply) =>
    sendError(request, reply, refusedBeforeRoute(request, true) ?? new ServiceError('route_not_found')),
  );

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
      new ServiceError('rate_limited', { message: `Too many requests; retry in ${context.after}.` }),
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
    // @fastify/swagger marks every request body required; a POST that takes none (NoBody) is documented
    // as what it is: an optional body that may only be {}.
    transformObject: (document) => {
      if (!('openapiObject' in document)) return document.swaggerObject;
      const { openapiObject } = document;
      for (const item of Object.values(openapiObject.paths ?? {})) {
        for (const operation of Object.values(item ?? {}) as { requestBody?: OpenApiRequestBody }[]) {
          const schema = operation.requestBody?.content?.['application/json']?.schema;
          if (!schema?.['x-no-body']) continue;
          const description = String(schema.description);
          operation.requestBody = {
            required: false,
            description,
            content: { 'application/json': { schema: { type: 'object', additionalProperties: false } } },
          };
        }
      }
      return openapiObject;
    },
  });

  // Each HTTP surface is an encapsulated plugin with its own hooks (docs/architecture.md).
  health.register(app, deps);
  await app.register(merchantApi, { prefix: config.apiPrefix, deps });
  await app.register(payApi, { prefix: `${config.payPrefix}/api/v1`, deps });
  await app.register(hostedPages, { prefix: config.payPrefix, deps });
  return app;
}

/**
 * At most `max` open connections per client address (the socket's: behind a proxy, the proxy's; set
 * MAX_CONNECTIONS_PER_IP=0 there). One more is answered 429 on the socket and closed, so that one client
 * cannot use up the server's connections while others wait.
 */
function capConnectionsPerClient(app: App, max: number) {
  const open = new Map<string, number>();
  app.server.on('connection', (socket: Socket) => {
    // Counted per client network, as the rate limits count (an IPv6 /64 is one client).
    const client = clientNetwork(socket.remoteAddress ?? '');
    const count = (open.get(client) ?? 0) + 1;
    if (count > max) {
      answerOnSocket(
        socket,
        new ServiceError('rate_limited', {
          message: `Too many open connections from your address (at most ${max}); close some and retry.`,
          retryAfterSeconds: 1,
        }),
      );
      return;
    }
    open.set(client, count);
    socket.once('close', () => {
      const left = (open.get(client) ?? 1) - 1;
      if (left <= 0) open.delete(client);
      else open.set(client, left);
    });
  });
}

interface OpenApiRequestBody {
  required?: boolean;
  description?: string;
  content?: Record<string, { schema?: Record<string, unknown> }>;
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
    /** The API key a merchant API route needs (api/auth.ts). */
    auth?: AuthRequirement;
  }
}
