// The pay-page API under {pay_url}/api/v1 (docs/api.md#pay-page-api): what the hosted pages call,
// documented for custom payer UIs. It is authorized by a token in the URL (the organizer's access token
// or the group access token) or by a share id, never by an API key, so any origin may call it: the
// credentials travel in the URL, never in cookies. An encapsulated plugin with its own CORS and
// idempotency scope.
import type { FastifyRequest, preHandlerHookHandler } from 'fastify';
import type { App } from '../../app-type.ts';
import type { Deps } from '../../deps.ts';
import { organizerSession, sessionForToken } from '../../flows/pay-access.ts';
import { sha256 } from '../../ids.ts';
import { idempotentPosts } from '../idempotency.ts';
import { hooksOf } from '../schemas.ts';
import './access.ts';
import * as sandboxAuthenticate from './sandbox.authenticate.ts';
import * as sessionCancel from './session.cancel.ts';
import * as sessionCover from './session.cover.ts';
import * as sessionGet from './session.get.ts';
import * as sessionGroup from './session.group.ts';
import * as sessionJoin from './session.join.ts';
import * as sessionRemind from './session.remind.ts';
import * as sharesGet from './shares.get.ts';
import * as sharesPay from './shares.pay.ts';
import * as sharesRefresh from './shares.refresh.ts';

const OPERATIONS = [
  sessionGet,
  sessionGroup,
  sessionJoin,
  sessionCover,
  sessionRemind,
  sessionCancel,
  sharesGet,
  sharesPay,
  sharesRefresh,
  sandboxAuthenticate,
];

/** Idempotency scope of a pay-page request: the credential that authorized it. */
const payScope = (request: FastifyRequest) => {
  const query = request.query as { access?: string };
  const params = request.params as { shareId?: string };
  return `pay:${sha256(query.access ?? params.shareId ?? '')}`;
};

export async function payApi(app: App, { deps }: { deps: Deps }) {
  // The token is checked before Idempotency-Key is claimed (a preHandler of the plugin runs before the
  // route's own): a request nobody was allowed to make leaves nothing behind.
  app.addHook('onRoute', (route) => {
    const access = route.config?.access;
    if (!access) return;
    const checkToken: preHandlerHookHandler = (request, _reply, done) => {
      const token = (request.query as { access?: string }).access ?? '';
      (access === 'organizer' ? organizerSession : sessionForToken)(deps, token).then(
        (payAccess) => {
          request.payAccess = payAccess;
          done();
        },
        (error: Error) => done(error),
      );
    };
    // First of the route's preHandlers: before the Idempotency-Key is claimed.
    route.preHandler = [checkToken, ...hooksOf(route.preHandler)];
  });
  app.addHook('onRequest', (_request, reply, done) => {
    reply.header('access-control-allow-origin', '*');
    reply.header('access-control-expose-headers', 'X-Request-Id, Retry-After');
    done();
  });
  idempotentPosts(app, deps, payScope);

  app.options('/*', { schema: { hide: true } }, async (_request, reply) =>
    reply
      .code(204)
      .header('access-control-allow-methods', 'GET, POST, PUT, OPTIONS')
      .header('access-control-allow-headers', 'Content-Type, Idempotency-Key')
      .header('access-control-max-age', '600')
      .send(),
  );

  for (const operation of OPERATIONS) operation.register(app, deps);
}
