import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type Cart, signCart } from '@group-checkout/node';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { HOUR_MS } from '../helpers/clock.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { assertError } from '../helpers/errors.ts';
import {
  createSession,
  eventRows,
  organizerToken,
  PAY_URL,
  SESSION_ENV,
  sampleCart,
} from '../helpers/sessions.ts';
import { utf16Cart, withImages } from '../helpers/signing.ts';

const VECTORS = fileURLToPath(new URL('../../../node/test/fixtures/cart-signatures.json', import.meta.url));
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

for (const dialect of DIALECTS) {
  describe(`POST /v1/sessions on ${dialect.name}: sessions that are created`, { skip: dialect.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(dialect, { env: SESSION_ENV });
    });
    after(() => t?.close());

    const detail = async (sessionId: string) => {
      const res = await t.request('GET', `/v1/sessions/${sessionId}`, { key: t.merchant.secretKey });
      assert.equal(res.status, 200, res.text);
      return res.body;
    };

    test('a cart signed with the signing secret and a publishable key opens a pending session', async () => {
      const cart = sampleCart();
      const res = await t.request('POST', '/v1/sessions', {
        key: t.merchant.publishableKey,
        headers: { origin: 'https://shop.example' },
        body: { cart, signature: signCart(cart, t.merchant.merchant.signingSecret) },
      });
      assert.equal(res.status, 200, res.text);
      const body = res.body;
      assert.deepEqual(Object.keys(body).sort(), [
        'consumer_fee_rate',
        'expires_at',
        'group_access_token',
        'merchant_fee_rate',
        'request_id',
        'session_id',
        'session_url',
        'status',
      ]);
      assert.match(body.request_id, /^req_/);
      assert.equal(res.headers.get('x-request-id'), body.request_id);
      assert.match(body.session_id, /^gs_[0-9A-Za-z]{17,}$/);
      assert.equal(body.status, 'pending');
      assert.equal(body.merchant_fee_rate, 0.0201);
      assert.equal(body.consumer_fee_rate, 0.01);
      assert.match(body.group_access_token, /^gat_[0-9A-Za-z]{22,}$/);

      const url = new URL(body.session_url);
      assert.equal(`${url.origin}${url.pathname}`, `${PAY_URL}/session/${body.session_id}`);
      assert.deepEqual([...url.searchParams.keys()], ['access']);
      assert.match(url.searchParams.get('access') as string, /^at_[0-9A-Za-z]{22,}$/);

      assert.match(body.expires_at, ISO_UTC);
      const shown = await detail(body.session_id);
      assert.equal(shown.status, 'pending');
      assert.equal(shown.expires_at, body.expires_at);
      assert.equal(Date.parse(body.expires_at) - Date.parse(shown.created_at), 48 * HOUR_MS);
      const now = Date.now();
      assert.ok(Math.abs(Date.parse(shown.created_at) - now) < 60_000, 'created now');
    });

    test('the signature is also taken from X-Service-Signature, in upper-case hex', async () => {
      const cart = sampleCart({ metadata: { order_ref: 'ORD-HEADER' } });
      const res = await t.request('POST', '/v1/sessions', {
        key: t.merchant.publishableKey,
        headers: {
          origin: 'https://shop.example',
          'x-service-signature': signCart(cart, t.merchant.merchant.signingSecret).toUpperCase(),
        },
        body: { cart },
      });
      assert.equal(res.status, 200, res.text);
      assert.equal((await detail(res.body.session_id)).order_ref, 'ORD-HEADER');
    });

    test('an upper-case signature in the body is accepted too', async () => {
      const cart = sampleCart();
      const res = await t.request('POST', '/v1/sessions', {
        key: t.merchant.publishableKey,
        headers: { origin: 'https://shop.example' },
        body: { cart, signature: signCart(cart, t.merchant.merchant.signingSecret).toUpperCase() },
      });
      assert.equal(res.status, 200, res.text);
    });

    test('a headless merchant creates a session with the secret key and no signature', async () => {
      const created = await createSession(t, { via: 'secret' });
      assert.equal(created.status, 'pending');
      assert.match(created.session_id, /^gs_/);
    });

    test('a merchant without headless access may still use the secret key with a valid signature', async () => {
      const merchant = await t.createMerchant({ headless: false });
      const cart = sampleCart();
      const res = await t.request('POST', '/v1/sessions', {
        key: merchant.secretKey,
        body: { cart, signature: signCart(cart, merchant.merchant.signingSecret) },
      });
      assert.equal(res.status, 200, res.text);
    });

    test('records one group.created event with the session’s figures', async () => {
      const created = await createSession(t);
      const events = await eventRows(t, created.session_id);
      assert.equal(events.length, 1);
      const [event] = events;
      assert.equal(event?.type, 'group.created');
      assert.equal(event?.merchant_id, t.merchant.merchant.id);
      assert.match(event?.payload.id, /^evt_/);
      assert.equal(event?.payload.id, event?.id);
      assert.equal(event?.payload.type, 'group.created');
      assert.match(event?.payload.timestamp, ISO_UTC);
      assert.deepEqual(event?.payload.data, {
        session_id: created.session_id,
        order_ref: 'ORD-1001',
        status: 'pending',
        total_cents: 10_000,
        currency: 'usd',
        paid_amount: 0,
        pending_amount: 10_000,
        charges: [],
      });
    });

    test('expiry_hours sets expires_at; the group starts with the organizer owing the total', async () => {
      const created = await createSession(t, {
        group_config: { expiry_hours: 1 },
        customer: { name: 'Ada', email: 'ada@example.com', phone: '+1 555 0100' },
      });
      const shown = await detail(created.session_id);
      assert.equal(Date.parse(created.expires_at) - Date.parse(shown.created_at), HOUR_MS);
      assert.equal(shown.group.size, 1);
      assert.equal(shown.group.members[0].name, 'Ada');
      assert.equal(shown.group.members[0].amount_cents, 10_000);
      assert.deepEqual(shown.customer, { name: 'Ada', email: 'ada@example.com', phone: '+1 555 0100' });
    });

    test('group_config defaults: 2 to 10 members, equal, all five modes', async () => {
      const created = await createSession(t);
      const page = await t.request('GET', `/api/v1/session?access=${organizerToken(created)}`);
      assert.equal(page.status, 200, page.text);
      assert.equal(page.body.group.min_size, 2);
      assert.equal(page.body.group.max_size, 10);
      assert.equal(page.body.group.mode, 'equal');
      assert.deepEqual(page.body.group.allowed_modes, [
        'equal',
        'itemized',
        'custom',
        'percentage',
        'host-pays',
      ]);
    });

    test('group_config as given is kept, and default_mode defaults to the first allowed one without equal', async () => {
      const created = await createSession(t, {
        group_config: { min_size: 3, max_size: 4, allowed_modes: ['custom', 'percentage'] },
      });
      const page = await t.request('GET', `/api/v1/session?access=${organizerToken(created)}`);
      assert.equal(page.body.group.min_size, 3);
      assert.equal(page.body.group.max_size, 4);
      assert.equal(page.body.group.mode, 'custom');
      assert.deepEqual(page.body.group.allowed_modes, ['custom', 'percentage']);
    });

    test('a size given alone moves the default of the other', async () => {
      for (const [config, min, max] of [
        [{ min_size: 20 }, 20, 20],
        [{ max_size: 1 }, 1, 1],
        [{ min_size: 1 }, 1, 10],
        [{ max_size: 50 }, 2, 50],
      ] as const) {
        const created = await createSession(t, { group_config: config });
        const page = await t.request('GET', `/api/v1/session?access=${organizerToken(created)}`);
        assert.deepEqual(
          [page.body.group.min_size, page.body.group.max_size],
          [min, max],
          JSON.stringify(config),
        );
      }
    });

    test('item ids are sorted by UTF-16 code units, as JavaScript compares strings', async () => {
      // By code point U+FF61 comes before U+1F600; in UTF-16 the emoji's lead surrogate (D83D) comes first.
      const cart: Cart = utf16Cart();
      const res = await t.request('POST', '/v1/sessions', {
        key: t.merchant.publishableKey,
        headers: { origin: 'https://shop.example' },
        body: { cart, signature: signCart(cart, t.merchant.merchant.signingSecret) },
      });
      assert.equal(res.status, 200, res.text);
      // The same items sent the other way round carry the same signature.
      const reversed = { ...cart, items: [...cart.items].reverse() };
      const again = await t.request('POST', '/v1/sessions', {
        key: t.merchant.publishableKey,
        headers: { origin: 'https://shop.example' },
        body: { cart: reversed, signature: signCart(cart, t.merchant.merchant.signingSecret) },
      });
      assert.equal(again.status, 200, again.text);
    });

    test('every cart signature test vector is accepted over HTTP, in body and header', async () => {
      const { vectors } = JSON.parse(readFileSync(VECTORS, 'utf8')) as {
        vectors: { name: string; secret: string; cart: Cart; signature: string }[];
      };
      assert.ok(vectors.length >= 5);
      for (const vector of vectors) {
        // A merchant whose signing secret is the vector's.
        const merchant = await t.createMerchant();
        await t.deps.db.kysely
          .updateTable('merchants')
          .set({ signing_secret: vector.secret })
          .where('id', '=', merchant.merchant.id)
          .execute();
        const inBody = await t.request('POST', '/v1/sessions', {
          key: merchant.publishableKey,
          headers: { origin: 'https://shop.example' },
          body: { cart: vector.cart, signature: vector.signature },
        });
        assert.equal(inBody.status, 200, `${vector.name}: ${inBody.text}`);
        const inHeader = await t.request('POST', '/v1/sessions', {
          key: merchant.publishableKey,
          headers: { origin: 'https://shop.example', 'x-service-signature': vector.signature },
          body: { cart: vector.cart },
        });
        assert.equal(inHeader.status, 200, `${vector.name}: ${inHeader.text}`);
        const tampered = { ...vector.cart, metadata: { ...vector.cart.metadata, extra: '1' } };
        const refused = await t.request('POST', '/v1/sessions', {
          key: merchant.publishableKey,
          headers: { origin: 'https://shop.example' },
          body: { cart: tampered, signature: vector.signature },
        });
        assertError(refused, 400, 'invalid_signature', vector.name);
      }
    });

    test('a cart with fee lines is created, the fees part of the total', async () => {
      const cart = sampleCart({
        total: 10_650,
        fees: [
          { id: 'svc', label: 'Service fee', amount: 500 },
          { id: 'bag', label: 'Bag', amount: 150 },
        ],
      });
      const created = await createSession(t, { cart });
      assert.equal((await detail(created.session_id)).total_cents, 10_650);
    });

    test('metadata sent in another key order than it was signed in is the same cart', async () => {
      const signed = sampleCart({ metadata: { channel: 'web', order_ref: 'ORD-77', table: '12' } });
      const sent = sampleCart({ metadata: { table: '12', order_ref: 'ORD-77', channel: 'web' } });
      const res = await t.request('POST', '/v1/sessions', {
        key: t.merchant.publishableKey,
        headers: { origin: 'https://shop.example' },
        body: { cart: sent, signature: signCart(signed, t.merchant.merchant.signingSecret) },
      });
      assert.equal(res.status, 200, res.text);
      assert.equal((await detail(res.body.session_id)).order_ref, 'ORD-77');
    });

    test('image_url is not signed: a cart with images keeps the signature of the cart without', async () => {
      const plain = sampleCart();
      const res = await t.request('POST', '/v1/sessions', {
        key: t.merchant.publishableKey,
        headers: { origin: 'https://shop.example' },
        body: { cart: withImages(plain), signature: signCart(plain, t.merchant.merchant.signingSecret) },
      });
      assert.equal(res.status, 200, res.text);
    });

    // From a server (secret key): a browser's key may set none of webhook_url, and redirects only on its
    // own origin (sessions.create.trust.test.ts).
    test('https redirect and webhook URLs are accepted; http on localhost too in the sandbox', async () => {
      for (const urls of [
        {
          success_url: 'https://shop.example/thanks',
          cancel_url: 'https://shop.example/cart',
          webhook_url: 'https://shop.example/hooks/group-checkout',
        },
        {
          success_url: 'http://localhost:3000/thanks',
          cancel_url: 'http://127.0.0.1:3000/cart',
          webhook_url: 'http://localhost:3000/hooks',
        },
      ]) {
        const created = await createSession(t, { via: 'secret', extra: urls });
        const page = await t.request('GET', `/api/v1/session?access=${organizerToken(created)}`);
        assert.equal(page.body.success_url, urls.success_url);
        assert.equal(page.body.cancel_url, urls.cancel_url);
      }
    });

    test('two sessions of one cart are two sessions, with their own tokens', async () => {
      const a = await createSession(t);
      const b = await createSession(t);
      assert.notEqual(a.session_id, b.session_id);
      assert.notEqual(organizerToken(a), organizerToken(b));
      assert.notEqual(a.group_access_token, b.group_access_token);
    });
  });
}
