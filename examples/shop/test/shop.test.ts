// The demo shop against the real service on loopback ports: the carts it signs are the ones the service
// accepts from its page (publishable key, signature, Origin), anything else it refuses; a real delivery of
// group.funded marks the order paid, once, and a forged webhook changes nothing; the pages answer with
// what a shopper needs; and the page's own script, run against a stand-in DOM and SDK, builds a cart the
// shop signs and calls the SDK as docs/api.md#browser-sdk says.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { runInNewContext } from 'node:vm';
import { type Cart, generateTestHeaders } from '@group-checkout/node';
import { startDispatcher } from '../../../packages/server/src/jobs/dispatcher.ts';
import type { Loop } from '../../../packages/server/src/jobs/loop.ts';
import { RELAXED_LIMITS, startTestApp, type TestApp } from '../../../packages/server/test/helpers/app.ts';
import { sqliteCase } from '../../../packages/server/test/helpers/databases.ts';
import { eventually, payOk } from '../../../packages/server/test/helpers/payments.ts';
import { priceCart } from '../src/catalogue.ts';
import { createShop } from '../src/shop.ts';
import { type StartedShop, startShopFor } from './helpers.ts';

describe('demo shop', () => {
  let t: TestApp;
  let dispatcher: Loop;
  let shop: StartedShop;
  /** The shop as a program reaches it (the page's origin is http://localhost:<port>). */
  let base: string;
  const logged: string[] = [];

  before(async () => {
    t = await startTestApp(sqliteCase, {
      env: { ...RELAXED_LIMITS, WEBHOOK_RETRY_SCHEDULE: '50ms,100ms', WEBHOOK_POLL_INTERVAL_MS: '200' },
    });
    dispatcher = await startDispatcher(t.deps);
    shop = await startShopFor(t, (line) => logged.push(line));
    base = `http://127.0.0.1:${shop.port}`;
  });
  after(async () => {
    await shop?.close();
    await dispatcher?.stop();
    await t?.close();
  });

  const newOrder = async (): Promise<string> => {
    const res = await fetch(`${base}/api/orders`, { method: 'POST' });
    assert.equal(res.status, 201);
    return ((await res.json()) as { order_ref: string }).order_ref;
  };

  const sign = async (cart: unknown) => {
    const res = await fetch(`${base}/api/cart/sign`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ cart }),
    });
    return {
      status: res.status,
      body: (await res.json()) as { signature?: string; error?: string; details?: string[] },
    };
  };

  /** What the SDK does with the page's cart: POST /v1/sessions with the publishable key, from the page. */
  const createFromPage = (cart: Cart, signature: string) =>
    t.request('POST', '/v1/sessions', {
      key: t.merchant.publishableKey,
      headers: { origin: shop.url },
      body: { cart, signature },
    });

  /** An order, its cart signed by the shop, and the session made from the page. */
  async function checkout(lines = [{ id: 'sku_lantern', quantity: 2 }]) {
    const ref = await newOrder();
    const cart = priceCart(lines, ref);
    const signed = await sign(cart);
    assert.equal(signed.status, 200, JSON.stringify(signed.body));
    const created = await createFromPage(cart, signed.body.signature as string);
    assert.equal(created.status, 200, created.text);
    return { ref, cart, sessionId: created.body.session_id as string, created: created.body };
  }

  const orderOf = (ref: string) => shop.orders.get(ref);

  test('the shop signs its own cart, and the service accepts it from the page', async () => {
    const ref = await newOrder();
    assert.match(ref, /^ORD-[0-9A-F]{10}$/);
    // Items in another order than the shop lists them: the signature sorts them (docs/api.md#signing-steps).
    const cart = priceCart(
      [
        { id: 'sku_stove', quantity: 1 },
        { id: 'sku_tent', quantity: 2 },
      ],
      ref,
    );
    assert.equal(
      cart.total,
      cart.items.reduce((sum, i) => sum + i.quantity * i.unit_price, 0) +
        (cart.tax ?? 0) +
        (cart.shipping ?? 0) +
        (cart.fees ?? []).reduce((sum, f) => sum + f.amount, 0),
    );
    const signed = await sign(cart);
    assert.equal(signed.status, 200, JSON.stringify(signed.body));
    assert.match(signed.body.signature as string, /^[0-9a-f]{64}$/);
    assert.equal(orderOf(ref)?.status, 'pending');
    assert.equal(orderOf(ref)?.total, cart.total);

    const created = await createFromPage(cart, signed.body.signature as string);
    assert.equal(created.status, 200, created.text);
    const read = await t.request('GET', `/v1/sessions/${created.body.session_id}`, {
      key: t.merchant.secretKey,
    });
    assert.equal(read.body.order_ref, ref);
    assert.equal(read.body.total_cents, cart.total);
  });

  test('anything but its own prices, products and orders is refused 400, unsigned', async () => {
    const ref = await newOrder();
    const good = priceCart([{ id: 'sku_tent', quantity: 1 }], ref);
    const cases: [string, unknown, RegExp][] = [
      [
        'a lower price',
        { ...good, items: [{ ...good.items[0], unit_price: 1 }], total: good.total - 18899 },
        /unit_price/,
      ],
      ['a lower total', { ...good, total: good.total - 100 }, /cart\.total/],
      ['no tax', { ...good, tax: 0, total: good.total - (good.tax ?? 0) }, /cart\.tax/],
      ['no fees', { ...good, fees: [], total: good.total - 200 }, /cart\.fees/],
      [
        'a product it does not sell',
        { ...good, items: [{ id: 'sku_yacht', name: 'Yacht', quantity: 1, unit_price: 1 }] },
        /not a product/,
      ],
      ['a renamed product', { ...good, items: [{ ...good.items[0], name: 'Free tent' }] }, /name/],
      [
        'an image it did not choose',
        { ...good, items: [{ ...good.items[0], image_url: 'https://evil.example/x.png' }] },
        /image_url/,
      ],
      ['another currency', { ...good, currency: 'eur' }, /currency/],
      ['a field of its own', { ...good, discount: 5000 }, /discount/],
      ['too many', priceCart([{ id: 'sku_tent', quantity: 11 }], ref), /quantity/],
      ['an order it never made', priceCart([{ id: 'sku_tent', quantity: 1 }], 'ORD-MADEUP'), /order_ref/],
      ['no order', { ...good, metadata: {} }, /order_ref/],
      ['no cart', undefined, /order_ref/],
    ];
    for (const [what, cart, message] of cases) {
      const res = await sign(cart);
      assert.equal(res.status, 400, what);
      assert.match(res.body.error as string, message, what);
      // The error is one sentence, which the page shows: the cart the shop would sign is in details only.
      assert.doesNotMatch(res.body.error as string, /[{\n]/, what);
      assert.equal(res.body.signature, undefined, what);
    }
    const cheap = await sign({
      ...good,
      items: [{ ...good.items[0], unit_price: 1 }],
      total: good.total - 18899,
    });
    assert.equal(cheap.body.error, 'cart.total, cart.items[0].unit_price are not what this shop charges');
    assert.ok(
      cheap.body.details?.some((line) => line.includes(JSON.stringify(good))),
      `the details show the cart it signs: ${cheap.body.details}`,
    );
    // Not JSON, or not said to be.
    const plain = await fetch(`${base}/api/cart/sign`, {
      method: 'POST',
      body: JSON.stringify({ cart: good }),
    });
    assert.equal(plain.status, 415);
    const broken = await fetch(`${base}/api/cart/sign`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"cart":',
    });
    assert.equal(broken.status, 400);
    // And the service refuses a tampered cart under the good cart's signature.
    const signed = await sign(good);
    assert.equal(signed.status, 200);
    const tampered = await createFromPage(
      { ...good, total: 100, items: [{ ...good.items[0], unit_price: 1 }] } as Cart,
      signed.body.signature as string,
    );
    assert.equal(tampered.status, 400);
  });

  test('a group that paid for another cart than the one priced last under the order is held for review', async () => {
    // Two lanterns signed and checked out; then the shopper changed the quantity, and the shop priced a
    // cart of three under the same order. The group pays for two: not what the order now says.
    const { ref, cart, created } = await checkout();
    const three = priceCart([{ id: 'sku_lantern', quantity: 3 }], ref);
    assert.equal((await sign(three)).status, 200);
    const access = new URL(created.session_url).searchParams.get('access');
    const group = await t.request('PUT', `/api/v1/session/group?access=${access}`, {
      body: { mode: 'equal', members: [{ name: 'Ann' }, { name: 'Bob' }] },
    });
    assert.equal(group.status, 200, group.text);
    for (const member of group.body.group.members as { share_id: string }[]) await payOk(t, member.share_id);
    await eventually(async () => orderOf(ref)?.status === 'review', 10_000, 'the order held for review');
    assert.ok(
      logged.some((l) => l.includes(`order ${ref} paid ${cart.total} usd, not the cart priced last`)),
    );
    assert.match(await (await fetch(`${base}/success?order=${ref}`)).text(), /checks it before shipping/);
  });

  test('a real group.funded delivery marks the order paid, once; redelivery changes nothing', async () => {
    const { ref, sessionId, created } = await checkout();
    const access = new URL(created.session_url).searchParams.get('access');
    const group = await t.request('PUT', `/api/v1/session/group?access=${access}`, {
      body: { mode: 'equal', members: [{ name: 'Ann' }, { name: 'Bob' }] },
    });
    assert.equal(group.status, 200, group.text);
    await eventually(async () => orderOf(ref)?.session_id === sessionId, 10_000, 'group.created at the shop');
    for (const member of group.body.group.members as { share_id: string }[]) await payOk(t, member.share_id);
    await eventually(async () => orderOf(ref)?.status === 'paid', 10_000, 'group.funded at the shop');
    assert.equal(logged.filter((line) => line.includes(`order ${ref} paid`)).length, 1);

    const orders = await fetch(`${base}/orders`).then((r) => r.text());
    assert.match(
      orders,
      new RegExp(
        `${ref}</th><td>[^<]+</td><td><span class="badge badge-paid">paid</span></td><td class="session">${sessionId}<`,
      ),
    );
    const success = await fetch(`${base}/success?order=${ref}`);
    assert.equal(success.status, 200);
    assert.match(await success.text(), /Order confirmed/);

    // The same event again (same webhook-id): answered 2xx, applied once.
    const events = await t.request('GET', `/v1/events?session_id=${sessionId}&type=group.funded`, {
      key: t.merchant.secretKey,
    });
    const [funded] = events.body.data as { id: string }[];
    assert.ok(funded);
    const again = await t.request('POST', `/v1/events/${funded.id}/redeliver`, { key: t.merchant.secretKey });
    assert.equal(again.status, 200, again.text);
    await eventually(
      async () => {
        const read = await t.request('GET', `/v1/events/${funded.id}`, { key: t.merchant.secretKey });
        const deliveries = read.body.deliveries as { state: string }[];
        return deliveries.length === 2 && deliveries.every((d) => d.state === 'delivered');
      },
      10_000,
      'the redelivery answered 2xx',
    );
    assert.equal(orderOf(ref)?.status, 'paid');
    assert.equal(logged.filter((line) => line.includes(`order ${ref} paid`)).length, 1);

    // A paid order is not signed again.
    const more = await sign(priceCart([{ id: 'sku_lantern', quantity: 3 }], ref));
    assert.equal(more.status, 400);
    assert.match(more.body.error as string, /paid/);
  });

  test('a cancelled session cancels its order', async () => {
    const { ref, sessionId } = await checkout([{ id: 'sku_stove', quantity: 1 }]);
    const cancel = await t.request('POST', `/v1/sessions/${sessionId}/cancel`, { key: t.merchant.secretKey });
    assert.equal(cancel.status, 200, cancel.text);
    await eventually(async () => orderOf(ref)?.status === 'cancelled', 10_000, 'group.cancelled at the shop');
    assert.equal(orderOf(ref)?.session_id, sessionId);
  });

  test('a forged or altered webhook is refused 400 and changes nothing', async () => {
    const { ref, sessionId } = await checkout([{ id: 'sku_tent', quantity: 1 }]);
    await eventually(async () => orderOf(ref)?.session_id === sessionId, 10_000, 'group.created at the shop');
    const before = JSON.stringify(orderOf(ref));
    const payload = {
      id: 'evt_forged_1',
      type: 'group.funded',
      timestamp: new Date().toISOString(),
      data: { session_id: sessionId, order_ref: ref, status: 'funded', total_cents: 1 },
    };
    const post = (body: string, headers: Record<string, string>) =>
      fetch(`${base}/webhooks/group-checkout`, { method: 'POST', headers, body });

    // Signed with a secret that is not the endpoint's.
    const forged = generateTestHeaders(payload, 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw');
    assert.equal((await post(forged.body, forged.headers)).status, 400);
    // No signature at all.
    assert.equal((await post(forged.body, { 'content-type': 'application/json' })).status, 400);
    // A body changed after signing (here: re-serialized with spaces), under a real event's headers.
    const events = await t.request('GET', `/v1/events?session_id=${sessionId}`, {
      key: t.merchant.secretKey,
    });
    const real = events.body.data[0];
    const delivered = await t.request('GET', `/v1/events/${real.id}`, { key: t.merchant.secretKey });
    assert.ok(delivered.body.deliveries.length > 0);
    const altered = JSON.stringify({ ...payload, id: real.id }, null, 1);
    const stale = generateTestHeaders({ ...payload, id: real.id }, 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw');
    assert.equal((await post(altered, stale.headers)).status, 400);

    assert.equal(JSON.stringify(orderOf(ref)), before);
    assert.equal(orderOf(ref)?.status, 'pending');
    assert.ok(logged.some((line) => line.startsWith('webhook refused')));
  });

  test('the pages answer with headings, labels, the SDK from the service and a strict CSP', async () => {
    const home = await fetch(`${base}/`);
    assert.equal(home.status, 200);
    const html = await home.text();
    assert.match(home.headers.get('content-type') ?? '', /^text\/html/);
    const csp = home.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'self'/);
    assert.match(csp, new RegExp(`script-src 'self' ${t.baseUrl}(;|$)`));
    // The API and the pages share an origin here: it is listed once.
    assert.match(csp, new RegExp(`connect-src 'self' ${t.baseUrl};`));
    assert.match(csp, /object-src 'none'/);
    assert.match(html, /<html lang="en">/);
    assert.match(html, /<meta name="viewport" content="width=device-width, initial-scale=1">/);
    assert.match(html, /<h1>/);
    assert.ok(html.includes(`<script src="${t.baseUrl}/sdk/v1/group-checkout.js" defer></script>`));
    assert.match(html, /role="status"/);
    assert.doesNotMatch(html, /<script>/, 'no inline script');
    for (const id of ['sku_tent', 'sku_lantern', 'sku_stove']) {
      assert.match(html, new RegExp(`<label for="qty-${id}">`));
      assert.match(html, new RegExp(`<input id="qty-${id}"`));
    }
    assert.ok(!html.includes(t.merchant.merchant.signingSecret), 'the signing secret never reaches the page');
    assert.ok(html.includes(t.merchant.publishableKey));

    const orders = await fetch(`${base}/orders`);
    assert.equal(orders.status, 200);
    assert.match(await orders.text(), /<h1>Orders<\/h1>[\s\S]*<caption/);
    const unknown = await fetch(`${base}/success?order=ORD-NOPE`);
    assert.equal(unknown.status, 404);
    assert.match(await unknown.text(), /Order not found/);
    for (const asset of ['/shop.js', '/shop.css']) assert.equal((await fetch(`${base}${asset}`)).status, 200);
    // The tab shows the shop's own icon.
    assert.match(html, /<link rel="icon" href="\/favicon.svg" type="image\/svg\+xml">/);
    const icon = await fetch(`${base}/favicon.svg`);
    assert.equal(icon.status, 200);
    assert.equal(icon.headers.get('content-type'), 'image/svg+xml');
    assert.match(await icon.text(), /^<svg /);
    assert.equal((await fetch(`${base}/nowhere`)).status, 404);
  });

  test('with the API and the pages on two origins, the CSP lets the page connect to both', async () => {
    const apart = createShop({
      merchantId: 'svc_merch_x',
      publishableKey: 'svc_pk_test_x',
      signingSecret: 'svc_sig_test_x',
      webhookSecret: 'whsec_eA==',
      apiBaseUrl: 'https://api.example.com/v1',
      payBaseUrl: 'https://pay.example.com',
      log: () => {},
    });
    const port = await apart.listen(0);
    try {
      const csp = (await fetch(`http://127.0.0.1:${port}/`)).headers.get('content-security-policy') ?? '';
      assert.match(csp, /connect-src 'self' https:\/\/api\.example\.com https:\/\/pay\.example\.com;/);
    } finally {
      await apart.close();
    }
  });

  test("the page's script builds a cart the shop signs and uses the SDK as documented", async () => {
    const script = readFileSync(new URL('../public/shop.js', import.meta.url), 'utf8');
    const html = await fetch(`${base}/`).then((r) => r.text());
    const settingsText = /<script type="application\/json" id="shop-settings">(.*?)<\/script>/s.exec(
      html,
    )?.[1];
    assert.ok(settingsText);
    // A stand-in DOM: the elements the script reads and writes, by id.
    const elements = new Map<string, Record<string, unknown>>();
    const element = (id: string) => {
      if (!elements.has(id)) {
        elements.set(id, {
          id,
          textContent: id === 'shop-settings' ? settingsText : '',
          value: id === 'qty-sku_tent' ? '1' : id === 'qty-sku_lantern' ? '3' : '0',
          setAttribute() {},
          addEventListener() {},
        });
      }
      return elements.get(id);
    };
    const calls: { init?: Record<string, unknown>; button?: Record<string, unknown>; mounted?: unknown } = {};
    const sdk = {
      init: (options: Record<string, unknown>) => {
        calls.init = options;
      },
      button: (options: Record<string, unknown>) => {
        calls.button = options;
        return { mount: (target: unknown) => (calls.mounted = target), destroy() {} };
      },
    };
    const window = { location: { origin: shop.url }, GroupCheckout: sdk };
    runInNewContext(script, {
      document: { getElementById: element },
      window,
      fetch: (path: string, init: RequestInit) => fetch(`${base}${path}`, init),
      Intl,
      encodeURIComponent,
      Number,
      JSON,
      Error,
    });
    await eventually(async () => calls.mounted !== undefined, 5000, 'the button mounted');
    const init = calls.init as Record<string, unknown>;
    assert.equal(init.merchantId, t.merchant.merchant.id);
    assert.equal(init.publishableKey, t.merchant.publishableKey);
    assert.equal(init.apiBaseUrl, `${t.baseUrl}/v1`);
    assert.equal(init.payBaseUrl, t.baseUrl);
    const button = calls.button as {
      cart: Cart;
      success_url: string;
      cancel_url: string;
      callbacks: Record<string, unknown>;
    };
    assert.equal(calls.mounted, elements.get('pay'));
    const ref = button.cart.metadata?.order_ref as string;
    assert.equal(elements.get('order-ref')?.textContent, ref);
    assert.deepEqual(
      JSON.parse(JSON.stringify(button.cart)),
      priceCart(
        [
          { id: 'sku_tent', quantity: 1 },
          { id: 'sku_lantern', quantity: 3 },
        ],
        ref,
      ),
    );
    assert.equal(button.success_url, `${shop.url}/success?order=${ref}`);
    assert.match(button.cancel_url, new RegExp(`^${shop.url}/\\?left=ORD-`));
    assert.deepEqual(Object.keys(button.callbacks).sort(), [
      'onError',
      'onGroupCancelled',
      'onGroupCreated',
      'onGroupExpired',
      'onGroupFunded',
    ]);
    // getSignature, as the SDK would call it, signs what the service accepts.
    const signature = await (init.getSignature as (cart: Cart) => Promise<string>)(button.cart);
    const created = await createFromPage(button.cart, signature);
    assert.equal(created.status, 200, created.text);
    // Callbacks say what happened in the status line.
    (button.callbacks.onGroupFunded as (id: string, ref: string) => void)(created.body.session_id, ref);
    assert.match(
      String(elements.get('status')?.textContent),
      new RegExp(`Every share is paid for order ${ref}`),
    );
    (button.callbacks.onError as (e: unknown) => void)({ code: 'invalid_signature', message: 'bad' });
    assert.match(String(elements.get('status')?.textContent), /failed: bad \(invalid_signature\)/);
  });
});
