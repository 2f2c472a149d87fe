// The demo merchant's server (node:http, no framework): the product, success and orders pages, the cart
// signing route (docs/api.md#merchant-signing-route) and the webhook receiver
// (docs/api.md#webhook-signing). The signing secret and the webhook secret stay in this process.
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { signCart, verifyWebhook, type WebhookEvent } from '@group-checkout/node';
import { cartProblems } from './catalogue.ts';
import { OrderBook } from './orders.ts';
import { notFoundPage, ordersPage, productPage, successPage } from './pages.ts';

export interface ShopOptions {
  /** `svc_merch_…` */
  merchantId: string;
  /** `svc_pk_…`: public, it goes to the page. */
  publishableKey: string;
  /** `svc_sig_…`: signs carts, never leaves this server. */
  signingSecret: string;
  /** `whsec_…` of the webhook endpoint registered for this shop's receiver. */
  webhookSecret: string;
  /** The merchant API, with its /v1: what the SDK calls. */
  apiBaseUrl: string;
  /** The hosted pages' address: the SDK script and the checkout frame come from there. */
  payBaseUrl: string;
  /** Where orders are saved; in memory only when not given. */
  ordersFile?: string;
  /** One line per thing that happened (an order paid, a webhook refused); default: stdout. */
  log?: (line: string) => void;
}

export interface Shop {
  server: Server;
  orders: OrderBook;
  /** Listens on `port` (0: any free one) and `host` (default 127.0.0.1); answers the port it got. */
  listen(port: number, host?: string): Promise<number>;
  close(): Promise<void>;
}

/** Larger bodies are refused: a cart of ten products is a few kilobytes, an event less. */
const MAX_BODY_BYTES = 256 * 1024;

const ASSETS: Record<string, { file: URL; type: string }> = {
  '/shop.js': { file: new URL('../public/shop.js', import.meta.url), type: 'text/javascript; charset=utf-8' },
  '/shop.css': { file: new URL('../public/shop.css', import.meta.url), type: 'text/css; charset=utf-8' },
  '/favicon.svg': { file: new URL('../public/favicon.svg', import.meta.url), type: 'image/svg+xml' },
};

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly details?: string[],
  ) {
    super(message);
  }
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, 'the body is too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function parseJson(body: Buffer, req: IncomingMessage): unknown {
  if (!/^application\/json\b/i.test(req.headers['content-type'] ?? ''))
    throw new HttpError(415, 'send Content-Type: application/json');
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw new HttpError(400, 'the body is not JSON');
  }
}

export function createShop(options: ShopOptions): Shop {
  const orders = new OrderBook(options.ordersFile);
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const payOrigin = new URL(options.payBaseUrl).origin;
  const apiOrigin = new URL(options.apiBaseUrl).origin;
  // The SDK comes from the pay origin and calls the API; the checkout frame is the pay origin. Styles allow
  // 'unsafe-inline' because the SDK styles its modal and button from script; scripts stay strict. The API
  // and the pages are often one origin (http://localhost:4000 by default): it is listed once.
  const connectSrc = [...new Set(["'self'", apiOrigin, payOrigin])].join(' ');
  const csp = [
    "default-src 'self'",
    `script-src 'self' ${payOrigin}`,
    `connect-src ${connectSrc}`,
    `frame-src ${payOrigin}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');

  function send(res: ServerResponse, status: number, type: string, body: string, extra = {}) {
    res.writeHead(status, {
      'content-type': type,
      'content-length': Buffer.byteLength(body),
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'same-origin',
      'cache-control': 'no-store',
      ...extra,
    });
    res.end(body);
  }
  const html = (res: ServerResponse, status: number, body: string) =>
    send(res, status, 'text/html; charset=utf-8', body, { 'content-security-policy': csp });
  const json = (res: ServerResponse, status: number, body: unknown) =>
    send(res, status, 'application/json', JSON.stringify(body));

  /** POST /api/cart/sign: signs only a cart this shop would sell, for one of its own pending orders. */
  function signRoute(body: unknown): { signature: string } {
    const cart = (body as { cart?: unknown } | null)?.cart;
    const orderRef = (cart as { metadata?: { order_ref?: unknown } } | undefined)?.metadata?.order_ref;
    const order = typeof orderRef === 'string' ? orders.get(orderRef) : undefined;
    if (!order) {
      throw new HttpError(400, 'cart.metadata.order_ref must be an order made by POST /api/orders', [
        'ask POST /api/orders for an order reference first',
      ]);
    }
    if (order.status === 'paid' || order.status === 'cancelled')
      throw new HttpError(400, `order ${order.ref} is ${order.status}: start a new order`);
    const problems = cartProblems(cart, order.ref);
    if (problems.length > 0) throw new HttpError(400, problems[0] as string, problems);
    const priced = cart as Parameters<typeof signCart>[0];
    orders.priced(order.ref, priced.total, priced.currency);
    return { signature: signCart(priced, options.signingSecret) };
  }

  /** POST /webhooks/group-checkout: verified on the raw bytes, applied once per event id. */
  function webhookRoute(raw: Buffer, req: IncomingMessage): void {
    let event: WebhookEvent;
    try {
      event = verifyWebhook<WebhookEvent>(raw, req.headers, options.webhookSecret);
    } catch (error) {
      log(`webhook refused: ${(error as Error).message}`);
      throw new HttpError(400, (error as Error).message);
    }
    if (!orders.firstTime(event.id)) return; // a redelivery: applied already
    const { order_ref: ref, session_id: sessionId } = event.data ?? {};
    const order = ref ? orders.get(ref) : undefined;
    if (!order || !ref) {
      orders.save();
      return; // not one of ours (a session made elsewhere for this merchant): nothing to do, but 2xx
    }
    orders.update(ref, (o) => {
      if (event.type === 'group.funded') {
        // Ship what was paid for: the amount must be the cart the shop last priced for this order (a
        // shopper may have signed several carts under one order while choosing quantities).
        const priced = o.total === event.data.total_cents && o.currency === event.data.currency;
        o.status = priced ? 'paid' : 'review';
        o.session_id = sessionId;
      } else if (
        (event.type === 'group.cancelled' || event.type === 'group.expired') &&
        o.status !== 'paid' &&
        (o.session_id === null || o.session_id === sessionId)
      ) {
        o.status = 'cancelled';
        o.session_id = sessionId;
      } else if (event.type === 'group.created' && o.status !== 'paid') {
        o.session_id = sessionId;
      }
    });
    if (event.type === 'group.funded') {
      log(
        orders.get(ref)?.status === 'paid'
          ? `order ${ref} paid (session ${sessionId}): ship it`
          : `order ${ref} paid ${event.data.total_cents} ${event.data.currency}, not the cart priced last: check before shipping`,
      );
    }
    if (event.type === 'group.cancelled' || event.type === 'group.expired')
      log(`order ${ref}: session ${sessionId} ${event.data.status}`);
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://shop.invalid');
    const method = req.method ?? 'GET';
    const read = method === 'GET' || method === 'HEAD';
    if (read && url.pathname === '/') {
      return html(
        res,
        200,
        productPage({
          merchantId: options.merchantId,
          publishableKey: options.publishableKey,
          apiBaseUrl: options.apiBaseUrl,
          payBaseUrl: options.payBaseUrl,
        }),
      );
    }
    if (read && url.pathname === '/success') {
      const ref = url.searchParams.get('order') ?? '';
      const order = orders.get(ref);
      return html(res, order ? 200 : 404, successPage(order, ref));
    }
    if (read && url.pathname === '/orders') return html(res, 200, ordersPage(orders.list()));
    const asset = read ? ASSETS[url.pathname] : undefined;
    if (asset) return send(res, 200, asset.type, readFileSync(asset.file, 'utf8'));
    if (method === 'POST' && url.pathname === '/api/orders') {
      await readBody(req);
      return json(res, 201, { order_ref: orders.open().ref });
    }
    if (method === 'POST' && url.pathname === '/api/cart/sign') {
      return json(res, 200, signRoute(parseJson(await readBody(req), req)));
    }
    if (method === 'POST' && url.pathname === '/webhooks/group-checkout') {
      webhookRoute(await readBody(req), req);
      return json(res, 200, { received: true });
    }
    if (url.pathname.startsWith('/api/') || url.pathname.startsWith('/webhooks/'))
      return json(res, 404, { error: 'not found' });
    return html(res, 404, notFoundPage());
  }

  const server = createServer((req, res) => {
    route(req, res).catch((error: unknown) => {
      if (res.headersSent) return res.destroy();
      if (error instanceof HttpError) {
        json(res, error.status, {
          error: error.message,
          ...(error.details ? { details: error.details } : {}),
        });
        return;
      }
      log(`error: ${(error as Error).stack ?? String(error)}`);
      json(res, 500, { error: 'the shop failed; see its output' });
    });
  });

  return {
    server,
    orders,
    async listen(port, host = '127.0.0.1') {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve();
        });
      });
      return (server.address() as AddressInfo).port;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * createShop, listening (port default 4100, host default 127.0.0.1): what tests and main.ts use. `url` is
 * the address a browser on this machine opens, `http://localhost:<port>`: the origin the demo merchant allows.
 */
export async function startShop(
  options: ShopOptions & { port?: number; host?: string },
): Promise<Shop & { url: string; port: number }> {
  const shop = createShop(options);
  const port = await shop.listen(options.port ?? 4100, options.host);
  return { ...shop, port, url: `http://localhost:${port}` };
}
