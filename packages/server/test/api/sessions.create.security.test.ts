import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Cart, canonicalCart, signCart } from '@group-checkout/node';
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { assertError } from '../helpers/errors.ts';
import { listedSessionIds, SESSION_ENV, sampleCart } from '../helpers/sessions.ts';
import {
  hmacHex,
  sortedItems,
  sortedJson,
  utf16Cart,
  withImages,
  withoutFees,
  withoutImages,
} from '../helpers/signing.ts';

const CHECKLIST_START = 'Take the cart exactly as sent and remove image_url from every item.';

for (const dialect of DIALECTS) {
  describe(`POST /v1/sessions on ${dialect.name}: keys and cart signatures`, { skip: dialect.skip }, () => {
    let t: TestApp;
    let m: TestMerchant;
    let closed: TestMerchant;
    before(async () => {
      t = await startTestApp(dialect, { env: SESSION_ENV });
      m = await t.createMerchant({ headless: true });
      closed = await t.createMerchant({ headless: false });
    });
    after(() => t?.close());

    // A publishable key is used from the merchant's page, whose Origin the browser sends.
    const post = (key: string, body: unknown, headers?: Record<string, string>) =>
      t.request('POST', '/v1/sessions', {
        key,
        body,
        headers: key.startsWith('svc_pk_') ? { origin: 'https://shop.example', ...headers } : headers,
      });

    /** A 400 invalid_signature whose details name `first` first, then the four-step checklist. */
    async function refusedSignature(key: string, cart: Cart, signature: string, first: string | RegExp) {
      const res = await post(key, { cart, signature });
      assertError(res, 400, 'invalid_signature');
      assert.equal(res.body.error, 'The cart signature does not match the cart.');
      const details: string[] = res.body.details;
      if (typeof first === 'string') assert.equal(details[0], first);
      else assert.match(details[0] as string, first);
      assert.equal(details[1], CHECKLIST_START);
      assert.equal(details.length, 5, details.join('\n'));
      return details;
    }

    test('a publishable key without a signature is 400 invalid_signature with the checklist', async () => {
      const res = await post(m.publishableKey, { cart: sampleCart() });
      assertError(res, 400, 'invalid_signature');
      assert.match(res.body.error, /signature is required with a publishable key/);
      assert.equal(res.body.details[0], CHECKLIST_START);
      assert.equal(res.body.details.length, 4);
    });

    test('a secret key without a signature is 403 unless the merchant has the headless API', async () => {
      const res = await post(closed.secretKey, { cart: sampleCart() });
      assertError(res, 403, 'headless_not_enabled');
      // It says how the headless API is enabled, and what to do until then.
      assert.equal(
        res.body.error,
        'Sessions without a cart signature need the headless API, which is not enabled for this merchant: ' +
          'it is enabled after a technical review, when the operator creates the merchant with ' +
          '`group-checkout merchant create --headless`. Until then, sign the cart: send signature (or ' +
          'X-Service-Signature), the HMAC of the cart made with your cart signing secret (svc_sig_…).',
      );
      // Doing what it says works (on a merchant of its own, so that `closed` keeps no sessions).
      const unreviewed = await t.createMerchant({ name: 'Unreviewed Shop', headless: false });
      const cart = sampleCart();
      const signed = await post(unreviewed.secretKey, {
        cart,
        signature: signCart(cart, unreviewed.merchant.signingSecret),
      });
      assert.equal(signed.status, 200, signed.text);
      const ok = await post(m.secretKey, { cart: sampleCart() });
      assert.equal(ok.status, 200, ok.text);
    });

    test('a secret key with a wrong signature is 400 even when headless is enabled', async () => {
      const cart = sampleCart();
      const res = await post(m.secretKey, { cart, signature: signCart(cart, closed.merchant.signingSecret) });
      assertError(res, 400, 'invalid_signature');
      // No mistake recognized: just the checklist.
      assert.equal(res.body.details[0], CHECKLIST_START);
      assert.equal(res.body.details.length, 4);
    });

    test('a signature of the cart before a price changed is refused', async () => {
      const signed = sampleCart();
      const sent = sampleCart({
        items: [{ ...signed.items[0]!, unit_price: 1 }, signed.items[1]!],
        total: 2002,
      });
      const res = await post(m.publishableKey, {
        cart: sent,
        signature: signCart(signed, m.merchant.signingSecret),
      });
      assertError(res, 400, 'invalid_signature');
    });

    test('diagnosis: signed with the secret API key', async () => {
      const cart = sampleCart();
      await refusedSignature(
        closed.secretKey,
        cart,
        hmacHex(closed.secretKey, canonicalCart(cart)),
        'The signature was made with your secret API key; sign with the cart signing secret (svc_sig_…) instead.',
      );
    });

    test('diagnosis: signed with the publishable key', async () => {
      const cart = sampleCart();
      await refusedSignature(
        m.publishableKey,
        cart,
        hmacHex(m.publishableKey, canonicalCart(cart)),
        /^The signature was made with your publishable key; sign with the cart signing secret/,
      );
    });

    test('diagnosis: image_url left in', async () => {
      const cart = withImages(sampleCart());
      await refusedSignature(
        m.publishableKey,
        cart,
        hmacHex(m.merchant.signingSecret, sortedJson(sortedItems(cart))),
        'image_url was left in the signed items; remove it from every item before signing.',
      );
    });

    test('diagnosis: items left unsorted', async () => {
      const cart = sampleCart();
      assert.notDeepEqual(sortedItems(cart).items, cart.items, 'the sample cart is sent out of id order');
      await refusedSignature(
        m.publishableKey,
        cart,
        hmacHex(m.merchant.signingSecret, sortedJson(cart)),
        /^The items were signed in request order; sort them by id/,
      );
    });

    test('diagnosis: items sorted by code point instead of UTF-16 code units', async () => {
      const cart: Cart = utf16Cart();
      // Sorted by code point the order above stays; that is the request order, not the signed one.
      await refusedSignature(
        m.publishableKey,
        cart,
        hmacHex(m.merchant.signingSecret, sortedJson(cart)),
        /^The items were signed in request order/,
      );
    });

    test('diagnosis: fees left out', async () => {
      const cart = sampleCart({ total: 10_500, fees: [{ id: 'svc', label: 'Service fee', amount: 500 }] });
      await refusedSignature(
        m.publishableKey,
        cart,
        hmacHex(m.merchant.signingSecret, canonicalCart(withoutFees(cart))),
        'fees were left out of the signed cart; sign the whole cart, fees included.',
      );
    });

    test('diagnosis: pretty-printed JSON', async () => {
      const cart = sampleCart();
      await refusedSignature(
        m.publishableKey,
        cart,
        hmacHex(m.merchant.signingSecret, JSON.stringify(JSON.parse(canonicalCart(cart)), null, 2)),
        'The signed JSON was indented; serialize without any whitespace.',
      );
    });

    test('diagnosis: keys left unsorted (plain JSON.stringify)', async () => {
      // Images and items out of order, both handled right: the unsorted keys are the only mistake.
      const cart = withImages(sampleCart());
      await refusedSignature(
        m.publishableKey,
        cart,
        hmacHex(m.merchant.signingSecret, JSON.stringify(withoutImages(sortedItems(cart)))),
        /^The object keys were not sorted/,
      );
    });

    test('a base64 signature is named as such', async () => {
      const cart = sampleCart();
      const base64 = Buffer.from(signCart(cart, m.merchant.signingSecret), 'hex').toString('base64');
      const res = await post(m.publishableKey, { cart, signature: base64 });
      assertError(res, 400, 'invalid_signature');
      assert.equal(
        res.body.details[0],
        'signature must be 64 hexadecimal characters; this one is base64, so encode the HMAC as hex instead',
      );
    });

    test('a secret key sent from a browser (with Origin) is 403, and creates nothing', async () => {
      const res = await post(m.secretKey, { cart: sampleCart() }, { origin: 'https://shop.example' });
      assertError(res, 403, 'secret_key_from_browser');
      assert.equal(res.headers.get('access-control-allow-origin'), null);
    });

    test('a publishable key from a browser gets CORS on success and on error', async () => {
      const cart = sampleCart();
      const headers = { origin: 'https://shop.example' };
      const ok = await post(
        m.publishableKey,
        { cart, signature: signCart(cart, m.merchant.signingSecret) },
        headers,
      );
      assert.equal(ok.status, 200, ok.text);
      assert.equal(ok.headers.get('access-control-allow-origin'), 'https://shop.example');
      const bad = await post(m.publishableKey, { cart }, headers);
      assertError(bad, 400, 'invalid_signature');
      assert.equal(bad.headers.get('access-control-allow-origin'), 'https://shop.example');
    });

    test('another merchant’s publishable key cannot use this merchant’s signature', async () => {
      const cart = sampleCart();
      const res = await post(closed.publishableKey, {
        cart,
        signature: signCart(cart, m.merchant.signingSecret),
      });
      assertError(res, 400, 'invalid_signature');
    });

    test('only the successful requests created sessions', async () => {
      // m: the headless create, the CORS success; closed: nothing.
      assert.equal((await listedSessionIds(t, m)).length, 2);
      assert.deepEqual(await listedSessionIds(t, closed), []);
    });
  });
}
