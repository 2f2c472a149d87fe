// POST {pay_url}/api/v1/shares/{shareId}/refresh — the payer's page is back from their bank's authentication
// (3-D Secure): the open payment is read again from the processor, recorded, and the share answered as it
// now stands (docs/api.md#3-d-secure).
import Type from 'typebox';
import type { App } from '../../app-type.ts';
import type { Deps } from '../../deps.ts';
import { loadShare, loadSharePage } from '../../flows/pay-access.ts';
import { refreshShare } from '../../flows/payments.ts';
import { shareToWire } from '../../wire/mappers.ts';
import { ShareSchema } from '../../wire/schemas.ts';
import { NoBody, rateLimitConfig, withRequestId } from '../schemas.ts';

export function register(app: App, deps: Deps) {
  app.post(
    '/shares/:shareId/refresh',
    {
      schema: {
        hide: true,
        params: Type.Object({ shareId: Type.String() }),
        body: NoBody,
        response: { 200: withRequestId(ShareSchema) },
      },
      config: rateLimitConfig(deps, 'PAY_WRITE'),
    },
    async (request) => {
      const { member } = await loadShare(deps, request.params.shareId);
      await refreshShare(deps, member);
      const now = await loadSharePage(deps, request.params.shareId);
      return shareToWire(now.session, now.member, now.merchantName, now.attempts, now.members);
    },
  );
}
