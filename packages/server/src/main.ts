// The service process: read config, open storage, build the app, listen, start the workers.
import { buildApp } from './app.ts';
import { type Config, ConfigError, loadConfig } from './config.ts';
import { demoShopFileOf, ensureDemoMerchant } from './demo.ts';
import { startWorkers } from './jobs/index.ts';
import { openRuntime } from './runtime.ts';

export async function serve(config: Config): Promise<void> {
  const deps = await openRuntime(config);
  warnAboutConfig(deps);
  const app = await buildApp(deps);
  // Routes compile their schemas when the app gets ready, a second or two of solid work on a busy
  // machine: done before the workers start, so that no webhook's send timeout runs out meanwhile.
  await app.ready();
  const workers = await startWorkers(deps);
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    deps.logger.info({ signal }, 'shutting down');
    await workers.stop();
    await app.close();
    await deps.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  // Started by scripts/start.mjs (an IPC channel): stop when it is gone, rather than live on orphaned.
  process.once('disconnect', () => void shutdown('disconnect'));
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    // The address is taken, or not this machine's: one line naming the setting, as a bad value gets.
    const why = listenProblem(error, config);
    if (!why) throw error;
    closing = true;
    await workers.stop();
    await app.close();
    await deps.close();
    throw new ConfigError(why);
  }
  // Once the address is ours: a sign-in link and a demo shop's settings name this server's URL.
  await ensureDemoMerchant(deps);
  deps.logger.info(
    { api: config.publicBaseUrl, pay: config.publicPayUrl, env: config.serviceEnv, db: deps.db.dialect },
    'group checkout listening',
  );
  // scripts/start.mjs (npm start) waits for this before it starts the demo shop beside us, on the
  // settings made for this database.
  process.send?.({ type: 'listening', demoShopFile: demoShopFileOf(config.databaseUrl) });
}

/** Why the server could not listen on HOST:PORT, in the words of the setting to change; undefined if not that. */
function listenProblem(error: unknown, config: Config): string | undefined {
  const { port, host } = config;
  switch ((error as { code?: string } | null)?.code) {
    case 'EADDRINUSE':
      return `PORT ${port} is already in use on ${host}: stop what listens there, or set PORT to another port`;
    case 'EACCES':
      return `PORT ${port} on ${host} needs privileges this process does not have: set PORT to 1024 or above`;
    case 'EADDRNOTAVAIL':
      return `HOST ${host} is not an address of this machine: set HOST to one of its addresses, 0.0.0.0 or ::`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_FAIL':
      return `HOST ${host} does not resolve to an address: set HOST to an address of this machine, 0.0.0.0 or ::`;
    default:
      return undefined;
  }
}

/** What start-up lets through but an operator should hear of (docs/operations.md#going-to-production). */
function warnAboutConfig({ config, logger }: Awaited<ReturnType<typeof openRuntime>>): void {
  if (config.serviceEnv === 'production' && !config.smtpUrl)
    logger.warn(
      { outbox: config.outboxDir },
      'SMTP_URL is not set: reminders and sign-in links are written to the outbox folder, not mailed',
    );
  if (config.serviceEnv === 'production' && /^(sk|rk)_test_/.test(config.stripeSecretKey ?? ''))
    logger.warn(
      `STRIPE_SECRET_KEY is a test key (${config.stripeSecretKey?.slice(0, 8)}…): this production deployment takes no real money, and Stripe's test cards fund groups: fine for staging, never for a shop that ships orders`,
    );
  if (config.stripeSecretKey && !config.stripeWebhookSecret)
    logger.warn(
      "STRIPE_WEBHOOK_SECRET is not set: Stripe's webhooks are refused, so authentications abandoned on the page, failed refunds and disputes are learnt late or not at all",
    );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    await serve(loadConfig());
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`group-checkout: ${error.message}`);
      process.exit(2);
    }
    throw error;
  }
}
