// POST /test_helpers/disputes/{disputeId}/close — sandbox only: closes a dispute as won or lost, as the card
// network would decide it (docs/api.md#disputes). Not registered in production (404 like any unknown route).
import Type from 'typebox';
import type { App } from '../../app-type.ts';
import type { Deps } from '../../deps.ts';
import { closeSandboxDispute } from '../../flows/sandbox-helpers.ts';
import type { Dispute } from '../../store/disputes.ts';
import { DisputeSchema } from '../../wire/schemas.ts';
import { callerOf } from '../auth.ts';
import { AUTH_ERRORS, rateLimitConfig, responses } from '../schemas.ts';

const disputeToWire = (d: Dispute) => ({
  id: d.id,
  member_id: d.memberId,
  amount_cents: d.amountCents,
  reason: d.reason,
  status: d.status,
});

export function register(app: App, deps: Deps) {
  if (deps.config.serviceEnv !== 'sandbox') return;
  app.post(
    '/test_helpers/disputes/:disputeId/close',
    {
      schema: {
        summary: 'Close a dispute as won or lost (sandbox only)',
        tags: ['test helpers'],
        params: Type.Object({ disputeId: Type.String({ maxLength: 100 }) }),
        body: Type.Object(
          { status: Type.Union([Type.Literal('won'), Type.Literal('lost')]) },
          { additionalProperties: false },
        ),
        response: responses(DisputeSchema, [...AUTH_ERRORS, 404, 409]),
      },
      config: { auth: 'secret', ...rateLimitConfig(deps, 'TEST_HELPERS') },
    },
    async (request) => {
      const { merchant } = callerOf(request);
      return disputeToWire(
        await closeSandboxDispute(deps, merchant.id, request.params.disputeId, request.body.status),
      );
    },
  );
}
