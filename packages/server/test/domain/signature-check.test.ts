import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import type { Cart } from '@group-checkout/node';
import { signCart } from '@group-checkout/node';
import {
  CART_SIGNATURE_CHECKLIST,
  diagnoseCartSignature,
  type SignatureCheck,
  type SignatureMistake,
} from '../../src/domain/signature-check.ts';
import { hmacHex, sortedItems, sortedJson, withoutFees, withoutImages } from '../helpers/signing.ts';

const SIGNING_SECRET = 'svc_sig_test_Zx8PqR2mN5vB7cK1jH3gF6dS';
const SECRET_API_KEY = 'svc_sk_test_9fJ2kL4mN6pQ8rS0tU2vW4xY';
const PUBLISHABLE_KEY = 'svc_pk_test_1aB3cD5eF7gH9iJ1kL3mN5oP';

// Items out of id order, an image, fees and metadata: every mistake changes the signed bytes.
const CART: Cart = {
  total: 10_950,
  currency: 'eur',
  items: [
    {
      id: 'sku_b',
      name: 'Wine',
      quantity: 2,
      unit_price: 1000,
      image_url: 'https://cdn.example.com/wine.png',
    },
    { id: 'sku_a', name: 'Dinner for two', quantity: 1, unit_price: 7000 },
  ],
  tax: 800,
  shipping: 500,
  fees: [{ id: 'svc', label: 'Service fee', amount: 650 }],
  metadata: { order_ref: 'ORD-1001', channel: 'web' },
};

function diagnose(signature: unknown): SignatureCheck {
  return diagnoseCartSignature({
    cart: CART,
    signature,
    signingSecret: SIGNING_SECRET,
    knownWrongKeys: { secretApiKey: SECRET_API_KEY, publishableKey: PUBLISHABLE_KEY },
  });
}

function assertDiagnosis(check: SignatureCheck, mistakes: SignatureMistake[], first?: RegExp): void {
  assert.equal(check.valid, false);
  if (check.valid) return;
  assert.deepEqual(check.mistakes, mistakes);
  // The named mistakes come first, then the whole checklist.
  assert.equal(check.details.length, mistakes.length + CART_SIGNATURE_CHECKLIST.length);
  assert.deepEqual(check.details.slice(mistakes.length), [...CART_SIGNATURE_CHECKLIST]);
  if (first) assert.match(check.details[0]!, first);
}

describe('diagnoseCartSignature', () => {
  test('a correct signature is valid, in either case', () => {
    const signature = signCart(CART, SIGNING_SECRET);
    assert.deepEqual(diagnose(signature), { valid: true });
    assert.deepEqual(diagnose(signature.toUpperCase()), { valid: true });
  });

  test('the checklist is the four steps of the design', () => {
    assert.equal(CART_SIGNATURE_CHECKLIST.length, 4);
    assert.match(CART_SIGNATURE_CHECKLIST[0]!, /image_url/);
    assert.match(CART_SIGNATURE_CHECKLIST[1]!, /Sort the items by id/);
    assert.match(CART_SIGNATURE_CHECKLIST[2]!, /RFC 8785/);
    assert.match(CART_SIGNATURE_CHECKLIST[3]!, /HMAC-SHA256/);
  });

  test('signed with the secret API key', () => {
    const check = diagnose(signCart(CART, SECRET_API_KEY));
    assertDiagnosis(check, ['secret_api_key']);
    assert.equal(
      !check.valid && check.details[0],
      'The signature was made with your secret API key; ' +
        'sign with the cart signing secret (svc_sig_…) instead.',
    );
  });

  test('signed with the publishable key', () => {
    assertDiagnosis(diagnose(signCart(CART, PUBLISHABLE_KEY)), ['publishable_key'], /your publishable key/);
  });

  test('image_url left in', () => {
    const text = sortedJson(sortedItems(CART));
    assertDiagnosis(
      diagnose(hmacHex(SIGNING_SECRET, text)),
      ['image_url_included'],
      /^image_url was left in/,
    );
  });

  test('items left in request order', () => {
    const text = sortedJson(withoutImages(CART));
    assertDiagnosis(diagnose(hmacHex(SIGNING_SECRET, text)), ['items_unsorted'], /request order/);
  });

  test('fees left out', () => {
    const text = sortedJson(withoutFees(sortedItems(withoutImages(CART))));
    assertDiagnosis(diagnose(hmacHex(SIGNING_SECRET, text)), ['fees_omitted'], /^fees were left out/);
  });

  test('keys not sorted', () => {
    const text = JSON.stringify(sortedItems(withoutImages(CART)));
    assertDiagnosis(diagnose(hmacHex(SIGNING_SECRET, text)), ['keys_unsorted'], /keys were not sorted/);
  });

  test('whitespace: indented (by two spaces, four or a tab), or spaces after ":" and ","', () => {
    for (const indent of [2, 4, '\t']) {
      const indented = sortedJson(sortedItems(withoutImages(CART)), indent);
      assertDiagnosis(diagnose(hmacHex(SIGNING_SECRET, indented)), ['whitespace'], /was indented/);
    }
    // Python's json.dumps(cart, sort_keys=True); none of this cart's strings hold ':' or ','.
    const spaced = sortedJson(sortedItems(withoutImages(CART)))
      .replaceAll(':', ': ')
      .replaceAll(',', ', ');
    assertDiagnosis(diagnose(hmacHex(SIGNING_SECRET, spaced)), ['whitespace'], /spaces after/);
  });

  test('plain JSON.stringify of the cart as sent, with and without image_url', () => {
    assertDiagnosis(diagnose(hmacHex(SIGNING_SECRET, JSON.stringify(CART))), [
      'image_url_included',
      'items_unsorted',
      'keys_unsorted',
    ]);
    assertDiagnosis(diagnose(hmacHex(SIGNING_SECRET, JSON.stringify(withoutImages(CART)))), [
      'items_unsorted',
      'keys_unsorted',
    ]);
    assertDiagnosis(diagnose(hmacHex(SIGNING_SECRET, JSON.stringify(CART, null, 2))), [
      'image_url_included',
      'items_unsorted',
      'keys_unsorted',
      'whitespace',
    ]);
  });

  test('mistakes combine with the wrong key', () => {
    assertDiagnosis(
      diagnose(hmacHex(SECRET_API_KEY, JSON.stringify(CART))),
      ['secret_api_key', 'image_url_included', 'items_unsorted', 'keys_unsorted'],
      /secret API key/,
    );
    const oldSdk = sortedJson(withoutFees(sortedItems(withoutImages(CART))));
    assertDiagnosis(diagnose(hmacHex(PUBLISHABLE_KEY, oldSdk)), ['publishable_key', 'fees_omitted']);
  });

  test('the simplest explanation wins when several give the same bytes', () => {
    // Already in id order and without images: "unsorted" or "image_url left in" would say nothing new.
    const cart: Cart = {
      total: 500,
      currency: 'usd',
      items: [{ id: 'a', name: 'x', quantity: 1, unit_price: 500 }],
    };
    const check = diagnoseCartSignature({
      cart,
      signature: hmacHex(SIGNING_SECRET, JSON.stringify(cart)),
      signingSecret: SIGNING_SECRET,
    });
    assertDiagnosis(check, ['keys_unsorted']);
  });

  test('the wrong keys are only tried when given, and never when they equal the signing secret', () => {
    const signature = signCart(CART, SECRET_API_KEY);
    const check = diagnoseCartSignature({ cart: CART, signature, signingSecret: SIGNING_SECRET });
    assertDiagnosis(check, []);
    const same = diagnoseCartSignature({
      cart: CART,
      signature: signCart(CART, 'svc_sig_test_other'),
      signingSecret: SIGNING_SECRET,
      knownWrongKeys: { secretApiKey: SIGNING_SECRET },
    });
    assertDiagnosis(same, []);
  });

  test('an unknown mistake gives the checklist alone', () => {
    const check = diagnose(signCart(CART, 'svc_sig_test_someone_else'));
    assert.deepEqual(check, { valid: false, details: [...CART_SIGNATURE_CHECKLIST], mistakes: [] });
    const changedCart = diagnose(signCart({ ...CART, total: 1 }, SIGNING_SECRET));
    assertDiagnosis(changedCart, []);
  });

  test('malformed signatures are described, never thrown', () => {
    const cases: [unknown, RegExp][] = [
      ['abc', /^signature must be 64 hexadecimal characters, got 3$/],
      ['', /got 0$/],
      [`${signCart(CART, SIGNING_SECRET)}0`, /got 65$/],
      [`${signCart(CART, SIGNING_SECRET).slice(0, 63)}z`, /character 64 is not hexadecimal/],
      [undefined, /got undefined$/],
      [null, /got null$/],
      [42, /got number$/],
    ];
    for (const [signature, message] of cases) {
      assertDiagnosis(diagnose(signature), ['signature_format'], message);
    }
  });

  test('a base64 signature is named as such, and still diagnosed', () => {
    const base64 = Buffer.from(signCart(CART, SIGNING_SECRET), 'hex').toString('base64');
    assertDiagnosis(diagnose(base64), ['signature_format'], /this one is base64/);
    const base64url = Buffer.from(signCart(CART, SECRET_API_KEY), 'hex').toString('base64url');
    assertDiagnosis(diagnose(base64url), ['signature_format', 'secret_api_key'], /base64/);
  });

  test('the cart is not changed', () => {
    const before = structuredClone(CART);
    diagnose(hmacHex(SECRET_API_KEY, JSON.stringify(CART, null, 2)));
    diagnose('nothing like a signature');
    assert.deepEqual(CART, before);
  });

  test('every shared test vector: the correct signature is valid, the secret API key is named', () => {
    const { vectors } = JSON.parse(
      readFileSync(new URL('../../../node/test/fixtures/cart-signatures.json', import.meta.url), 'utf8'),
    ) as { vectors: { cart: Cart; secret: string; signature: string }[] };
    for (const vector of vectors) {
      const input = {
        cart: vector.cart,
        signingSecret: vector.secret,
        knownWrongKeys: { secretApiKey: SECRET_API_KEY },
      };
      assert.deepEqual(diagnoseCartSignature({ ...input, signature: vector.signature }), { valid: true });
      assertDiagnosis(diagnoseCartSignature({ ...input, signature: signCart(vector.cart, SECRET_API_KEY) }), [
        'secret_api_key',
      ]);
      // JSON.stringify of the vector cart is recognized whatever its contents (unicode, escapes, ties).
      const naive = diagnoseCartSignature({
        ...input,
        signature: hmacHex(vector.secret, JSON.stringify(vector.cart)),
      });
      assert.equal(naive.valid, false);
      assert.ok(!naive.valid && naive.mistakes.length > 0, 'a mistake is named');
    }
  });
});
