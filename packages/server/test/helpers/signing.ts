// Signing by hand, written apart from the code under test, so the tests can make the mistakes that
// merchants make (wrong key, unsorted keys, whitespace) and check the service recognizes them.
import { createHmac } from 'node:crypto';
import type { Cart } from '@group-checkout/node';

export const hmacHex = (key: string, text: string): string =>
  createHmac('sha256', key).update(text, 'utf8').digest('hex');

/** JSON with object keys sorted (RFC 8785 for cart values), optionally indented. */
export function sortedJson(value: unknown, space?: number | string): string {
  return JSON.stringify(
    value,
    (_key, v: unknown) =>
      v !== null && typeof v === 'object' && !Array.isArray(v)
        ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
        : v,
    space,
  );
}

/**
 * Two items whose ids sort differently by code point and by UTF-16 code unit: by code point U+FF61
 * comes first; in UTF-16 the emoji's lead surrogate (D83D) does.
 */
export function utf16Cart(): Cart {
  return {
    total: 300,
    currency: 'usd',
    items: [
      { id: '\uFF61', name: 'Halfwidth full stop', quantity: 1, unit_price: 100 },
      { id: '\u{1F600}', name: 'Grin', quantity: 1, unit_price: 200 },
    ],
  };
}

/** The cart with an image_url on every item (https://cdn.example.com/<id>.png). */
export function withImages(cart: Cart): Cart {
  return {
    ...cart,
    items: cart.items.map((item) => ({ ...item, image_url: `https://cdn.example.com/${item.id}.png` })),
  };
}

/** The cart with image_url removed from every item, as signing does first. */
export function withoutImages(cart: Cart): Cart {
  return { ...cart, items: cart.items.map(({ image_url: _, ...item }) => item) };
}

/**
 * The cart with its items sorted by id as signing sorts them: by UTF-16 code unit (JavaScript's `<`),
 * stably, an item without an id counting as ''.
 */
export function sortedItems(cart: Cart): Cart {
  const id = (item: Cart['items'][number]) => item.id ?? '';
  return { ...cart, items: [...cart.items].sort((a, b) => (id(a) < id(b) ? -1 : id(a) > id(b) ? 1 : 0)) };
}

/** The cart without its fees (what an SDK from before fees signed). */
export function withoutFees(cart: Cart): Cart {
  const { fees: _, ...rest } = cart;
  return rest;
}
