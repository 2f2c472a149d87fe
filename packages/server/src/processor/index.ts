// Which payment processor a process uses (docs/decisions.md#payments): Stripe when STRIPE_SECRET_KEY is
// set, the built-in sandbox otherwise. The server and the CLI (reconcile) choose through this one function.
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Db } from '../store/db.ts';
import { createSandboxProcessor } from './sandbox.ts';
import { createStripeProcessor } from './stripe.ts';
import type { PaymentProcessor } from './types.ts';

export function processorFor(
  config: Pick<Config, 'stripeSecretKey'>,
  db: Db,
  clock: Clock,
): PaymentProcessor {
  return config.stripeSecretKey
    ? createStripeProcessor({ secretKey: config.stripeSecretKey })
    : createSandboxProcessor(db, clock);
}
