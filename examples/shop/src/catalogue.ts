// What the shop sells and how it prices a cart. The page builds its cart from the same numbers (sent to it
// in the page's settings), and the signing route rebuilds every cart from here before signing it: whatever
// the shop signs, the group pays (docs/api.md#merchant-signing-route).
import type { Cart } from '@group-checkout/node';

export interface Product {
  id: string;
  name: string;
  description: string;
  /** Cents. */
  unit_price: number;
}

export const CURRENCY = 'usd';

export const PRODUCTS: readonly Product[] = [
  {
    id: 'sku_tent',
    name: 'Four-person tent',
    description: 'Sleeps four, packs to 45 cm.',
    unit_price: 18900,
  },
  { id: 'sku_lantern', name: 'Camp lantern', description: 'Rechargeable, 300 lumens.', unit_price: 2450 },
  { id: 'sku_stove', name: 'Two-burner stove', description: 'Runs on a standard gas can.', unit_price: 6900 },
];

/** Tax in basis points of the item subtotal (8.25%), rounded to the cent. */
export const TAX_RATE_BPS = 825;
/** Flat shipping in cents, free from FREE_SHIPPING_FROM (cents of item subtotal). */
export const SHIPPING = 900;
export const FREE_SHIPPING_FROM = 25000;
/** One fee line on every order, to show that fees are part of the signed cart. */
export const FEES = [{ id: 'fee_packing', label: 'Packing', amount: 200 }] as const;
/** Per product; also what the page's quantity selector allows. */
export const MAX_QUANTITY = 10;

export interface Line {
  id: string;
  quantity: number;
}

/** The cart the shop sells for these lines and this order: the same arithmetic as public/shop.js. */
export function priceCart(lines: Line[], orderRef: string): Cart {
  const items = lines.map(({ id, quantity }) => {
    const product = PRODUCTS.find((p) => p.id === id);
    if (!product) throw new Error(`unknown product ${id}`);
    return { id, name: product.name, quantity, unit_price: product.unit_price };
  });
  const subtotal = items.reduce((sum, item) => sum + item.quantity * item.unit_price, 0);
  // Half up, in integers: (a + 5000) / 10000 floored.
  const tax = Math.floor((subtotal * TAX_RATE_BPS + 5_000) / 10_000);
  const shipping = subtotal >= FREE_SHIPPING_FROM ? 0 : SHIPPING;
  const fees = FEES.map((fee) => ({ ...fee }));
  const total = subtotal + tax + shipping + fees.reduce((sum, fee) => sum + fee.amount, 0);
  return { total, currency: CURRENCY, items, tax, shipping, fees, metadata: { order_ref: orderRef } };
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The fields of `sent` that differ from `expected`, named as paths (`cart.items[1].unit_price`). */
function differences(sent: unknown, expected: unknown, path: string): string[] {
  if (Array.isArray(expected)) {
    if (!Array.isArray(sent) || sent.length !== expected.length) return [path];
    return expected.flatMap((value, i) => differences(sent[i], value, `${path}[${i}]`));
  }
  if (isObject(expected)) {
    if (!isObject(sent)) return [path];
    return [...new Set([...Object.keys(expected), ...Object.keys(sent)])].flatMap((key) =>
      differences(sent[key], expected[key], `${path}.${key}`),
    );
  }
  return Object.is(sent, expected) ? [] : [path];
}

/**
 * The problems that keep the shop from signing `cart` for order `orderRef`, in words: the first a one-line
 * sentence (the refusal's `error`, which the page shows), the rest what more a developer needs (with it, the
 * refusal's `details`); empty when the cart is exactly what priceCart makes of its own lines. Items may come
 * in any order (the signature sorts them), but every other field, and every field of every item, must be
 * the shop's; nothing may be added.
 */
export function cartProblems(cart: unknown, orderRef: string): string[] {
  if (!isObject(cart)) return ['cart must be an object'];
  const items = cart.items;
  if (!Array.isArray(items) || items.length === 0) return ['cart.items must list at least one product'];
  const problems: string[] = [];
  const lines: Line[] = [];
  const seen = new Set<string>();
  for (const [i, item] of items.entries()) {
    const id = isObject(item) ? item.id : undefined;
    const quantity = isObject(item) ? item.quantity : undefined;
    if (typeof id !== 'string' || !PRODUCTS.some((p) => p.id === id)) {
      problems.push(`cart.items[${i}].id is not a product of this shop`);
    } else if (seen.has(id)) {
      problems.push(`cart.items[${i}]: ${id} is listed twice`);
    } else if (
      !Number.isInteger(quantity) ||
      (quantity as number) < 1 ||
      (quantity as number) > MAX_QUANTITY
    ) {
      problems.push(`cart.items[${i}].quantity must be a whole number from 1 to ${MAX_QUANTITY}`);
    } else {
      seen.add(id);
      lines.push({ id, quantity: quantity as number });
    }
  }
  if (problems.length > 0) return problems;
  // Compare item by item in the order they came: the page may list them as it likes.
  const expected = priceCart(lines, orderRef);
  const wrong = differences(cart, expected, 'cart');
  if (wrong.length === 0) return [];
  // The whole cart it would sign goes after the sentence, not in it: it is long, and the page shows the
  // sentence to shoppers.
  return [
    `${wrong.join(', ')} ${wrong.length === 1 ? 'is' : 'are'} not what this shop charges`,
    `the shop signs this cart for these lines: ${JSON.stringify(expected)}`,
  ];
}
