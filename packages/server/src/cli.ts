// group-checkout: serve, migrate, merchant administration, secrets rotation and reconcile. Uses the same
// DATABASE_URL, SERVICE_ENV and SECRETS_KEY as the server. An error prints one line to stderr and exits
// non-zero.
import { parseArgs } from 'node:util';
import { systemClock } from './clock.ts';
import { type Config, ConfigError, loadConfig } from './config.ts';
import { isCurrencyCode } from './domain/currencies.ts';
import { EVENT_TYPES } from './events/types.ts';
import {
  createMerchant,
  type Rolled,
  rollMerchantSecret,
  rollPublishableKey,
  rollSecretKey,
  setProcessorAccount,
} from './flows/merchants.ts';
import { type ReconcileReport, reconcile } from './flows/reconcile.ts';
import { checkStoredSecrets, rotateSecrets, secretBoxFor } from './flows/secrets.ts';
import { keyEnvironmentFor } from './ids.ts';
import { listen } from './listen.ts';
import { processorFor } from './processor/index.ts';
import { type Db, openDb } from './store/db.ts';
import { migrateToLatest } from './store/migrations/index.ts';

class UsageError extends Error {}

const USAGE = `Usage:
  group-checkout serve
  group-checkout migrate
  group-checkout merchant create --name NAME [--headless] [--payout-currency CUR] [--allowed-origin URL]… [--json]
  group-checkout merchant update --merchant ID --processor-account acct_… [--json]
  group-checkout merchant keys roll --merchant ID [--signing-secret | --webhook-secret | --publishable] [--json]
  group-checkout secrets rotate [--json]
  group-checkout reconcile [--json]
  group-checkout listen --forward-to URL [--api-key svc_sk_…] [--api-base URL] [--events TYPE,…] [--secret whsec_…] [--json]`;

/** What `merchant keys roll` replaces with a grace period for the old one (docs/operations.md#keys). */
const GRACEFUL_ROLLS: Record<
  'signing-secret' | 'webhook-secret' | 'publishable',
  {
    roll: (db: Db, merchantId: string, now: number) => Promise<Rolled | undefined>;
    field: string;
    name: string;
    oldOne: string;
  }
> = {
  'signing-secret': {
    roll: (db, merchantId, now) => rollMerchantSecret(db, merchantId, 'signing', now),
    field: 'signing_secret',
    name: 'cart signing secret',
    oldOne: 'still verifies carts',
  },
  'webhook-secret': {
    roll: (db, merchantId, now) => rollMerchantSecret(db, merchantId, 'session_webhook', now),
    field: 'session_webhook_secret',
    name: 'session webhook secret',
    oldOne: 'signs webhooks too',
  },
  publishable: {
    roll: rollPublishableKey,
    field: 'publishable_key',
    name: 'publishable key',
    oldOne: 'still works',
  },
};

/** Opens and migrates the database for one command, checks that SECRETS_KEY opens its secrets, and closes
 * it after. Nothing is logged: stdout is the command's answer (one JSON object with --json), stderr its
 * one-line error. */
async function withDb<T>(config: Config, use: (db: Db) => Promise<T>): Promise<T> {
  const db = openDb(config.databaseUrl, { secrets: secretBoxFor(config) });
  try {
    await migrateToLatest(db);
    await checkStoredSecrets(db);
    return await use(db);
  } finally {
    await db.close();
  }
}

/** A Stripe connected account id: acct_ and 16 letters or digits today; up to 255 characters allowed. */
const PROCESSOR_ACCOUNT = /^acct_[A-Za-z0-9]{8,250}$/;

function print(json: boolean, object: Record<string, unknown>, lines: string[]) {
  process.stdout.write(json ? `${JSON.stringify(object)}\n` : `${lines.join('\n')}\n`);
}

/** Exit code 1 without a message on stderr: reconcile found a mismatch, and stdout says which. */
class Mismatched extends Error {}

function reconcileLines(report: ReconcileReport): string[] {
  const lines = report.mismatches.map((m) => `${m.kind}  ${m.session_id ?? '-'}  ${m.detail}`);
  const n = report.checked.sessions;
  const count = report.mismatches.length;
  lines.push(
    `reconcile: ${n} sessions checked, ${count === 0 ? 'clean' : `${count} mismatch${count === 1 ? '' : 'es'}`}`,
  );
  return lines;
}

function origin(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`--allowed-origin must be a URL such as https://shop.example, got "${raw}"`);
  }
  if (!['http:', 'https:'].includes(url.protocol))
    throw new UsageError(`--allowed-origin must be http(s), got "${raw}"`);
  return url.origin;
}

async function runListen(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      'forward-to': { type: 'string' },
      'api-key': { type: 'string' },
      'api-base': { type: 'string' },
      events: { type: 'string' },
      secret: { type: 'string' },
      'interval-ms': { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  const forwardTo = values['forward-to'];
  if (!forwardTo) throw new UsageError('listen needs --forward-to URL, such as http://localhost:3000/hooks');
  if (!/^https?:\/\/./.test(forwardTo))
    throw new UsageError(`--forward-to must be an http(s) URL, got "${forwardTo}"`);
  const apiKey = values['api-key'] ?? process.env.GROUP_CHECKOUT_API_KEY;
  if (!apiKey?.startsWith('svc_sk_'))
    throw new UsageError(
      "listen needs the merchant's secret key (svc_sk_…): --api-key or GROUP_CHECKOUT_API_KEY",
    );
  const apiBase =
    values['api-base'] ??
    process.env.GROUP_CHECKOUT_API_BASE ??
    process.env.PUBLIC_BASE_URL ??
    'http://localhost:4000/v1';
  const events = (values.events ?? '').split(',').filter(Boolean);
  const unknown = events.filter((type) => !(EVENT_TYPES as readonly string[]).includes(type));
  if (unknown.length > 0)
    throw new UsageError(
      `--events: unknown event type ${unknown.join(', ')}; known: ${EVENT_TYPES.join(', ')}`,
    );
  if (values.secret !== undefined && !/^whsec_[A-Za-z0-9+/]{16,}={0,2}$/.test(values.secret))
    throw new UsageError('--secret must be a whsec_… secret');
  const intervalMs = Number(values['interval-ms'] ?? 1000);
  if (!Number.isInteger(intervalMs) || intervalMs < 100 || intervalMs > 60_000)
    throw new UsageError('--interval-ms must be a whole number from 100 to 60000');
  const stop = new AbortController();
  process.once('SIGINT', () => stop.abort());
  process.once('SIGTERM', () => stop.abort());
  await listen({
    apiKey,
    apiBase,
    forwardTo,
    events,
    secret: values.secret,
    intervalMs,
    json: values.json,
    signal: stop.signal,
    out: (line) => process.stdout.write(`${line}\n`),
  });
}

async function run(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (!command) throw new UsageError('no command given; run group-checkout --help for the commands');
  // listen is a client of the API, like a merchant's server: it needs a key and an address, no database.
  if (command === 'listen') return runListen(rest);
  const config = loadConfig();
  // The server (Fastify, the routes, the workers) is loaded only to serve: the other commands start faster.
  if (command === 'serve') return (await import('./main.ts')).serve(config);
  if (command === 'migrate') {
    const db = openDb(config.databaseUrl);
    try {
      const applied = await migrateToLatest(db);
      process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
    } finally {
      await db.close();
    }
    return;
  }
  if (command === 'merchant' && rest[0] === 'create') {
    const { values } = parseArgs({
      args: rest.slice(1),
      options: {
        name: { type: 'string' },
        headless: { type: 'boolean', default: false },
        'payout-currency': { type: 'string' },
        'allowed-origin': { type: 'string', multiple: true, default: [] },
        json: { type: 'boolean', default: false },
      },
      strict: true,
    });
    const name = values.name?.trim();
    if (!name) throw new UsageError('merchant create needs --name NAME');
    if (name.length > 200) throw new UsageError('--name must be at most 200 characters');
    const payoutCurrency = values['payout-currency']?.toLowerCase() ?? null;
    if (payoutCurrency !== null && !isCurrencyCode(payoutCurrency)) {
      throw new UsageError(
        `--payout-currency must be an ISO 4217 code such as eur, got "${values['payout-currency']}"`,
      );
    }
    const allowedOrigins = (values['allowed-origin'] ?? []).map(origin);
    await withDb(config, async (db) => {
      const environment = keyEnvironmentFor(config.serviceEnv);
      const { merchant, publishableKey, secretKey } = await createMerchant(
        db,
        { name, environment, headlessApiEnabled: values.headless ?? false, payoutCurrency, allowedOrigins },
        Date.now(),
      );
      print(
        values.json ?? false,
        {
          merchant_id: merchant.id,
          publishable_key: publishableKey,
          secret_key: secretKey,
          signing_secret: merchant.signingSecret,
          session_webhook_secret: merchant.sessionWebhookSecret,
          environment: config.serviceEnv,
        },
        [
          `merchant id              ${merchant.id}`,
          `environment              ${config.serviceEnv}`,
          `publishable key          ${publishableKey}`,
          `secret key               ${secretKey}   (shown once)`,
          `cart signing secret      ${merchant.signingSecret}`,
          `session webhook secret   ${merchant.sessionWebhookSecret}`,
        ],
      );
    });
    return;
  }
  if (command === 'merchant' && rest[0] === 'update') {
    const { values } = parseArgs({
      args: rest.slice(1),
      options: {
        merchant: { type: 'string' },
        'processor-account': { type: 'string' },
        json: { type: 'boolean', default: false },
      },
      strict: true,
    });
    if (!values.merchant) throw new UsageError('merchant update needs --merchant ID');
    const account = values['processor-account'];
    if (account === undefined) throw new UsageError('merchant update needs --processor-account acct_…');
    if (!PROCESSOR_ACCOUNT.test(account)) {
      throw new UsageError(
        `--processor-account must be a Stripe connected account id such as acct_1Nv0FGQ9RKHgCVdK, got "${account.slice(0, 80)}"`,
      );
    }
    const merchantId = values.merchant;
    await withDb(config, async (db) => {
      if (!(await setProcessorAccount(db, merchantId, account)))
        throw new UsageError(`no merchant ${merchantId}`);
      print(values.json ?? false, { merchant_id: merchantId, processor_account_id: account }, [
        `processor account for ${merchantId}: ${account}`,
      ]);
    });
    return;
  }
  if (command === 'merchant' && rest[0] === 'keys' && rest[1] === 'roll') {
    const { values } = parseArgs({
      args: rest.slice(2),
      options: {
        merchant: { type: 'string' },
        'signing-secret': { type: 'boolean', default: false },
        'webhook-secret': { type: 'boolean', default: false },
        publishable: { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
      },
      strict: true,
    });
    if (!values.merchant) throw new UsageError('merchant keys roll needs --merchant ID');
    const merchantId = values.merchant;
    const chosen = (Object.keys(GRACEFUL_ROLLS) as (keyof typeof GRACEFUL_ROLLS)[]).filter(
      (flag) => values[flag],
    );
    if (chosen.length > 1) {
      throw new UsageError(
        'merchant keys roll takes one of --signing-secret, --webhook-secret, --publishable',
      );
    }
    const json = values.json ?? false;
    await withDb(config, async (db) => {
      const now = Date.now();
      const what = chosen[0];
      if (what === undefined) {
        const rolled = await rollSecretKey(db, merchantId, now);
        if (!rolled) throw new UsageError(`no merchant ${merchantId}`);
        print(json, { merchant_id: merchantId, secret_key: rolled.secretKey }, [
          `new secret key for ${merchantId}: ${rolled.secretKey}   (shown once; the old one no longer works)`,
        ]);
        return;
      }
      const { roll, field, name, oldOne } = GRACEFUL_ROLLS[what];
      const rolled = await roll(db, merchantId, now);
      if (!rolled) throw new UsageError(`no merchant ${merchantId}`);
      const until = new Date(rolled.previousValidUntil).toISOString();
      print(json, { merchant_id: merchantId, [field]: rolled.value, previous_valid_until: until }, [
        `new ${name} for ${merchantId}: ${rolled.value}`,
        `the old one ${oldOne} until ${until}`,
      ]);
    });
    return;
  }
  if (command === 'secrets' && rest[0] === 'rotate') {
    const { values } = parseArgs({
      args: rest.slice(1),
      options: { json: { type: 'boolean', default: false } },
      strict: true,
    });
    if (!config.secretsKey) throw new UsageError('secrets rotate needs SECRETS_KEY: the key to seal with');
    await withDb(config, async (db) => {
      const { resealed, remaining, keyId } = await rotateSecrets(db);
      print(values.json ?? false, { resealed, remaining, key_id: keyId }, [
        `resealed ${resealed} stored secrets with SECRETS_KEY (key ${keyId})`,
        remaining === 0
          ? 'every stored secret is sealed with SECRETS_KEY: SECRETS_KEY_PREVIOUS may be removed'
          : `${remaining} were written meanwhile with another key: run secrets rotate again`,
      ]);
    });
    return;
  }
  if (command === 'reconcile') {
    const { values } = parseArgs({
      args: rest,
      options: { json: { type: 'boolean', default: false } },
      strict: true,
    });
    const report = await withDb(config, async (db) =>
      reconcile({ db, processor: await processorFor(config, db, systemClock), clock: systemClock, config }),
    );
    const { ok, checked, mismatches } = report;
    print(values.json ?? false, { ok, checked, mismatches }, reconcileLines(report));
    if (!ok) throw new Mismatched();
    return;
  }
  throw new UsageError(
    `unknown command "${[command, ...rest].join(' ')}"; run group-checkout --help for the commands`,
  );
}

/** One line, whatever the error: AggregateError (a refused connection to every address) has no message. */
function describe(error: unknown): string {
  const e = error as { message?: unknown; code?: unknown; errors?: unknown[] } | null;
  let message = typeof e?.message === 'string' ? e.message : '';
  if (!message && Array.isArray(e?.errors) && e.errors.length > 0) message = describe(e.errors[0]);
  if (!message) message = typeof e?.code === 'string' ? e.code : String(error);
  return message.trim().replace(/\s*\n\s*/g, ' / ');
}

try {
  await run(process.argv.slice(2));
} catch (error) {
  if (error instanceof Mismatched) process.exit(1);
  const known =
    error instanceof UsageError ||
    error instanceof ConfigError ||
    (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
  const message = describe(error);
  process.stderr.write(`group-checkout: ${known ? message : `failed: ${message}`}\n`);
  process.exit(known ? 2 : 1);
}
