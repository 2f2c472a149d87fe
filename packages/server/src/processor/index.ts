// Which payment processor a process uses (docs/decisions.md#payments): Stripe when STRIPE_SECRET_KEY is
// set, the built-in sandbox otherwise. The server and the CLI (reconcile) choose through this one function.
// The `stripe` package (some 200 modules) is loaded only when Stripe is the processor: a sandbox process,
// and every CLI command but reconcile, starts without it
// (docs/decisions.md#the-stripe-package-loads-with-stripe).
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Db } from '../store/db.ts';
import { createSandboxProcessor } from './sandbox.ts';
import type { PaymentProcessor } from './types.ts';

export async function processorFor(
  config: Pick<Config, 'stripeSecretKey' | 'stripeWebhookSecret' | 'stripeApiUrl' | 'serviceEnv'>,
  db: Db,
  clock: Clock,
): Promise<PaymentProcessor> {
  if (config.stripeSecretKey) {
    const { createStripeProcessor } = await import('./stripe.ts');
    return createStripeProcessor({
      secretKey: config.stripeSecretKey,
      webhookSecret: config.stripeWebhookSecret,
      ...config.stripeApiUrl,
    });
  }
  // Configuration refuses production without Stripe; this guards any other way in (docs/decisions.md#real-money).
  if (config.serviceEnv === 'production')
    throw new Error('the sandbox processor never runs in production: set STRIPE_SECRET_KEY');
  return createSandboxProcessor(db, clock);
}
