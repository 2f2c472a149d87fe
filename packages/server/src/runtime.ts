// Opens what a process needs from its configuration: database (migrated), Redis, mailer, logger.
// Used by main.ts, the CLI and the tests, so all three run the same wiring.
import pino, { type Logger } from 'pino';
import { type Clock, systemClock } from './clock.ts';
import type { Config } from './config.ts';
import type { Deps } from './deps.ts';
import { checkStoredSecrets, secretBoxFor } from './flows/secrets.ts';
import { MemoryCounterStore, RedisCounterStore } from './limits/counter.ts';
import { createMailer } from './mail/mailer.ts';
import { processorFor } from './processor/index.ts';
import type { PaymentProcessor } from './processor/types.ts';
import { openDb } from './store/db.ts';
import { migrateToLatest } from './store/migrations/index.ts';

/** Log fields that could carry a credential or a card number; pino replaces them wherever they appear. */
const REDACTED_PATHS = [
  'req.headers.authorization',
  'headers.authorization',
  'authorization',
  'secret_key',
  'signing_secret',
  'session_webhook_secret',
  'secret',
  'card',
  'card.number',
  'body.card',
  '*.secret_key',
  '*.signing_secret',
  '*.secret',
  '*.card',
];

/** The service's logger, with credentials redacted; tests and benchmarks give it their own destination. */
export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  const options = { level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } };
  return destination ? pino(options, destination) : pino(options);
}

export interface RuntimeOptions {
  clock?: Clock;
  logger?: Logger;
  migrate?: boolean;
  /** The payment processor; the sandbox's unless given (tests wrap it to make it fail). */
  processor?: PaymentProcessor;
}

export async function openRuntime(
  config: Config,
  options: RuntimeOptions = {},
): Promise<Deps & { close(): Promise<void> }> {
  const logger = options.logger ?? createLogger(config.logLevel);
  const db = openDb(config.databaseUrl, {
    onIdleError: (error) => logger.warn({ err: error.message }, 'database connection lost; reconnecting'),
    secrets: secretBoxFor(config),
  });
  try {
    if (options.migrate !== false) {
      const applied = await migrateToLatest(db);
      if (applied.length > 0) logger.info({ migrations: applied }, 'database migrated');
    }
    const survey = await checkStoredSecrets(db);
    if (survey.plaintext > 0) {
      logger.warn(
        { secrets: survey.plaintext },
        'stored secrets not encrypted yet; run group-checkout secrets rotate',
      );
    }
    if (survey.underPrevious > 0) {
      logger.info(
        { secrets: survey.underPrevious },
        'stored secrets still sealed with SECRETS_KEY_PREVIOUS; run group-checkout secrets rotate',
      );
    }
  } catch (error) {
    await db.close();
    throw error;
  }
  // Redis only shares counters: while it is away, limits fail open and the API keeps answering. ioredis is
  // loaded only when REDIS_URL is set (docs/decisions.md#the-stripe-package-loads-with-stripe).
  const redis = config.redisUrl
    ? new (await import('ioredis')).Redis(config.redisUrl, {
        maxRetriesPerRequest: 1,
        enableOfflineQueue: false,
        lazyConnect: true,
      })
    : undefined;
  redis?.on('error', (error) => logger.warn({ err: error.message }, 'redis error'));
  await redis
    ?.connect()
    .catch((error: Error) => logger.warn({ err: error.message }, 'redis not reachable at start'));
  const clock = options.clock ?? systemClock;
  const mailer = createMailer({
    smtpUrl: config.smtpUrl,
    from: config.mailFrom,
    outboxDir: config.outboxDir,
    logger,
  });
  return {
    config,
    db,
    clock,
    logger,
    counters: redis
      ? new RedisCounterStore(
          redis,
          (error) => logger.warn({ err: error.message }, 'redis counter failed'),
          `${config.redisKeyPrefix}counter:`,
        )
      : new MemoryCounterStore(() => clock.now()),
    redis,
    mailer,
    processor: options.processor ?? (await processorFor(config, db, clock)),
    faults: {
      reach(point) {
        if (point !== config.crashAt) return;
        logger.warn({ point }, 'SANDBOX_CRASH_AT reached: killing the process');
        logger.flush?.();
        process.kill(process.pid, 'SIGKILL');
      },
    },
    async close() {
      mailer.close();
      redis?.disconnect();
      await db.close();
    },
  };
}
