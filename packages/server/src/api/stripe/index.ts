// POST {base_url}/stripe/webhook — Stripe's own webhooks (docs/operations.md#stripe-set-up): verified with
// STRIPE_WEBHOOK_SECRET by the official package on the raw body, each event acted on once however often it
// arrives, answered 200 at once (also for types we do not act on). An encapsulated plugin: its body stays
// bytes (the signature covers them as sent), and no API key, CORS or Idempotency-Key applies.
import type { App } from '../../app-type.ts';
import type { Deps } from '../../deps.ts';
import { takeWebhook } from '../../flows/processor-events.ts';
import { rateLimitConfig } from '../schemas.ts';

/** Stripe's events are small; this is Stripe's own limit for a webhook's body. */
const BODY_LIMIT_BYTES = 256 * 1024;

export async function stripeWebhooks(app: App, { deps }: { deps: Deps }) {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'buffer', bodyLimit: BODY_LIMIT_BYTES },
    (_r, body, done) => done(null, body),
  );
  app.post(
    '/webhook',
    { schema: { hide: true }, config: rateLimitConfig(deps, 'STRIPE_WEBHOOKS') },
    async (request) => {
      const signature = request.headers['stripe-signature'];
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const taken = await takeWebhook(deps, body, typeof signature === 'string' ? signature : undefined);
      return { received: true, ...(taken === 'duplicate' && { duplicate: true }) };
    },
  );
}
