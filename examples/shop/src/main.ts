// The demo shop as a process: `npm run demo`, or started by `npm start` (scripts/start.mjs) beside the
// service. Its settings come from ./data/demo-shop.json, which the sandbox writes when it creates its demo
// merchant (examples/shop/README.md), or from the file DEMO_SHOP_SETTINGS names (npm start names the one
// made for the service's database); SHOP_PORT (4100) and HOST (127.0.0.1) say where it listens.
import { readFileSync } from 'node:fs';
import { startShop } from './shop.ts';

const SETTINGS_FILE = process.env.DEMO_SHOP_SETTINGS || './data/demo-shop.json';
/** Beside the settings: the orders belong to the same merchant, so to the same database. */
const ORDERS_FILE = SETTINGS_FILE.replace(/\.json$/, '') + '-orders.json';

function fail(message: string): never {
  process.stderr.write(`demo shop: ${message}\n`);
  process.exit(2);
}

interface DemoShopFile {
  merchant_id: string;
  publishable_key: string;
  signing_secret: string;
  webhook_secret: string;
  api_url: string;
  pay_url: string;
}

let settings: DemoShopFile;
try {
  settings = JSON.parse(readFileSync(SETTINGS_FILE, 'utf8')) as DemoShopFile;
} catch (error) {
  fail(
    (error as NodeJS.ErrnoException).code === 'ENOENT'
      ? `${SETTINGS_FILE} not found: the sandbox writes it when it first starts on an empty database (npm start); run from the repository root`
      : `${SETTINGS_FILE} is not readable JSON: ${(error as Error).message}`,
  );
}
const rawPort = process.env.SHOP_PORT || '4100';
if (!/^\d+$/.test(rawPort) || Number(rawPort) < 1 || Number(rawPort) > 65535)
  fail(`SHOP_PORT must be a whole number from 1 to 65535, got "${rawPort}"`);

let shop: Awaited<ReturnType<typeof startShop>>;
try {
  shop = await startShop({
    merchantId: settings.merchant_id,
    publishableKey: settings.publishable_key,
    signingSecret: settings.signing_secret,
    webhookSecret: settings.webhook_secret,
    apiBaseUrl: settings.api_url,
    payBaseUrl: settings.pay_url,
    ordersFile: ORDERS_FILE,
    port: Number(rawPort),
    host: process.env.HOST || '127.0.0.1',
  });
} catch (error) {
  fail(
    (error as NodeJS.ErrnoException).code === 'EADDRINUSE'
      ? `port ${rawPort} is in use: set SHOP_PORT to another port`
      : (error as Error).message,
  );
}

process.stdout.write(`Demo shop: ${shop.url}  (orders: ${shop.url}/orders)\n`);
// scripts/start.mjs prints the shop's output before the service's once it hears this.
process.send?.({ type: 'listening', url: shop.url });

let closing = false;
const stop = async () => {
  if (closing) return;
  closing = true;
  await shop.close();
  process.exit(0);
};
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
// Started by scripts/start.mjs: stop when it is gone, rather than live on orphaned.
process.on('disconnect', () => void stop());
