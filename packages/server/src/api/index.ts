// Registers every merchant API route. Each operation lives in its own file (STYLE.md habit 2).
import type { FastifyRequest, preHandlerHookHandler } from 'fastify';
import type { App } from '../app.ts';
import type { Deps } from '../deps.ts';
import { registerPayApi } from '../pages/api.ts';
import * as health from './health.ts';
import { idempotency } from './idempotency.ts';
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

const ROUTES = [
  health,
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
  `merchant:${request.auth?.merchant.id ?? 'anonymous'}:${request.auth?.keyKind ?? 'none'}`;

export function registerApiRoutes(app: App, deps: Deps) {
  const idempotent = idempotency(deps, merchantScope) as preHandlerHookHandler;
  app.addHook('onRoute', (route) => {
    if (route.method !== 'POST' || !route.url.startsWith(`${deps.config.apiPrefix}/`)) return;
    const existing = route.preHandler ? [route.preHandler].flat() : [];
    route.preHandler = [...existing, idempotent];
  });
  for (const route of ROUTES) route.register(app, deps);
  registerPayApi(app, deps);
}
