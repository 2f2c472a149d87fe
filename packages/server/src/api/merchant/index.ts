// The merchant API under {base_url} (docs/api.md): API-key authentication per route, CORS only for the
// publishable key, Idempotency-Key on every POST, and the OpenAPI document of it all. An encapsulated
// plugin: its hooks reach its own routes and no others.
import type {
  FastifyRequest,
  onRequestHookHandler,
  onResponseHookHandler,
  preParsingHookHandler,
} from 'fastify';
import type { App } from '../../app-type.ts';
import type { Deps } from '../../deps.ts';
import { ApiRequestLog } from '../../flows/request-log.ts';
import { KEY_PREFIX_LENGTH } from '../../ids.ts';
import {
  type AuthRequirement,
  allowBrowser,
  authenticate,
  CORS_ALLOWED_HEADERS,
  corsOrigin,
} from '../auth.ts';
import { idempotentPosts } from '../idempotency.ts';
import { hooksOf } from '../schemas.ts';
import * as eventsGet from './events.get.ts';
import * as eventsList from './events.list.ts';
import * as eventsRedeliver from './events.redeliver.ts';
import * as merchantsMe from './merchants.me.ts';
import * as sessionsCancel from './sessions.cancel.ts';
import * as sessionsCreate from './sessions.create.ts';
import * as sessionsGet from './sessions.get.ts';
import * as sessionsList from './sessions.list.ts';
import * as sessionsRemind from './sessions.remind.ts';
import * as testHelpersDisputesClose from './test-helpers.disputes-close.ts';
import * as testHelpersExpire from './test-helpers.expire.ts';
import * as webhooksCreate from './webhooks.create.ts';
import * as webhooksDelete from './webhooks.delete.ts';
import * as webhooksList from './webhooks.list.ts';
import * as webhooksRotateSecret from './webhooks.rotate-secret.ts';

const OPERATIONS = [
  merchantsMe,
  webhooksList,
  webhooksCreate,
  webhooksDelete,
  webhooksRotateSecret,
  eventsList,
  eventsGet,
  eventsRedeliver,
  sessionsCreate,
  sessionsList,
  sessionsGet,
  sessionsCancel,
  sessionsRemind,
  testHelpersExpire,
  testHelpersDisputesClose,
];

// Per merchant and kind of key: the publishable key is public, so it must never be replayed an answer the
// secret key was given (a headless create answers the organizer's access token, with no signature needed).
/**
 * Whose an Idempotency-Key is: the merchant and the kind of key; for a publishable key also the page's
 * Origin as sent, so that a replay is answered only to the page that made the request, and the same key
 * from another origin runs, and meets the origin check, as a new request (docs/api.md#idempotency).
 */
const merchantScope = (request: FastifyRequest) => {
  const scope = `merchant:${request.caller?.merchant.id ?? 'anonymous'}:${request.caller?.keyKind ?? 'none'}`;
  return request.caller?.keyKind === 'publishable' ? `${scope}:${request.headers.origin ?? ''}` : scope;
};

/** An authentication hook as a preParsing hook: it runs before the body is read. */
const asPreParsing =
  (hook: (request: FastifyRequest) => Promise<void>): preParsingHookHandler =>
  (request, _reply, payload, done) => {
    hook(request).then(
      () => done(null, payload),
      (error: Error) => done(error),
    );
  };

export async function merchantApi(app: App, { deps }: { deps: Deps }) {
  // Order of a request (docs/architecture.md): CORS for a publishable key, then the route's rate limit
  // (its own onRequest hook, so refused requests count and carry RateLimit headers too), then the IP
  // blocklist and the API key (preParsing: before the body is read), then Idempotency-Key.
  const authHooks: Record<AuthRequirement, preParsingHookHandler> = {
    secret: asPreParsing(authenticate(deps, 'secret')),
    'publishable-or-secret': asPreParsing(authenticate(deps, 'publishable-or-secret')),
  };
  const cors: onRequestHookHandler = (request, reply, done) => {
    if (/^Bearer\s+svc_pk_/i.test(request.headers.authorization ?? ''))
      allowBrowser(request, reply, deps.config.serviceEnv);
    done();
  };
  // The API request log (docs/dashboard.md#api-request-log): every answered request that carried a
  // working key, by its route pattern, status, duration and key prefix; never a body, a header or a URL
  // (pay-page URLs and ids are not in it either). Handed to a writer that batches the rows after the
  // answer has gone, so no request waits for its log row. The hook is set on each route that takes a key
  // as it is registered (below), knowing its method and pattern: nothing is looked up per request.
  const requestLog = new ApiRequestLog(deps);
  const logTo =
    (method: string, route: string): onResponseHookHandler =>
    (request, reply, done) => {
      const caller = request.caller;
      if (caller) {
        requestLog.add({
          id: request.id,
          merchantId: caller.merchant.id,
          method,
          route,
          status: reply.statusCode,
          // A 32-bit integer column: capped at about 36 minutes, longer than any request may take.
          durationUs: Math.min(Math.round(reply.elapsedTime * 1000), 2_147_483_647),
          keyPrefix: caller.presentedKey.slice(0, KEY_PREFIX_LENGTH),
          createdAt: deps.clock.now(),
        });
      }
      done();
    };
  app.addHook('onClose', () => requestLog.flushed());

  // The routes a browser may call (with a publishable key): the preflight allows only these.
  const browserRoutes: { method: string; path: RegExp }[] = [];
  // Per route as it is registered (the rate limit's hook is already on the route by then).
  app.addHook('onRoute', (route) => {
    const auth = route.config?.auth;
    if (!auth) return;
    if (auth === 'publishable-or-secret')
      for (const method of [route.method].flat())
        browserRoutes.push({ method, path: pathPattern(route.url) });
    route.preParsing = [...hooksOf(route.preParsing), authHooks[auth]];
    route.onResponse = [...hooksOf(route.onResponse), logTo([route.method].flat().join(','), route.url)];
    if (auth === 'publishable-or-secret') route.onRequest = [cors, ...hooksOf(route.onRequest)];
  });
  idempotentPosts(app, deps, merchantScope);

  // CORS preflight for browser calls with a publishable key (docs/api.md#cors): only for a route that
  // takes one. A route that needs the secret key gets no allowance, so no page can call it.
  app.options('/*', { schema: { hide: true } }, async (request, reply) => {
    const origin = corsOrigin(request, deps.config.serviceEnv);
    const method = request.headers['access-control-request-method'];
    const path = request.url.split('?')[0] ?? '';
    const browserRoute = browserRoutes.some((r) => r.method === method && r.path.test(path));
    if (origin && browserRoute) {
      reply.header('access-control-allow-origin', origin);
      reply.header('access-control-allow-methods', 'GET, POST, OPTIONS');
      reply.header('access-control-allow-headers', CORS_ALLOWED_HEADERS);
      reply.header('access-control-max-age', '600');
      reply.header('vary', 'Origin');
    }
    return reply.code(204).send();
  });

  for (const operation of OPERATIONS) operation.register(app, deps);

  // Sent as text so that no request_id is added: it would make the document invalid OpenAPI. The
  // X-Request-Id header still names the request.
  app.get('/openapi.json', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('application/json; charset=utf-8').send(JSON.stringify(app.swagger())),
  );
}

/** A route's URL (`/v1/sessions/:sessionId`) as a pattern of request paths; a trailing slash is ignored. */
function pathPattern(url: string): RegExp {
  const escaped = url.replace(/\/+$/, '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^${escaped.replace(/:\w+/g, '[^/]+')}/?$`);
}
