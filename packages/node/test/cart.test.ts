import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import type { Cart } from '../src/index.ts';
import { canonicalCart, signCart, verifyCartSignature } from '../src/index.ts';

interface Vector {
  name: string;
  secret: string;
  cart: Cart;
  canonical: string;
  signature: string;
}

// A byte copy of the shared vectors (docs/api.md#cart-signature): the project never reads files outside itself.
const { vectors } = JSON.parse(
  readFileSync(new URL('./fixtures/cart-signatures.json', import.meta.url), 'utf8'),
) as { vectors: Vector[] };

const SECRET = 'svc_sig_test_4eC39HqLyjWDarjtT1zdp7dc';

function cartWith(items: Cart['items'], extra: Partial<Cart> = {}): Cart {
  return { total: 100, currency: 'usd', items, ...extra };
}

function itemNames(cart: Cart): string[] {
  return (JSON.parse(canonicalCart(cart)) as Cart).items.map((item) => item.name);
}

describe('test vectors', () => {
  test('there are vectors to check', () => {
    assert.ok(vectors.length >= 5);
  });
  for (const vector of vectors) {
    test(`canonical: ${vector.name}`, () => {
      assert.equal(canonicalCart(vector.cart), vector.canonical);
    });
    test(`signature: ${vector.name}`, () => {
      assert.equal(signCart(vector.cart, vector.secret), vector.signature);
      assert.equal(verifyCartSignature(vector.cart, vector.signature, vector.secret), true);
    });
  }
});

describe('canonicalCart', () => {
  test('does not change the cart it is given', () => {
    for (const vector of vectors) {
      const before = structuredClone(vector.cart);
      canonicalCart(vector.cart);
      signCart(vector.cart, vector.secret);
      assert.deepEqual(vector.cart, before);
    }
  });

  test('items with equal ids keep their request order, items without id sort first', () => {
    const cart = cartWith([
      { id: 'b', name: 'first b', quantity: 1, unit_price: 10 },
      { id: 'a', name: 'a', quantity: 1, unit_price: 10 },
      { id: 'b', name: 'second b', quantity: 1, unit_price: 10 },
      { name: 'no id', quantity: 1, unit_price: 10 },
      { id: 'b', name: 'third b', quantity: 1, unit_price: 10 },
      { id: '', name: 'empty id', quantity: 1, unit_price: 10 },
    ]);
    assert.deepEqual(itemNames(cart), ['no id', 'empty id', 'a', 'first b', 'second b', 'third b']);
  });

  test('ids compare by UTF-16 code units, not code points', () => {
    // U+FF61 is one code unit 0xFF61; U+1F600 is the surrogate pair 0xD83D 0xDE00. By code point the
    // emoji is larger; by code unit it is smaller, and code units are the rule.
    const cart = cartWith([
      { id: '\uFF61', name: 'halfwidth full stop', quantity: 1, unit_price: 10 },
      { id: '\u{1F600}', name: 'emoji', quantity: 1, unit_price: 10 },
    ]);
    assert.deepEqual(itemNames(cart), ['emoji', 'halfwidth full stop']);
  });

  test('object keys are sorted by UTF-16 code units at every level', () => {
    const cart = cartWith([{ id: '1', name: 'x', quantity: 1, unit_price: 100 }], {
      metadata: { '\uFF61': 'a', '\u{1F600}': 'b', Z: 'c', a: 'd', '10': 'e', '9': 'f' },
    });
    const canonical = canonicalCart(cart);
    assert.ok(
      canonical.includes('"metadata":{"10":"e","9":"f","Z":"c","a":"d","\u{1F600}":"b","\uFF61":"a"}'),
      canonical,
    );
  });

  test('the order of keys as sent does not matter', () => {
    const a: Cart = {
      total: 1500,
      currency: 'usd',
      items: [{ id: 'x', name: 'Hat', quantity: 1, unit_price: 1000 }],
      fees: [{ id: 'svc', label: 'Service', amount: 500 }],
      metadata: { order_ref: 'ORD-1', channel: 'web', campaign: 'spring' },
    };
    const b: Cart = {
      metadata: { campaign: 'spring', channel: 'web', order_ref: 'ORD-1' },
      fees: [{ amount: 500, label: 'Service', id: 'svc' }],
      items: [{ unit_price: 1000, quantity: 1, name: 'Hat', id: 'x' }],
      currency: 'usd',
      total: 1500,
    };
    assert.equal(canonicalCart(a), canonicalCart(b));
    assert.equal(signCart(a, SECRET), signCart(b, SECRET));
  });

  test('image_url is left out of the signature', () => {
    const bare = cartWith([{ id: 'a', name: 'x', quantity: 1, unit_price: 100 }]);
    const pictured = cartWith([
      { id: 'a', name: 'x', quantity: 1, unit_price: 100, image_url: 'https://cdn.example.com/x.png' },
    ]);
    assert.equal(signCart(bare, SECRET), signCart(pictured, SECRET));
  });

  test('members that are undefined are left out, as JSON.stringify leaves them out of the body', () => {
    const cart = cartWith([{ id: 'a', name: 'x', quantity: 1, unit_price: 100 }], { tax: undefined });
    assert.equal(canonicalCart(cart), canonicalCart(JSON.parse(JSON.stringify(cart)) as Cart));
  });

  test('numbers that JSON cannot hold are refused with a TypeError naming the field', () => {
    assert.throws(
      () => canonicalCart(cartWith([{ name: 'x', quantity: 1, unit_price: Number.NaN }])),
      (error: unknown) =>
        error instanceof TypeError && /cart\.items\[0\]\.unit_price is NaN/.test(error.message),
    );
    assert.throws(
      () => canonicalCart({ ...cartWith([{ name: 'x', quantity: 1, unit_price: 1 }]), total: Infinity }),
      /cart\.total is Infinity/,
    );
  });

  test('a value that is not a cart is refused', () => {
    assert.throws(() => canonicalCart(null as unknown as Cart), TypeError);
    assert.throws(() => canonicalCart({ total: 1, currency: 'usd' } as unknown as Cart), /cart\.items/);
  });

  test('the signature is HMAC-SHA256 over the UTF-8 bytes of the canonical string', () => {
    const vector = vectors.find((v) => v.name.startsWith('unicode'))!;
    const expected = createHmac('sha256', vector.secret).update(vector.canonical, 'utf8').digest('hex');
    assert.equal(signCart(vector.cart, vector.secret), expected);
  });
});

describe('verifyCartSignature', () => {
  const vector = vectors[1]!;

  test('accepts uppercase hex', () => {
    assert.equal(verifyCartSignature(vector.cart, vector.signature.toUpperCase(), vector.secret), true);
  });

  test('rejects a signature of another cart or another secret', () => {
    const other = vectors[0]!;
    assert.equal(verifyCartSignature(vector.cart, other.signature, vector.secret), false);
    assert.equal(verifyCartSignature(vector.cart, vector.signature, 'svc_sig_test_other'), false);
    assert.equal(
      verifyCartSignature({ ...vector.cart, total: vector.cart.total + 1 }, vector.signature, vector.secret),
      false,
    );
  });

  test('rejects short, long, non-hex and non-string signatures without throwing', () => {
    const bad: unknown[] = [
      '',
      vector.signature.slice(0, 63),
      vector.signature.slice(0, 62),
      `${vector.signature}0`,
      `${vector.signature}00`,
      `${vector.signature.slice(0, 63)}g`,
      ` ${vector.signature.slice(1)}`,
      Buffer.from(vector.signature, 'hex').toString('base64'),
      undefined,
      null,
      42,
    ];
    for (const signature of bad) {
      assert.equal(
        verifyCartSignature(vector.cart, signature as string, vector.secret),
        false,
        String(signature),
      );
    }
  });

  test('gives false for a cart that cannot be canonicalized', () => {
    const cart = cartWith([{ name: 'x', quantity: 1, unit_price: Number.POSITIVE_INFINITY }]);
    assert.equal(verifyCartSignature(cart, vector.signature, vector.secret), false);
  });

  test('a missing signing secret is a configuration error, not a false', () => {
    assert.throws(() => verifyCartSignature(vector.cart, vector.signature, ''), /signing secret/);
    assert.throws(() => signCart(vector.cart, undefined as unknown as string), /signing secret/);
  });
});
