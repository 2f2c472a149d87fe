// POST {pay_url}/api/v1/session/cancel?access=ORGANIZER_TOKEN — the organizer cancels the group
// (docs/api.md#pay-page-api); the answer is the merchant API's cancel answer.
import type { App } from '../../app-type.ts';
import type { Deps } from '../../deps.ts';
import { closeSessionOrFail } from '../../flows/sessions.ts';
import { closedToWire } from '../../wire/mappers.ts';
import { withAnswer } from '../idempotency.ts';
import { NoBody, rateLimitConfig } from '../schemas.ts';
import { payAccessOf } from './access.ts';
import { AccessQuery } from './pay.schemas.ts';

export function register(app: App, deps: Deps) {
  app.post(
    '/session/cancel',
    {
      schema: { hide: true, querystring: AccessQuery, body: NoBody },
      config: { access: 'organizer', ...rateLimitConfig(deps, 'PAY_WRITE') },
    },
    async (request) => {
      const { session } = payAccessOf(request);
      return withAnswer(request, closedToWire, (answer) =>
        closeSessionOrFail(deps, session.id, 'cancelled', answer),
      );
    },
  );
}
