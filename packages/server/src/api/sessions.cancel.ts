// POST /sessions/{sessionId}/cancel — cancels an open session (SPEC.md §4.4).
import Type from 'typebox';
import type { App } from '../app.ts';
import type { Deps } from '../deps.ts';
import { closeMerchantSession } from '../flows/sessions.ts';
import { authenticate, merchantOf } from './auth.ts';
import { AUTH_ERRORS, RequestId, rateLimitConfig, responses } from './schemas.ts';
import { SessionParams } from './sessions.get.ts';
import { closedToWire } from './sessions.wire.ts';

export const RefundSchema = Type.Object({
  id: Type.String(),
  member_id: Type.String(),
  amount_cents: Type.Integer(),
  status: Type.String(),
});

export const ClosedSessionSchema = Type.Object({
  request_id: RequestId,
  session_id: Type.String(),
  status: Type.String(),
  refunds: Type.Array(RefundSchema, { description: 'One per paid share, refunded through the processor.' }),
});

export function register(app: App, deps: Deps) {
  app.post(
    `${deps.config.apiPrefix}/sessions/:sessionId/cancel`,
    {
      schema: {
        summary: 'Cancel a session',
        tags: ['sessions'],
        params: SessionParams,
        response: responses(ClosedSessionSchema, [...AUTH_ERRORS, 404, 409]),
      },
      config: rateLimitConfig(deps, 'SESSIONS_CANCEL'),
      onRequest: authenticate(deps, 'secret'),
    },
    async (request) => {
      const closed = await closeMerchantSession(
        deps,
        merchantOf(request).id,
        request.params.sessionId,
        'cancelled',
      );
      return { request_id: request.id, ...closedToWire(closed) };
    },
  );
}
