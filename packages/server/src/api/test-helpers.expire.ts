// POST /test_helpers/sessions/{sessionId}/expire — sandbox only: runs expiry now (DESIGN.md §13).
// Not registered in production, where the path answers 404 like any unknown route.
import type { App } from '../app.ts';
import type { Deps } from '../deps.ts';
import { closeMerchantSession } from '../flows/sessions.ts';
import { authenticate, merchantOf } from './auth.ts';
import { AUTH_ERRORS, rateLimitConfig, responses } from './schemas.ts';
import { ClosedSessionSchema } from './sessions.cancel.ts';
import { SessionParams } from './sessions.get.ts';
import { closedToWire } from './sessions.wire.ts';

export function register(app: App, deps: Deps) {
  if (deps.config.serviceEnv !== 'sandbox') return;
  app.post(
    `${deps.config.apiPrefix}/test_helpers/sessions/:sessionId/expire`,
    {
      schema: {
        summary: 'Expire a session now (sandbox only)',
        tags: ['test helpers'],
        params: SessionParams,
        response: responses(ClosedSessionSchema, [...AUTH_ERRORS, 404, 409]),
      },
      config: rateLimitConfig(deps, 'TEST_HELPERS'),
      onRequest: authenticate(deps, 'secret'),
    },
    async (request) => {
      const closed = await closeMerchantSession(
        deps,
        merchantOf(request).id,
        request.params.sessionId,
        'expired',
      );
      return { request_id: request.id, ...closedToWire(closed) };
    },
  );
}
