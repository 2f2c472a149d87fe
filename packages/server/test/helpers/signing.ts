// Signing by hand, written apart from the code under test, so the tests can make the mistakes that
// merchants make (wrong key, unsorted keys, whitespace) and check the service recognizes them.
import { createHmac } from 'node:crypto';
import type { Cart } from '@group-checkout/node';

export const hmacHex = (key: string, text: string): string =>
  createHmac('sha256', key).update(text, 'utf8').digest('hex');

/** JSON with object keys sorted (RFC 8785 for cart values), optionally indented. */
export function sortedJson(value: unknown, space?: number): string {
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
