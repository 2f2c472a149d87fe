// First start of the sandbox on an empty database: create a demo merchant and print what a developer
// needs to try the API. Secrets go to the terminal once, never to the log. Unless DEMO_SHOP=0, the demo
// merchant also gets a webhook endpoint at the demo shop (examples/shop), and what the shop needs is
// written to ./data/demo-shop.json, readable by its owner only (docs/decisions.md#demo-shop). That file
// belongs to the database it was made for: another DATABASE_URL gets its own file beside it, so trying
// PostgreSQL never breaks the shop of the default SQLite database.
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Config } from './config.ts';
import type { Deps } from './deps.ts';
import { addDashboardUser, demoOwnerLink } from './flows/dashboard-access.ts';
import { changeAllowedOrigins, countMerchants, createMerchantOnce } from './flows/merchants.ts';
import { createWebhookEndpoint, deleteWebhookEndpoint } from './flows/webhooks.ts';

/** Relative to the working directory, as the default database is: `npm start` runs from the repository root. */
const DEMO_SHOP_FILE = './data/demo-shop.json';
const DEFAULT_DATABASE_URL = 'sqlite:./data/group-checkout.db';

/** A database's URL as it may be written down: without its password. */
function databaseLabel(databaseUrl: string): string {
  if (databaseUrl.startsWith('sqlite:')) return databaseUrl;
  const parsed = new URL(databaseUrl);
  parsed.password = '';
  return parsed.toString();
}

/**
 * The demo shop's settings file for a database: ./data/demo-shop.json for the default SQLite database,
 * ./data/demo-shop.<12 hex digits of the database's label>.json for any other. scripts/start.mjs hears it
 * from the service (the `listening` message) and hands it to the shop.
 */
export function demoShopFileOf(databaseUrl: string): string {
  if (databaseUrl === DEFAULT_DATABASE_URL) return DEMO_SHOP_FILE;
  const digest = createHash('sha256').update(databaseLabel(databaseUrl)).digest('hex').slice(0, 12);
  return `./data/demo-shop.${digest}.json`;
}

/** The demo shop's receiver: examples/shop serves it. */
const SHOP_WEBHOOK_PATH = '/webhooks/group-checkout';

/** What the demo shop reads: its merchant's browser credentials and webhook secret, never the secret key. */
interface DemoShopFile {
  /** The database whose merchant this is, without its password. */
  database: string;
  merchant_id: string;
  publishable_key: string;
  signing_secret: string;
  webhook_id: string;
  webhook_secret: string;
  api_url: string;
  pay_url: string;
  shop_url: string;
}

/** The demo merchant's dashboard owner (docs/dashboard.md): its sign-in link is printed at every start. */
const DEMO_OWNER_EMAIL = 'owner@demo-shop.localhost';

const shopUrlOf = (port: number) => `http://localhost:${port}`;
/** The demo shop's origins: the address it prints, and the loopback address it listens on. */
const shopOriginsOf = (port: number) => [shopUrlOf(port), `http://127.0.0.1:${port}`];

/** Written whole to a temporary file, then renamed: a reader never sees half a file, nor a wider mode. */
function writeDemoShopFile(path: string, file: DemoShopFile): void {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temporary, 0o600); // the umask may have narrowed it further, never widened; say it exactly
  renameSync(temporary, path);
}

export async function ensureDemoMerchant(deps: Deps): Promise<void> {
  const { config } = deps;
  if (config.serviceEnv !== 'sandbox') return;
  if ((await countMerchants(deps.db)) > 0) {
    await refreshDemoShopFile(deps, config);
    await printDashboardLink(deps, undefined);
    return;
  }
  const payOrigin = new URL(config.publicPayUrl).origin;
  const shopUrl = config.demoShopPort === undefined ? undefined : shopUrlOf(config.demoShopPort);
  // Several processes starting together on an empty database all get here: the first to write the
  // demo merchant's mark makes it, and the others, waiting on that row, find it made and stop.
  const created = await createMerchantOnce(
    deps.db,
    'demo_merchant',
    {
      // The shop's own name (examples/shop), which the payer pages show as the merchant's.
      name: 'Camp Supply',
      environment: 'test',
      headlessApiEnabled: true,
      payoutCurrency: null,
      // The shop's page creates sessions with the publishable key from its own origin, which must be
      // registered (docs/api.md#origins), under either name a browser on this machine may open it by; the
      // origins also frame the pages of sessions its server would create with the secret key.
      allowedOrigins: shopUrl ? [payOrigin, ...shopOriginsOf(config.demoShopPort as number)] : [payOrigin],
    },
    deps.clock.now(),
  );
  if (!created) return;
  const m = created.merchant;
  await addDashboardUser(
    deps.db,
    { merchantId: m.id, email: DEMO_OWNER_EMAIL, role: 'owner' },
    deps.clock.now(),
  );
  const shopLines: string[] = [];
  if (shopUrl) {
    const endpoint = await createWebhookEndpoint(deps, m.id, {
      url: `${shopUrl}${SHOP_WEBHOOK_PATH}`,
      events: ['*'],
    });
    writeDemoShopFile(demoShopFileOf(config.databaseUrl), {
      database: databaseLabel(config.databaseUrl),
      merchant_id: m.id,
      publishable_key: created.publishableKey,
      signing_secret: m.signingSecret,
      webhook_id: endpoint.id,
      webhook_secret: endpoint.secret,
      api_url: config.publicBaseUrl,
      pay_url: config.publicPayUrl,
      shop_url: shopUrl,
    });
    shopLines.push(
      `  demo shop webhook        ${endpoint.id} -> ${endpoint.url} (every event)`,
      `  demo shop settings       ${demoShopFileOf(config.databaseUrl)} (mode 0600; no secret key in it)`,
    );
  }
  process.stdout.write(
    [
      '',
      'Group Checkout sandbox: created a demo merchant (shown once; keep these).',
      `  merchant id              ${m.id}`,
      `  publishable key          ${created.publishableKey}`,
      `  secret key               ${created.secretKey}`,
      `  cart signing secret      ${m.signingSecret}`,
      `  session webhook secret   ${m.sessionWebhookSecret}`,
      `  API                      ${config.publicBaseUrl}`,
      `  OpenAPI                  ${config.publicBaseUrl}/openapi.json`,
      `  hosted pages             ${config.publicPayUrl}`,
      ...shopLines,
      `Lost the secret key? npx group-checkout merchant keys roll --merchant ${m.id}`,
      '',
      '',
    ].join('\n'),
  );
  await printDashboardLink(deps, m.id);
}

/**
 * A fresh one-time sign-in link to the demo merchant's dashboard, on stdout (never the log). A database
 * made before the dashboard existed gets the demo owner now, when ./data/demo-shop.json names its merchant.
 */
async function printDashboardLink(deps: Deps, merchantId: string | undefined): Promise<void> {
  const fallback = merchantId ?? readDemoShopFile()?.merchant_id;
  const link = await demoOwnerLink(deps, DEMO_OWNER_EMAIL, fallback).catch((error: unknown) => {
    deps.logger.warn({ err: error }, 'demo dashboard link not made');
    return undefined;
  });
  if (!link) return;
  process.stdout.write(
    `Dashboard: sign in as ${DEMO_OWNER_EMAIL} with this one-time link (15 minutes):\n  ${link}\n\n`,
  );
}

function readDemoShopFile(): DemoShopFile | undefined {
  if (!existsSync(DEMO_SHOP_FILE)) return undefined;
  try {
    return JSON.parse(readFileSync(DEMO_SHOP_FILE, 'utf8')) as DemoShopFile;
  } catch {
    return undefined;
  }
}

/**
 * A later start reuses ./data/demo-shop.json; only what the environment decides is brought up to date: the
 * API and pay URLs (PORT, PUBLIC_*), and the shop's own URL (SHOP_PORT), whose webhook endpoint is then
 * registered anew (a new secret) and the old one deleted.
 */
async function refreshDemoShopFile(deps: Deps, config: Config): Promise<void> {
  const path = demoShopFileOf(config.databaseUrl);
  if (config.demoShopPort === undefined || !existsSync(path)) return;
  let file: DemoShopFile;
  try {
    file = JSON.parse(readFileSync(path, 'utf8')) as DemoShopFile;
  } catch {
    deps.logger.warn({ file: path }, 'demo shop settings are not JSON: left as they are');
    return;
  }
  const shopUrl = shopUrlOf(config.demoShopPort);
  // The shop's page creates sessions from its origins (docs/api.md#origins): registered on every start (a
  // database from before origins were checked, a new SHOP_PORT), the old port's taken out. A file from
  // another database names a merchant unknown here: nothing to change.
  const shopOrigins = shopOriginsOf(config.demoShopPort);
  const oldPort = URL.canParse(file.shop_url) ? new URL(file.shop_url).port : '';
  await changeAllowedOrigins(deps.db, file.merchant_id, {
    add: shopOrigins,
    remove: oldPort ? shopOriginsOf(Number(oldPort)).filter((o) => !shopOrigins.includes(o)) : [],
  });
  const next: DemoShopFile = {
    ...file,
    database: databaseLabel(config.databaseUrl),
    api_url: config.publicBaseUrl,
    pay_url: config.publicPayUrl,
  };
  if (file.shop_url !== shopUrl) {
    // A file from another database (its merchant unknown here) cannot be mended: the demo must not stop
    // the service, so say so and leave it.
    const endpoint = await createWebhookEndpoint(deps, file.merchant_id, {
      url: `${shopUrl}${SHOP_WEBHOOK_PATH}`,
      events: ['*'],
    }).catch((error: unknown) => {
      deps.logger.warn({ err: error, file: path }, 'demo shop webhook endpoint not moved');
      return undefined;
    });
    if (!endpoint) return;
    // Gone already (deleted through the API) is fine: the new one replaces it either way.
    await deleteWebhookEndpoint(deps, file.merchant_id, file.webhook_id).catch(() => undefined);

    Object.assign(next, { webhook_id: endpoint.id, webhook_secret: endpoint.secret, shop_url: shopUrl });
  }
  if (JSON.stringify(next) !== JSON.stringify(file)) writeDemoShopFile(path, next);
}
