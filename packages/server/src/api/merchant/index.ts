// The merchant API under {base_url} (docs/api.md): API-key authentication per route, CORS only for the
// publishable key, Idempotency-Key on every POST, and the OpenAPI document of it all. An encapsulated
// plugin: its hooks reach its own routes and no others.
import type { FastifyRequest } from 'fastify';
import type { App } from '../../app.ts';
import type { Deps } from '../../deps.ts';
import { CORS_ALLOWED_HEADERS } from '../auth.ts';
import { idempotentPosts } from '../idempotency.ts';
import * as merchantsMe from './merchants.me.ts';
import * as sessionsCancel from './sessions.cancel.ts';
import * as sessionsCreate from './sessions.create.ts';
import * as sessionsGet from './sessions.get.ts';
import * as sessionsList from './sessions.list.ts';
import * as sessionsRemind from './sessions.remind.ts';
import * as testHelpersExpire from './test-helpers.expire.ts';
import * as webhooksCreate from './webhooks.create.ts';
import * as webhooksDelete from './webhooks.delete.ts';
import * as webhooksList from './webhooks.list.ts';

const OPERATIONS = [
  merchantsMe,
  webhooksList,
  webhooksCreate,
  webhooksDelete,
  sessionsCreate,
  sessionsList,
  sessionsGet,
  sessionsCancel,
  sessionsRemind,
  testHelpersExpire,
];

// Per merchant and kind of key: the publishable key is public, so it must never be replayed an answer the
// secret key was given (a headless create answers the organizer's access token, with no signature needed).
const merchantScope = (request: FastifyRequest) =>
  `merchant:${request.caller?.merchant.id ?? 'anonymous'}:${request.caller?.keyKind ?? 'none'}`;

export async function merchantApi(app: App, { deps }: { deps: Deps }) {
  idempotentPosts(app, deps, merchantScope);

  // CORS preflight for browser calls with a publishable key (docs/api.md#cors).
  app.options('/*', { schema: { hide: true } }, async (request, reply) => {
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

  for (const operation of OPERATIONS) operation.register(app, deps);

  // Sent as text so that no request_id is added: it would make the document invalid OpenAPI. The
  // X-Request-Id header still names the request.
  app.get('/openapi.json', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('application/json; charset=utf-8').send(JSON.stringify(app.swagger())),
  );
}
