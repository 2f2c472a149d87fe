// GET {pay_url}/api/v1/session?access=TOKEN — the session as the hosted pages show it, to the organizer
// or to a member of the group (docs/api.md#pay-page-api).
import type { App } from '../../app-type.ts';
import type { Deps } from '../../deps.ts';
import { loadPayPage } from '../../flows/pay-access.ts';
import { payLinks, payPageToWire } from '../../wire/mappers.ts';
import { rateLimitConfig } from '../schemas.ts';
import { payAccessOf } from './access.ts';
import { AccessQuery } from './pay.schemas.ts';

export function register(app: App, deps: Deps) {
  const links = payLinks(deps.config.publicPayUrl);
  app.get(
    '/session',
    {
      schema: { hide: true, querystring: AccessQuery },
      config: { access: 'any', ...rateLimitConfig(deps, 'PAY_READ') },
    },
    async (request) => {
      const page = await loadPayPage(deps, payAccessOf(request));
      return payPageToWire(page.session, page.members, page.role, page.merchantName, links);
    },
  );
}
