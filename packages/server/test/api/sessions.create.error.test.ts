import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Cart } from '@group-checkout/node';
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { assertError } from '../helpers/errors.ts';
import { eventRows, listedSessionIds, SESSION_ENV, sampleCart } from '../helpers/sessions.ts';

for (const dialect of DIALECTS) {
  describe(`POST /v1/sessions on ${dialect.name}: requests that are refused`, { skip: dialect.skip }, () => {
    let t: TestApp;
    // A merchant of its own, so that the last test can tell nothing at all was created for it.
    let m: TestMerchant;
    before(async () => {
      t = await startTestApp(dialect, { env: SESSION_ENV });
      m = await t.createMerchant({ headless: true });
    });
    after(() => t?.close());

    /** Headless create with the secret key: every refusal here is about the body, not the signature. */
    const create = (body: unknown) => t.request('POST', '/v1/sessions', { key: m.secretKey, body });

    const refused = async (body: unknown, code: string, details: string[]) => {
      const res = await create(body);
      assertError(res, 400, code);
      assert.deepEqual(res.body.details, details);
      assert.equal(res.body.error, details[0]);
      return res;
    };

    const cartWith = (change: (cart: Cart) => void): Cart => {
      const cart = structuredClone(sampleCart());
      change(cart);
      return cart;
    };

    test('quantity 0 is named by its exact path', async () => {
      await refused(
        {
          cart: cartWith((c) => {
            c.items[0]!.quantity = 0;
          }),
        },
        'invalid_cart',
        ['cart.items[0].quantity must be at least 1'],
      );
    });

    test('a total that is not the sum names the computed sum', async () => {
      await refused({ cart: sampleCart({ total: 9_999 }) }, 'invalid_cart', [
        'cart.total is 9999 but the items, tax, shipping and fees add up to 10000',
      ]);
    });

    test('fees count toward the total', async () => {
      await refused(
        { cart: sampleCart({ fees: [{ id: 'svc', label: 'Service', amount: 250 }] }) },
        'invalid_cart',
        ['cart.total is 10000 but the items, tax, shipping and fees add up to 10250'],
      );
    });

    test('a fee line with an empty id or label is refused, naming the field', async () => {
      const fee = (id: string, label: string) =>
        sampleCart({ total: 10_250, fees: [{ id, label, amount: 250 }] });
      const label = await create({ cart: fee('svc', '') });
      assertError(label, 400, 'invalid_cart');
      assert.match(label.body.error, /^cart\.fees\[0\]\.label /);
      const id = await create({ cart: fee('', 'Service') });
      assertError(id, 400, 'invalid_cart');
      assert.match(id.body.error, /^cart\.fees\[0\]\.id /);
    });

    test('an unknown currency, and one in capitals', async () => {
      await refused({ cart: sampleCart({ currency: 'xyz' }) }, 'invalid_cart', [
        'cart.currency must be a lowercase ISO 4217 code such as "usd" or "eur", got "xyz"',
      ]);
      await refused({ cart: sampleCart({ currency: 'USD' }) }, 'invalid_cart', [
        'cart.currency must be a lowercase ISO 4217 code such as "usd" or "eur", got "USD"',
      ]);
      const long = await create({ cart: sampleCart({ currency: 'usdd' }) });
      assertError(long, 400, 'invalid_cart');
      assert.match(long.body.error, /^cart\.currency /);
    });

    test('a currency written as a word gets the ISO 4217 hint, not a length limit', async () => {
      await refused({ cart: sampleCart({ currency: 'dollars' }) }, 'invalid_cart', [
        'cart.currency must be a lowercase ISO 4217 code such as "usd" or "eur", got "dollars"',
      ]);
    });

    test('an image_url over http', async () => {
      await refused(
        {
          cart: cartWith((c) => {
            c.items[1]!.image_url = 'http://cdn.example.com/cake.png';
          }),
        },
        'invalid_cart',
        ['cart.items[1].image_url must be an https URL'],
      );
    });

    test('unknown fields, in the cart, an item and the body', async () => {
      await refused({ cart: { ...sampleCart(), discount: 5 } }, 'invalid_cart', [
        'cart.discount is not a known field',
      ]);
      await refused(
        {
          cart: cartWith((c) => {
            (c.items[0] as unknown as Record<string, unknown>).sku = 'x';
          }),
        },
        'invalid_cart',
        ['cart.items[0].sku is not a known field'],
      );
      await refused({ cart: sampleCart(), coupon: 'FREE' }, 'invalid_request', [
        'coupon is not a known field',
      ]);
    });

    test('more than 100 items; 100 are fine', async () => {
      const items = (n: number) =>
        Array.from({ length: n }, (_, i) => ({ id: `i${i}`, name: 'Pin', quantity: 1, unit_price: 1 }));
      await refused({ cart: { total: 101, currency: 'usd', items: items(101) } }, 'invalid_cart', [
        'cart.items must have at most 100 elements',
      ]);
      const ok = await t.request('POST', '/v1/sessions', {
        key: t.merchant.secretKey,
        body: { cart: { total: 100, currency: 'usd', items: items(100) } },
      });
      assert.equal(ok.status, 200, ok.text);
    });

    test('no items', async () => {
      await refused({ cart: sampleCart({ items: [], total: 1000 }) }, 'invalid_cart', [
        'cart.items must have at least 1 element',
      ]);
    });

    test('metadata: 50 keys, keys of 40 characters and values of 500 at most, string values', async () => {
      const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'v']));
      await refused({ cart: sampleCart({ metadata: keys(51) }) }, 'invalid_cart', [
        'cart.metadata must have at most 50 keys',
      ]);
      await refused({ cart: sampleCart({ metadata: { ['k'.repeat(41)]: 'v' } }) }, 'invalid_cart', [
        `cart.metadata key "${'k'.repeat(41)}" must be at most 40 characters`,
      ]);
      await refused({ cart: sampleCart({ metadata: { note: 'v'.repeat(501) } }) }, 'invalid_cart', [
        'cart.metadata.note must be at most 500 characters',
      ]);
      await refused(
        { cart: { ...sampleCart(), metadata: { order_ref: 1001 } as unknown as Record<string, string> } },
        'invalid_cart',
        ['cart.metadata.order_ref must be a string'],
      );
      const ok = await t.request('POST', '/v1/sessions', {
        key: t.merchant.secretKey,
        body: { cart: sampleCart({ metadata: { ...keys(49), ['k'.repeat(40)]: 'v'.repeat(500) } }) },
      });
      assert.equal(ok.status, 200, ok.text);
    });

    test('negative tax, negative shipping, a negative price and a fractional quantity', async () => {
      await refused({ cart: sampleCart({ tax: -1 }) }, 'invalid_cart', ['cart.tax must be at least 0']);
      await refused({ cart: sampleCart({ shipping: -400, total: 9_200 }) }, 'invalid_cart', [
        'cart.shipping must be at least 0',
      ]);
      await refused(
        {
          cart: cartWith((c) => {
            c.items[1]!.unit_price = -1000;
          }),
        },
        'invalid_cart',
        ['cart.items[1].unit_price must be at least 0'],
      );
      await refused(
        {
          cart: cartWith((c) => {
            c.items[0]!.quantity = 1.5;
          }),
        },
        'invalid_cart',
        ['cart.items[0].quantity must be an integer'],
      );
    });

    test('amounts as strings are not coerced', async () => {
      const res = await create({ cart: { ...sampleCart(), total: '10000' } });
      assertError(res, 400, 'invalid_cart');
      assert.deepEqual(res.body.details, ['cart.total must be an integer']);
    });

    test('missing cart', async () => {
      await refused({}, 'invalid_request', ['cart is required']);
    });

    test('group_config: min above max, max above 50, min below 1', async () => {
      await refused({ cart: sampleCart(), group_config: { min_size: 5, max_size: 3 } }, 'invalid_request', [
        'group_config.min_size (5) must not be greater than group_config.max_size (3)',
      ]);
      await refused({ cart: sampleCart(), group_config: { max_size: 51 } }, 'invalid_request', [
        'group_config.max_size must be at most 50',
      ]);
      await refused({ cart: sampleCart(), group_config: { min_size: 0 } }, 'invalid_request', [
        'group_config.min_size must be at least 1',
      ]);
      // Each message names the field that was sent, not a default that followed from it.
      await refused({ cart: sampleCart(), group_config: { min_size: 60 } }, 'invalid_request', [
        'group_config.min_size must be at most 50',
      ]);
      await refused({ cart: sampleCart(), group_config: { max_size: 0 } }, 'invalid_request', [
        'group_config.max_size must be at least 1',
      ]);
    });

    test('group_config: default_mode outside allowed_modes, and unknown modes', async () => {
      await refused(
        {
          cart: sampleCart(),
          group_config: { default_mode: 'custom', allowed_modes: ['equal', 'itemized'] },
        },
        'invalid_request',
        ['group_config.default_mode "custom" must be one of group_config.allowed_modes (equal, itemized)'],
      );
      // An unknown mode is answered with the list of modes, never the validator's own words.
      await refused({ cart: sampleCart(), group_config: { default_mode: 'dutch' } }, 'invalid_request', [
        'group_config.default_mode must be one of "equal", "itemized", "custom", "percentage", "host-pays" (got "dutch")',
      ]);
      await refused(
        { cart: sampleCart(), group_config: { allowed_modes: ['equal', 'dutch'] } },
        'invalid_request',
        [
          'group_config.allowed_modes[1] must be one of "equal", "itemized", "custom", "percentage", "host-pays" (got "dutch")',
        ],
      );
      await refused({ cart: sampleCart(), group_config: { default_mode: 3 } }, 'invalid_request', [
        'group_config.default_mode must be a string',
        'group_config.default_mode must be one of "equal", "itemized", "custom", "percentage", "host-pays"',
      ]);
      await refused({ cart: sampleCart(), group_config: { allowed_modes: [] } }, 'invalid_request', [
        'group_config.allowed_modes must have at least 1 element',
      ]);
    });

    test('group_config: expiry_hours 0 and 169', async () => {
      for (const hours of [0, 169]) {
        await refused({ cart: sampleCart(), group_config: { expiry_hours: hours } }, 'invalid_request', [
          'group_config.expiry_hours must be from 1 to 168',
        ]);
      }
    });

    test('group_config: unknown fields', async () => {
      await refused({ cart: sampleCart(), group_config: { size: 3 } }, 'invalid_request', [
        'group_config.size is not a known field',
      ]);
    });

    test('success_url, cancel_url and webhook_url over http outside localhost', async () => {
      await refused(
        {
          cart: sampleCart(),
          success_url: 'http://shop.example/thanks',
          cancel_url: 'https://shop.example/cart',
          webhook_url: 'http://shop.example/hooks',
        },
        'invalid_request',
        [
          'success_url must be an https URL (http is allowed only for localhost in the sandbox)',
          'webhook_url must be an https URL (http is allowed only for localhost in the sandbox)',
        ],
      );
      await refused({ cart: sampleCart(), cancel_url: 'shop.example/cart' }, 'invalid_request', [
        'cancel_url must be an absolute URL',
      ]);
      await refused({ cart: sampleCart(), success_url: 'javascript:alert(1)' }, 'invalid_request', [
        'success_url must be an absolute URL',
      ]);
    });

    test('customer: a malformed email', async () => {
      await refused({ cart: sampleCart(), customer: { email: 'not-an-email' } }, 'invalid_request', [
        'customer.email must be an email address such as name@example.com',
      ]);
    });

    test('a body that is not JSON is 400, not 500', async () => {
      for (const rawBody of ['{"cart":', 'cart=1']) {
        const res = await t.request('POST', '/v1/sessions', { key: m.secretKey, rawBody });
        assertError(res, 400, 'invalid_json', JSON.stringify(rawBody));
      }
      for (const rawBody of ['', '[1]', 'null']) {
        const res = await t.request('POST', '/v1/sessions', { key: m.secretKey, rawBody });
        assertError(res, 400, 'invalid_request', JSON.stringify(rawBody));
        assert.equal(res.body.error, 'body must be an object');
      }
    });

    test('nothing was created for any of the refused requests', async () => {
      assert.deepEqual(await listedSessionIds(t, m), []);
      const events = await t.deps.db.kysely
        .selectFrom('events')
        .select('id')
        .where('merchant_id', '=', m.merchant.id)
        .execute();
      assert.deepEqual(events, []);
      const sessions = await t.deps.db.kysely
        .selectFrom('sessions')
        .select('id')
        .where('merchant_id', '=', m.merchant.id)
        .execute();
      assert.deepEqual(sessions, []);
      assert.ok((await eventRows(t)).every((e) => e.merchant_id !== m.merchant.id));
    });
  });

  describe(`POST /v1/sessions on ${dialect.name} in production`, { skip: dialect.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(dialect, { env: { ...SESSION_ENV, SERVICE_ENV: 'production' } });
    });
    after(() => t?.close());

    test('http URLs are refused even on localhost', async () => {
      const res = await t.request('POST', '/v1/sessions', {
        key: t.merchant.secretKey,
        body: { cart: sampleCart(), success_url: 'http://localhost:3000/thanks' },
      });
      assertError(res, 400, 'invalid_request');
      assert.deepEqual(res.body.details, ['success_url must be an https URL']);
      assert.deepEqual(await listedSessionIds(t), []);
    });

    test('a webhook_url reaching a private, loopback or link-local address is refused (docs/api.md#events)', async () => {
      for (const url of [
        'https://127.0.0.1/hooks',
        'https://10.1.2.3/hooks',
        'https://169.254.169.254/latest/meta-data',
        'https://[::1]/hooks',
      ]) {
        const res = await t.request('POST', '/v1/sessions', {
          key: t.merchant.secretKey,
          body: { cart: sampleCart(), webhook_url: url },
        });
        assertError(res, 400, 'invalid_request', url);
        assert.deepEqual(res.body.details, ['webhook_url must resolve to public addresses only']);
      }
      const ok = await t.request('POST', '/v1/sessions', {
        key: t.merchant.secretKey,
        body: { cart: sampleCart(), webhook_url: 'https://93.184.216.34/hooks' },
      });
      assert.equal(ok.status, 200, ok.text);
      assert.equal((await listedSessionIds(t)).length, 1);
    });
  });
}
