// POST {pay_url}/api/v1/session/cover?access=ORGANIZER_TOKEN — the organizer takes over every pending
// share of the others (docs/api.md#split-modes); answers the organizer's view of the group.
import type { App } from '../../app-type.ts';
import type { Deps } from '../../deps.ts';
import { coverShares } from '../../flows/group.ts';
import { merchantNameOf } from '../../flows/pay-access.ts';
import { payLinks, payPageToWire } from '../../wire/mappers.ts';
import { withAnswer } from '../idempotency.ts';
import { NoBody, rateLimitConfig } from '../schemas.ts';
import { payAccessOf } from './access.ts';
import { AccessQuery } from './pay.schemas.ts';

export function register(app: App, deps: Deps) {
  const links = payLinks(deps.config.publicPayUrl);
  app.post(
    '/session/cover',
    {
      schema: { hide: true, querystring: AccessQuery, body: NoBody },
      config: { access: 'organizer', ...rateLimitConfig(deps, 'PAY_WRITE') },
    },
    async (request) => {
      const { session } = payAccessOf(request);
      const merchantName = await merchantNameOf(deps, session);
      return withAnswer(
        request,
        (result: Awaited<ReturnType<typeof coverShares>>) =>
          payPageToWire(result.session, result.members, 'organizer', merchantName, links),
        (answer) => coverShares(deps, session.id, answer),
      );
    },
  );
}
