// POST /sessions/{sessionId}/cancel — cancels an open session (docs/api.md#cancel-a-session).
import type { App } from '../../app-type.ts';
import type { Deps } from '../../deps.ts';
import { closeMerchantSession } from '../../flows/sessions.ts';
import { closedToWire } from '../../wire/mappers.ts';
import { ClosedSessionSchema } from '../../wire/schemas.ts';
import { callerOf } from '../auth.ts';
import { withAnswer } from '../idempotency.ts';
import { AUTH_ERRORS, NoBody, rateLimitConfig, responses, SessionParams } from '../schemas.ts';

export function register(app: App, deps: Deps) {
  app.post(
    '/sessions/:sessionId/cancel',
    {
      schema: {
        summary: 'Cancel a session',
        tags: ['sessions'],
        params: SessionParams,
        body: NoBody,
        response: responses(ClosedSessionSchema, [...AUTH_ERRORS, 404, 409]),
      },
      config: { auth: 'secret', ...rateLimitConfig(deps, 'SESSIONS_CANCEL') },
    },
    async (request) => {
      const { merchant } = callerOf(request);
      return withAnswer(request, closedToWire, (answer) =>
        closeMerchantSession(deps, merchant.id, request.params.sessionId, 'cancelled', answer),
      );
    },
  );
}
