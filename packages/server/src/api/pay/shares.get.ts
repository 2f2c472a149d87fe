// GET {pay_url}/api/v1/shares/{shareId} — one member's share: the amount, the consumer fee and what
// their card will be charged, before they pay (docs/api.md#pay-page-api).
import Type from 'typebox';
import type { App } from '../../app-type.ts';
import type { Deps } from '../../deps.ts';
import { loadSharePage } from '../../flows/pay-access.ts';
import { shareToWire } from '../../wire/mappers.ts';
import { ShareSchema } from '../../wire/schemas.ts';
import { rateLimitConfig, withRequestId } from '../schemas.ts';

export function register(app: App, deps: Deps) {
  app.get(
    '/shares/:shareId',
    {
      schema: {
        hide: true,
        // No maxLength: a share id that is too long is an unknown share (404); the router caps it at 100.
        params: Type.Object({ shareId: Type.String() }),
        response: { 200: withRequestId(ShareSchema) },
      },
      config: rateLimitConfig(deps, 'PAY_READ'),
    },
    async (request) => {
      const { session, member, merchantName, attempts, members } = await loadSharePage(
        deps,
        request.params.shareId,
      );
      return shareToWire(session, member, merchantName, attempts, members);
    },
  );
}
