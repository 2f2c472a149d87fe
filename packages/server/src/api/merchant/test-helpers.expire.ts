// POST /test_helpers/sessions/{sessionId}/expire — sandbox only: runs expiry now (docs/api.md#sandbox-test-helpers).
// Not registered in production, where the path answers 404 like any unknown route.
import type { App } from '../../app-type.ts';
import type { Deps } from '../../deps.ts';
import { closeMerchantSession } from '../../flows/sessions.ts';
import { closedToWire } from '../../wire/mappers.ts';
import { ClosedSessionSchema } from '../../wire/schemas.ts';
import { callerOf } from '../auth.ts';
import { withAnswer } from '../idempotency.ts';
import { AUTH_ERRORS, NoBody, rateLimitConfig, responses, SessionParams } from '../schemas.ts';

export function register(app: App, deps: Deps) {
  if (deps.config.serviceEnv !== 'sandbox') return;
  app.post(
    '/test_helpers/sessions/:sessionId/expire',
    {
      schema: {
        summary: 'Expire a session now (sandbox only)',
        tags: ['test helpers'],
        params: SessionParams,
        body: NoBody,
        response: responses(ClosedSessionSchema, [...AUTH_ERRORS, 404, 409]),
      },
      config: { auth: 'secret', ...rateLimitConfig(deps, 'TEST_HELPERS') },
    },
    async (request) => {
      const { merchant } = callerOf(request);
      return withAnswer(request, closedToWire, (answer) =>
        closeMerchantSession(deps, merchant.id, request.params.sessionId, 'expired', answer),
      );
    },
  );
}
