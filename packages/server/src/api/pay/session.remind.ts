// POST {pay_url}/api/v1/session/remind?access=ORGANIZER_TOKEN — the organizer's "Send reminders": mails
// every pending member with an email, at most once an hour each, as the merchant API's remind does
// (docs/api.md#reminders).
import type { App } from '../../app-type.ts';
import type { Deps } from '../../deps.ts';
import { remindPendingMembers } from '../../flows/reminders.ts';
import { NoBody, rateLimitConfig } from '../schemas.ts';
import { payAccessOf } from './access.ts';
import { AccessQuery } from './pay.schemas.ts';

export function register(app: App, deps: Deps) {
  app.post(
    '/session/remind',
    {
      schema: { hide: true, querystring: AccessQuery, body: NoBody },
      config: { access: 'organizer', ...rateLimitConfig(deps, 'PAY_WRITE') },
    },
    async (request) => {
      const { session } = payAccessOf(request);
      const { session: reminded, ...counts } = await remindPendingMembers(
        deps,
        session.merchantId,
        session.id,
      );
      return { session_id: reminded.id, ...counts };
    },
  );
}
