// Everything a request or a job needs from the outside world, passed in one object (docs/architecture.md).
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Clock } from './clock.ts';
import type { Config, CRASH_POINTS } from './config.ts';
import type { CounterStore } from './limits/counter.ts';
import type { Mailer } from './mail/mailer.ts';
import type { PaymentProcessor } from './processor/types.ts';
import type { Db } from './store/db.ts';

export interface Deps {
  config: Config;
  db: Db;
  clock: Clock;
  logger: Logger;
  /** Failed-authentication counters. */
  counters: CounterStore;
  /** Shared rate-limit store; undefined means in-process memory. */
  redis: Redis | undefined;
  mailer: Mailer;
  /** The sandbox processor, or Stripe when STRIPE_SECRET_KEY is set (docs/decisions.md#payments). */
  processor: PaymentProcessor;
  /** Named points in flows where a crash test may stop the process (config.crashAt); no-ops otherwise. */
  faults: Faults;
}

interface Faults {
  reach(point: (typeof CRASH_POINTS)[number]): void;
}
