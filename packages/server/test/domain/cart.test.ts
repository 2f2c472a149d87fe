import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Cart, CartItem } from '@group-checkout/node';
import type { ErrorObject } from 'ajv';
import fc from 'fast-check';
import { describeError, validatorCompiler } from '../../src/api/validation.ts';
import { CART_LIMITS, cartExtras, checkCart as checkCartRules } from '../../src/domain/cart.ts';
import { CartSchema } from '../../src/wire/schemas.ts';

const validateShape = validatorCompiler({
  schema: CartSchema,
  httpPart: 'body',
  method: 'POST',
  url: '/',
}) as ((value: unknown) => boolean) & { errors?: ErrorObject[] | null };

/**
 * Every rule a cart breaks, as the API checks it: the wire schema first (fields, types, bounds), then
 * the rules only code can check (domain/cart.ts). Each rule lives in exactly one of the two.
 */
function checkCart(value: unknown): string[] {
  if (!validateShape(value))
    return [...new Set((validateShape.errors ?? []).map((e) => describeError(e, 'cart')))];
  return checkCartRules(value as Cart);
}

function validCart(): Cart {
  return {
    total: 10_950,
    currency: 'eur',
    tax: 800,
    shipping: 500,
    fees: [{ id: 'svc', label: 'Service fee', amount: 650 }],
    metadata: { order_ref: 'ORD-1001', channel: 'web' },
    items: [
      { id: 'sku_a', name: 'Dinner for two', quantity: 1, unit_price: 7000 },
      {
        id: 'sku_b',
        name: 'Wine',
        quantity: 2,
        unit_price: 1000,
        image_url: 'https://cdn.example.com/wine.png',
      },
    ],
  };
}

/** Loosely typed, as parsed JSON is: the rules must cope with whatever arrives. */
interface LooseCart {
  [field: string]: unknown;
  items: Record<string, unknown>[];
  fees: Record<string, unknown>[];
  metadata: Record<string, unknown>;
}

/** The valid cart with one change. */
function changed(change: (cart: LooseCart) => void): Cart {
  const cart = structuredClone(validCart()) as unknown as LooseCart;
  change(cart);
  return cart as unknown as Cart;
}

describe('cart rules (wire schema, then domain/cart.ts)', () => {
  test('a valid cart has no errors', () => {
    assert.deepEqual(checkCart(validCart()), []);
    assert.deepEqual(
      checkCart({ total: 1, currency: 'jpy', items: [{ name: 'Sticker', quantity: 1, unit_price: 1 }] }),
      [],
    );
  });

  test('the total must equal items + tax + shipping + fees, and the message gives both', () => {
    assert.deepEqual(checkCart(changed((cart) => (cart.total = 7200))), [
      'cart.total is 7200 but the items, tax, shipping and fees add up to 10950',
    ]);
    // The fees count: leaving them out of the total is the usual mistake.
    assert.deepEqual(checkCart(changed((cart) => (cart.total = 10_300))), [
      'cart.total is 10300 but the items, tax, shipping and fees add up to 10950',
    ]);
  });

  test('currency must be a known lowercase ISO 4217 code', () => {
    assert.deepEqual(checkCart(changed((cart) => (cart.currency = 'xyz'))), [
      'cart.currency must be a lowercase ISO 4217 code such as "usd" or "eur", got "xyz"',
    ]);
    assert.deepEqual(checkCart(changed((cart) => (cart.currency = 'EUR'))), [
      'cart.currency must be a lowercase ISO 4217 code such as "usd" or "eur", got "EUR"',
    ]);
    assert.deepEqual(checkCart(changed((cart) => delete cart.currency)), ['cart.currency is required']);
  });

  test('item rules name the exact path', () => {
    assert.deepEqual(
      checkCart(
        changed((cart) => {
          cart.items[1]!.quantity = 0;
          cart.items[0]!.unit_price = -5;
        }),
      ),
      ['cart.items[0].unit_price must be at least 0', 'cart.items[1].quantity must be at least 1'],
    );
    assert.deepEqual(checkCart(changed((cart) => (cart.items[1]!.quantity = 1.5))), [
      'cart.items[1].quantity must be an integer',
    ]);
    assert.deepEqual(checkCart(changed((cart) => delete cart.items[0]!.name)), [
      'cart.items[0].name is required',
    ]);
    assert.deepEqual(checkCart(changed((cart) => (cart.items = []))), [
      'cart.items must have at least 1 element',
    ]);
  });

  test('image_url must be https', () => {
    for (const url of [
      'http://cdn.example.com/wine.png',
      'javascript:alert(1)',
      'not a url',
      '//cdn.example.com/x',
    ]) {
      assert.deepEqual(checkCart(changed((cart) => (cart.items[1]!.image_url = url))), [
        'cart.items[1].image_url must be an https URL',
      ]);
    }
  });

  test('size limits: 100 items, 20 fees, 50 metadata keys of 40 characters, values of 500', () => {
    const item: CartItem = { name: 'Pin', quantity: 1, unit_price: 1 };
    const many = (n: number) => ({
      total: n,
      currency: 'usd',
      items: Array.from({ length: n }, () => ({ ...item })),
    });
    assert.deepEqual(checkCart(many(CART_LIMITS.maxItems)), []);
    assert.deepEqual(checkCart(many(101)), ['cart.items must have at most 100 elements']);

    const fees = Array.from({ length: 21 }, (_, i) => ({ id: `f${i}`, label: 'Fee', amount: 0 }));
    assert.deepEqual(checkCart(changed((cart) => (cart.fees = fees))), [
      'cart.fees must have at most 20 elements',
    ]);

    const metadata = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v']));
    assert.deepEqual(checkCart(changed((cart) => (cart.metadata = metadata))), [
      'cart.metadata must have at most 50 keys',
    ]);
    const longKey = 'k'.repeat(41);
    assert.deepEqual(
      checkCart(changed((cart) => (cart.metadata = { [longKey]: 'v', ['k'.repeat(40)]: 'v' }))),
      [`cart.metadata key "${longKey}" must be at most 40 characters`],
    );
    assert.deepEqual(checkCart(changed((cart) => (cart.metadata.note = 'x'.repeat(501)))), [
      'cart.metadata.note must be at most 500 characters',
    ]);
    // 500 emoji are 1000 UTF-16 code units but 500 characters, as JSON Schema counts them.
    assert.deepEqual(checkCart(changed((cart) => (cart.metadata.note = '😀'.repeat(500)))), []);
    assert.deepEqual(checkCart(changed((cart) => (cart.metadata['order ref'] = 7))), [
      'cart.metadata["order ref"] must be a string',
    ]);
  });

  test('total between 1 and 99,999,999', () => {
    const free = { total: 0, currency: 'usd', items: [{ name: 'Free', quantity: 1, unit_price: 0 }] };
    assert.deepEqual(checkCart(free), ['cart.total must be at least 1']);
    const huge = {
      total: 100_000_000,
      currency: 'usd',
      items: [{ name: 'Car', quantity: 1, unit_price: 100_000_000 }],
    };
    assert.deepEqual(checkCart(huge), [
      'cart.total must be at most 99999999',
      'cart.items[0].unit_price must be at most 99999999',
    ]);
  });

  test('unknown fields and wrong types are reported, not thrown', () => {
    assert.deepEqual(checkCart(changed((cart) => (cart.discount = 5))), [
      'cart.discount is not a known field',
    ]);
    assert.deepEqual(checkCart(changed((cart) => (cart.items[0]!.sku = 'x'))), [
      'cart.items[0].sku is not a known field',
    ]);
    assert.deepEqual(checkCart(changed((cart) => (cart.tax = '800'))), ['cart.tax must be an integer']);
    assert.deepEqual(checkCart(changed((cart) => (cart.fees[0]!.amount = -1))), [
      'cart.fees[0].amount must be at least 0',
    ]);
    assert.deepEqual(checkCart(null as unknown as Cart), ['cart must be an object']);
    assert.deepEqual(checkCart(changed((cart) => Object.assign(cart, { items: 'many' }))), [
      'cart.items must be an array',
    ]);
  });

  test('the total rule is exact far beyond the safe integer range', () => {
    // The schema's bounds keep real carts far below 2^53; the rule itself must not rely on them.
    const cart = {
      total: 5,
      currency: 'usd',
      items: [{ name: 'x', quantity: 2 ** 40, unit_price: 2 ** 40 }],
    };
    assert.deepEqual(checkCartRules(cart), [
      `cart.total is 5 but the items, tax, shipping and fees add up to ${2n ** 80n}`,
    ]);
  });

  test('any cart whose total is the sum is valid; any other total is refused with the sum', () => {
    const itemArb = fc.record({
      name: fc.string({ minLength: 1, maxLength: 20 }),
      quantity: fc.integer({ min: 1, max: 20 }),
      unit_price: fc.integer({ min: 0, max: 100_000 }),
    });
    fc.assert(
      fc.property(
        fc.array(itemArb, { minLength: 1, maxLength: 30 }),
        fc.nat(50_000),
        fc.nat(50_000),
        fc.array(fc.nat(5000), { maxLength: 5 }),
        fc.integer({ min: -1000, max: 1000 }),
        (items, tax, shipping, feeAmounts, delta) => {
          const fees = feeAmounts.map((amount, i) => ({ id: `f${i}`, label: 'Fee', amount }));
          const sum =
            items.reduce((s, item) => s + item.quantity * item.unit_price, 0) +
            tax +
            shipping +
            feeAmounts.reduce((s, a) => s + a, 0);
          fc.pre(sum >= 1);
          const cart: Cart = { total: sum, currency: 'usd', items, tax, shipping, fees };
          assert.deepEqual(checkCart(cart), []);
          assert.equal(cartExtras(cart), tax + shipping + feeAmounts.reduce((s, a) => s + a, 0));
          fc.pre(delta !== 0 && sum + delta >= 1);
          assert.deepEqual(checkCart({ ...cart, total: sum + delta }), [
            `cart.total is ${sum + delta} but the items, tax, shipping and fees add up to ${sum}`,
          ]);
        },
      ),
    );
  });
});

describe('cart sums', () => {
  test('cartExtras: tax + shipping + fees, what an itemized split spreads', () => {
    const cart = validCart();
    assert.equal(cartExtras(cart), 1950);
    assert.equal(cartExtras({ total: 1, currency: 'usd', items: [] }), 0);
  });
});
