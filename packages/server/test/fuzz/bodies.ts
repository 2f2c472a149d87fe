// Bodies a route takes, written by hand where the route's schema alone would almost never make one that
// gets past the rules behind it (a cart whose total adds up, a split that covers the total).
import type { Cart } from '@group-checkout/node';
import fc from 'fast-check';
import { type JsonSchema, oddString, validOf } from './arbitraries.ts';

const memberName = fc.oneof(
  { arbitrary: fc.constantFrom('Ada', 'Ben', 'Cy', 'Dee'), weight: 3 },
  { arbitrary: oddString(30).filter((s) => s.length > 0), weight: 1 },
);
const maybeEmail = fc.option(fc.emailAddress(), { nil: undefined });

/** n whole numbers that add up to `total`. */
const partsOf = (total: number, n: number) =>
  fc.array(fc.nat(total), { minLength: n - 1, maxLength: n - 1 }).map((cuts) => {
    const sorted = [0, ...cuts.sort((a, b) => a - b), total];
    return sorted.slice(1).map((v, i) => v - (sorted[i] ?? 0));
  });

/** PUT {pay_url}/api/v1/session/group for the sample cart (100.00 USD, items 2 × 40.00 and 1 × 10.00). */
const validGroup: fc.Arbitrary<unknown> = fc.oneof(
  fc
    .array(fc.record({ name: memberName, email: maybeEmail }, { requiredKeys: ['name'] }), {
      minLength: 1,
      maxLength: 5,
    })
    .map((members) => ({ mode: 'equal', members })),
  fc
    .integer({ min: 1, max: 4 })
    .chain((n) => partsOf(10_000, n))
    .map((parts) => ({
      mode: 'percentage',
      members: parts.map((basis_points, i) => ({ name: `M${i}`, basis_points })),
    })),
  fc
    .integer({ min: 1, max: 4 })
    .chain((n) => partsOf(10_000, n))
    .map((parts) => ({
      mode: 'custom',
      members: parts.map((amount_cents, i) => ({ name: `M${i}`, amount_cents })),
    })),
  fc.constant({
    mode: 'itemized',
    members: [
      { name: 'Ada', items: [{ item_index: 0, quantity: 2 }] },
      { name: 'Ben', items: [{ item_index: 1, quantity: 1 }] },
    ],
  }),
  fc.constant({ mode: 'host-pays', members: [{ name: 'Ada' }, { name: 'Ben' }] }),
);

/** Mostly `usual`, now and then one of `odd`: bodies that pass, with a rule broken here and there. */
const mostly = <T>(usual: fc.Arbitrary<T>, odd: fc.Arbitrary<T>) =>
  fc.oneof({ arbitrary: usual, weight: 12 }, { arbitrary: odd, weight: 1 });

const cartItem = fc.record(
  {
    id: mostly(fc.constantFrom('sku_a', 'sku_b', 'sku_c'), oddString(20)),
    name: memberName,
    quantity: fc.integer({ min: 1, max: 5 }),
    unit_price: fc.integer({ min: 0, max: 5000 }),
    image_url: mostly(
      fc.constant('https://img.example/a.png'),
      fc.constantFrom('http://img.example/a.png', 'javascript:x', '', 'https://'),
    ),
  },
  { requiredKeys: ['name', 'quantity', 'unit_price'] },
);

const validCart: fc.Arbitrary<Cart> = fc
  .record(
    {
      currency: mostly(fc.constantFrom('usd', 'eur', 'jpy'), fc.constantFrom('USD', 'xxx', 'us', 'usdd', '')),
      items: fc.array(cartItem, { minLength: 1, maxLength: 3 }),
      tax: fc.integer({ min: 0, max: 1000 }),
      shipping: fc.integer({ min: 0, max: 1000 }),
      fees: fc.array(
        fc.record({ id: fc.constantFrom('svc', 'tip'), label: memberName, amount: fc.nat(500) }),
        { maxLength: 2 },
      ),
      metadata: fc.dictionary(
        mostly(fc.constantFrom('order_ref', 'note'), fc.constantFrom('x y', '', '__proto__', 'é')),
        oddString(20),
        { maxKeys: 3, noNullPrototype: true },
      ),
    },
    { requiredKeys: ['currency', 'items'] },
  )
  .map((cart) => {
    const total =
      cart.items.reduce((sum, item) => sum + item.quantity * item.unit_price, 0) +
      (cart.tax ?? 0) +
      (cart.shipping ?? 0) +
      (cart.fees ?? []).reduce((sum, fee) => sum + fee.amount, 0);
    return { total, ...cart } as Cart;
  });

const groupConfig = fc.record(
  {
    min_size: mostly(fc.integer({ min: 1, max: 5 }), fc.integer({ min: -5, max: 100 })),
    max_size: mostly(fc.integer({ min: 5, max: 50 }), fc.integer({ min: -5, max: 100 })),
    default_mode: fc.constantFrom('equal', 'itemized', 'custom', 'percentage', 'host-pays'),
    allowed_modes: fc.uniqueArray(fc.constantFrom('equal', 'itemized', 'custom', 'percentage', 'host-pays'), {
      minLength: 1,
      maxLength: 5,
    }),
    expiry_hours: mostly(fc.integer({ min: 1, max: 168 }), fc.integer({ min: -1, max: 10_000 })),
  },
  { requiredKeys: [] },
);

const customer = fc.record(
  {
    name: memberName,
    email: mostly(fc.emailAddress(), oddString(30)),
    phone: mostly(fc.constantFrom('+1 555 0100', '0123'), oddString(45)),
  },
  { requiredKeys: [] },
);

function validCreate(body: JsonSchema): fc.Arbitrary<unknown> {
  const url = mostly(
    fc.constantFrom('https://shop.example/done', 'http://localhost:3000/back'),
    fc.constantFrom(
      'http://shop.example/insecure',
      'javascript:alert(1)',
      'https://user:pw@shop.example/',
      '//shop.example',
      'https://shop.example/\u0000',
    ),
  );
  return fc.record(
    {
      cart: validCart,
      group_config: mostly(groupConfig, validOf(body.properties?.group_config ?? {})),
      customer: mostly(customer, validOf(body.properties?.customer ?? {})),
      success_url: url,
      cancel_url: url,
      webhook_url: url,
    },
    { requiredKeys: ['cart'] },
  );
}

const validWebhook: fc.Arbitrary<unknown> = fc.record({
  url: fc.oneof(
    fc.constantFrom('https://hooks.example/gc', 'http://localhost:9/x', 'https://[::1]/h', 'ftp://x/'),
    fc.webUrl(),
  ),
  events: fc.uniqueArray(fc.constantFrom('*', 'group.created', 'group.funded', 'group.cancelled'), {
    minLength: 1,
    maxLength: 3,
  }),
});

/** Test cards (every outcome) and numbers that fail the Luhn check, with expiries past and future. */
const validPay: fc.Arbitrary<unknown> = fc.record({
  card: fc.record({
    number: fc.constantFrom(
      '4242424242424242',
      '4242 4242 4242 4242',
      '4000000000000002',
      '4000000000009995',
      '4000000000000119',
      '4000000000000341',
      '4000002500003155',
      '4000000000000259',
      '4000000000005126',
      '4242424242424241',
      '5555555555554444',
    ),
    exp_month: fc.integer({ min: 1, max: 12 }),
    exp_year: fc.constantFrom(2020, 2099, 99, 30),
    cvc: fc.constantFrom('123', '1234', '12a'),
  }),
});

/** Bodies by route, where the schema alone is not enough to get past the rules. */
export const VALID_BODIES: Record<string, (body: JsonSchema) => fc.Arbitrary<unknown>> = {
  'POST /v1/sessions': validCreate,
  'POST /v1/webhooks': () => validWebhook,
  'PUT /api/v1/session/group': () => validGroup,
  'POST /api/v1/shares/:shareId/pay': () => validPay,
};
