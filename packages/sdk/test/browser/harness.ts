// What the SDK's browser suites share. Three loopback origins, as in production:
// - the real service (API and the SDK script) on http://127.0.0.1:S, with its public URLs naming that port;
// - a merchant shop on http://localhost:M that loads the SDK from the service and signs carts on its own
//   server with signCart (its POST /api/cart/sign), with /success and /cancel pages;
// - a stand-in for the hosted pages on http://127.0.0.1:P, because those are built elsewhere: its
//   /session/{id} page speaks the message protocol of docs/api.md#hosted-pages-and-embedding (buttons post
//   each message to parent_origin), /silent/session/{id} posts nothing (for the polling fallback), and
//   /hostile posts a forged group.funded from the same origin without being the SDK's iframe.
// Real Chromium drives the shop page; callbacks are recorded on the Node side, so they survive redirects.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { signCart } from '@group-checkout/node';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import {
  RELAXED_LIMITS,
  startTestApp,
  type TestApp,
  type TestMerchant,
} from '../../../server/test/helpers/app.ts';
import { freePort, launchChromium } from '../../../server/test/helpers/chromium.ts';
import { sqliteCase } from '../../../server/test/helpers/databases.ts';
import { sampleCart } from '../../../server/test/helpers/sessions.ts';
import { builtFile } from '../dist.ts';

export { sampleCart };

export interface Harness {
  t: TestApp;
  browser: Browser;
  /** The service, as the browser sees it: its API is `${serviceUrl}/v1`. */
  serviceUrl: string;
  shopOrigin: string;
  /** The stand-in hosted pages' origin. */
  fakePayOrigin: string;
  /** Another origin than all three, on the shop's server: http://127.0.0.1:M. */
  strangerOrigin: string;
  /** A fresh merchant whose sessions nobody else makes, allowed to embed in the shop. */
  merchant(): Promise<TestMerchant>;
  /** A new browser context on a shop page with one button, mounted in #slot. */
  shop(merchant: TestMerchant, config?: ShopConfig): Promise<Shop>;
  /** How many sessions the merchant has, counted with the secret key. */
  sessionCount(merchant: TestMerchant): Promise<number>;
  close(): Promise<void>;
}

export interface ShopConfig {
  /** init() options besides merchantId and publishableKey; getSignature calls the shop's signing route. */
  init?: Record<string, unknown>;
  /** button() options besides callbacks; cart defaults to sampleCart(). */
  button?: Record<string, unknown>;
  /** Give init() no getSignature (default: the shop's). */
  noGetSignature?: boolean;
  /** The shop's getSignature waits this long first, to watch the button while it is busy. */
  signDelayMs?: number;
  /** The shopper's browser language (navigator.languages and Accept-Language). */
  browserLocale?: string;
  /** Import the ES module build ({pay_url}/sdk/v1/group-checkout.mjs) rather than load the classic script. */
  module?: boolean;
}

export type Call = [name: string, ...args: unknown[]];

export interface Shop {
  context: BrowserContext;
  page: Page;
  /** Callbacks in the order they fired: ['created', id], ['funded', id, orderRef], ['error', {…}], … */
  calls: Call[];
  /** Uncaught errors on the page. */
  pageErrors: Error[];
  close(): Promise<void>;
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};
const html = (res: ServerResponse, body: string) => {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
  res.end(body);
};

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  let text = '';
  for await (const chunk of req) text += chunk;
  return JSON.parse(text);
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** The stand-in hosted page: one button per message it can post to parent_origin. */
const fakePage = (strangerOrigin: string) => `<!doctype html><html lang="en"><title>Checkout stand-in</title>
<h1>Checkout stand-in</h1>
<button id="funded">Post group.funded</button>
<button id="cancelled">Post group.cancelled</button>
<button id="expired">Post group.expired</button>
<button id="close">Post close</button>
<button id="error">Post error</button>
<button id="other">Post group.funded for another session</button>
<button id="leave">Go to another origin</button>
<script>
const query = new URLSearchParams(location.search);
const sessionId = decodeURIComponent(location.pathname.split('/').pop());
const post = (type, extra) => parent.postMessage(
  Object.assign({ source: 'group-checkout', type, session_id: sessionId, order_ref: 'ORD-1001' }, extra),
  query.get('parent_origin'));
post('group.created');
for (const type of ['funded', 'cancelled', 'expired']) document.getElementById(type).onclick = () => post('group.' + type);
document.getElementById('close').onclick = () => post('close');
document.getElementById('error').onclick = () => post('error', { code: 'card_declined', message: 'The card was declined.' });
document.getElementById('other').onclick = () => post('group.funded', { session_id: 'gs_someoneelse' });
document.getElementById('leave').onclick = () => { location.href = '${strangerOrigin}/hostile?session=' + sessionId; };
document.addEventListener('keydown', (e) => { if (e.key === 'Escape') post('close'); });
</script></html>`;

/** Posts a forged group.funded for ?session= to its parent, at once and every 200 ms. */
const HOSTILE_PAGE = `<!doctype html><title>Hostile</title><script>
const forge = () => parent.postMessage({ source: 'group-checkout', type: 'group.funded',
  session_id: new URLSearchParams(location.search).get('session'), order_ref: 'FORGED' }, '*');
forge(); setInterval(forge, 200);
</script>`;

function shopPage(serviceUrl: string, config: unknown): string {
  const data = JSON.stringify(config).replace(/</g, '\\u003c');
  return `<!doctype html><html lang="en"><head><title>Shop</title></head>
<body style="margin:0"><main style="height:3000px"><h1>Basket</h1><a href="#top" id="before">Before</a>
<div id="slot" style="width:320px"></div><a href="#top" id="after">After</a></main>
<script type="application/json" id="config">${data}</script>
${
  (config as { module?: boolean }).module
    ? `<script type="module">
import * as GroupCheckout from '${serviceUrl}/sdk/v1/group-checkout.mjs';`
    : `<script src="${serviceUrl}/sdk/v1/group-checkout.js"></script>
<script>`
}
const config = JSON.parse(document.getElementById('config').textContent);
const record = (name) => (...args) => window.recordCall(name, JSON.stringify(args));
const init = Object.assign({}, config.init);
if (config.sign) init.getSignature = async (cart) => {
  await new Promise((r) => setTimeout(r, config.signDelayMs || 0));
  const res = await fetch('/api/cart/sign', { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ merchant_id: config.init.merchantId, cart }) });
  if (!res.ok) throw new Error('the shop could not sign the cart (HTTP ' + res.status + ')');
  return (await res.json()).signature;
};
GroupCheckout.init(init);
window.checkout = GroupCheckout.button(Object.assign({}, config.button, { callbacks: {
  onGroupCreated: record('created'), onGroupFunded: record('funded'), onGroupExpired: record('expired'),
  onGroupCancelled: record('cancelled'), onError: record('error') } }));
window.checkout.mount('#slot');
</script></body></html>`;
}

export async function startHarness(): Promise<Harness> {
  builtFile('group-checkout.js');
  const port = await freePort();
  const serviceUrl = `http://127.0.0.1:${port}`;
  const t = await startTestApp(sqliteCase, {
    port,
    env: { PUBLIC_BASE_URL: `${serviceUrl}/v1`, PUBLIC_PAY_URL: serviceUrl, ...RELAXED_LIMITS },
  });
  const secrets = new Map<string, string>();
  const pages = new Map<string, unknown>();

  const shopServer = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (req.method === 'POST' && url.pathname === '/api/cart/sign') {
      const body = await readJson(req);
      const secret = secrets.get(String(body.merchant_id));
      if (!secret) return json(res, 404, { error: 'unknown merchant' });
      return json(res, 200, { signature: signCart(body.cart as Parameters<typeof signCart>[0], secret) });
    }
    if (url.pathname.startsWith('/p/') && pages.has(url.pathname)) {
      return html(res, shopPage(serviceUrl, pages.get(url.pathname)));
    }
    if (url.pathname === '/bare') {
      return html(
        res,
        `<!doctype html><title>Bare</title><script src="${serviceUrl}/sdk/v1/group-checkout.js"></script>`,
      );
    }
    if (url.pathname === '/hostile') return html(res, HOSTILE_PAGE);
    if (url.pathname === '/success')
      return html(res, '<!doctype html><title>Paid</title><h1>Order paid</h1>');
    if (url.pathname === '/cancel')
      return html(res, '<!doctype html><title>Cancelled</title><h1>Cancelled</h1>');
    res.writeHead(404).end();
  });
  const shopPort = await listen(shopServer);
  const shopOrigin = `http://localhost:${shopPort}`;
  const strangerOrigin = `http://127.0.0.1:${shopPort}`;

  const fakeServer = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (/^\/session\/[^/]+$/.test(url.pathname)) return html(res, fakePage(strangerOrigin));
    if (/^\/silent\/session\/[^/]+$/.test(url.pathname)) {
      return html(res, '<!doctype html><title>Silent</title><button>Nothing</button>');
    }
    if (url.pathname === '/hostile') return html(res, HOSTILE_PAGE);
    res.writeHead(404).end();
  });
  const fakePayOrigin = `http://127.0.0.1:${await listen(fakeServer)}`;

  const browser = await launchChromium();
  let pageCount = 0;

  return {
    t,
    browser,
    serviceUrl,
    shopOrigin,
    fakePayOrigin,
    strangerOrigin,
    async merchant() {
      const m = await t.createMerchant({ allowedOrigins: [shopOrigin] });
      secrets.set(m.merchant.id, m.merchant.signingSecret);
      return m;
    },
    async shop(m, config = {}) {
      const path = `/p/${++pageCount}`;
      pages.set(path, {
        sign: !config.noGetSignature,
        signDelayMs: config.signDelayMs ?? 0,
        module: config.module ?? false,
        init: {
          merchantId: m.merchant.id,
          publishableKey: m.publishableKey,
          apiBaseUrl: `${serviceUrl}/v1`,
          payBaseUrl: fakePayOrigin,
          ...config.init,
        },
        button: { cart: sampleCart(), ...config.button },
      });
      const context = await browser.newContext(config.browserLocale ? { locale: config.browserLocale } : {});
      const page = await context.newPage();
      const calls: Call[] = [];
      const pageErrors: Error[] = [];
      page.on('pageerror', (e) => pageErrors.push(e));
      await page.exposeFunction('recordCall', (name: string, args: string) => {
        calls.push([name, ...JSON.parse(args)]);
      });
      await page.goto(shopOrigin + path);
      await page.locator('#slot button').waitFor();
      return { context, page, calls, pageErrors, close: () => context.close() };
    },
    async sessionCount(m) {
      const res = await t.request('GET', '/v1/sessions?limit=100', { key: m.secretKey });
      if (res.status !== 200) throw new Error(res.text);
      return res.body.data.length;
    },
    async close() {
      await browser.close();
      for (const server of [shopServer, fakeServer]) {
        server.closeAllConnections();
        await new Promise((r) => server.close(r));
      }
      await t.close();
    },
  };
}

/** Waits until `check()` is true, every 50 ms, for at most `ms`; fails naming `what`. */
export async function until(
  check: () => boolean | Promise<boolean>,
  what: string,
  ms = 8_000,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
