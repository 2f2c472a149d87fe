// Stripe's webhooks as Stripe sends them, for the tests: an Event object around one of Stripe's objects,
// signed with the endpoint's secret by the official package (Stripe-Signature: t=…,v1=…), posted to us.
import { randomBytes } from 'node:crypto';
import Stripe from 'stripe';

/** The signing secret the tests configure as STRIPE_WEBHOOK_SECRET. */
export const FAKE_WEBHOOK_SECRET = 'whsec_fake0group0checkout0webhooks0secret';

const signer = new Stripe('sk_test_only0for0signing');

/** A Stripe Event of `type` carrying `object` (a PaymentIntent, a Refund, a Dispute…). */
export function stripeEvent(type: string, object: Record<string, unknown>, id?: string) {
  return {
    id: id ?? `evt_${randomBytes(12).toString('hex')}`,
    object: 'event',
    api_version: '2026-10-28.endive',
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
    data: { object },
  };
}

/** The Stripe-Signature header of `payload`, signed at `timestamp` (seconds; now unless given). */
export function stripeSignature(
  payload: string,
  options: { secret?: string; timestamp?: number } = {},
): string {
  return signer.webhooks.generateTestHeaderString({
    payload,
    secret: options.secret ?? FAKE_WEBHOOK_SECRET,
    ...(options.timestamp !== undefined && { timestamp: options.timestamp }),
  });
}

/** Posts `event` to our endpoint as Stripe would; answers the status and the parsed body. */
export async function sendStripeWebhook(
  url: string,
  event: object,
  options: { secret?: string; timestamp?: number; signature?: string | null } = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const payload = JSON.stringify(event, null, 2);
  const signature = options.signature === undefined ? stripeSignature(payload, options) : options.signature;
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
      ...(signature !== null && { 'stripe-signature': signature }),
    },
    body: payload,
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}
