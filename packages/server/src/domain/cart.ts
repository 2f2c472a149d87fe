// Cart rules beyond the wire schema (docs/api.md#cart): the currency code, https images, metadata key
// lengths and the total rule, plus the sums the split engine spreads.
import type { Cart } from '@group-checkout/node';
import { isCurrencyCode } from './currencies.ts';
import { MAX_AMOUNT } from './money.ts';

/** Cart bounds (docs/api.md#cart). Lengths count Unicode code points, as JSON Schema's maxLength does. */
export const CART_LIMITS = {
  maxItems: 100,
  maxFees: 20,
  maxMetadataKeys: 50,
  maxMetadataKeyLength: 40,
  maxStringLength: 500,
  minTotal: 1,
  maxTotal: MAX_AMOUNT,
  maxQuantity: 10_000,
} as const;

/**
 * The cart rules a schema cannot say, one sentence each naming the exact path; [] when the cart keeps
 * them. The cart has passed the wire schema (wire/schemas.ts: fields, types, bounds and sizes), which
 * is the one place for every other rule: the ISO 4217 code, https thumbnails, metadata key lengths, and
 * the total adding up to the items, tax, shipping and fees.
 */
export function checkCart(cart: Cart): string[] {
  const errors: string[] = [];
  if (!isCurrencyCode(cart.currency)) {
    errors.push(
      `cart.currency must be a lowercase ISO 4217 code such as "usd" or "eur", got ${JSON.stringify(truncate(cart.currency))}`,
    );
  }
  for (const [index, item] of cart.items.entries()) {
    if (item.image_url !== undefined && !isHttpsUrl(item.image_url))
      errors.push(`cart.items[${index}].image_url must be an https URL`);
  }
  for (const key of Object.keys(cart.metadata ?? {})) {
    if (codePointLength(key, CART_LIMITS.maxMetadataKeyLength) > CART_LIMITS.maxMetadataKeyLength) {
      errors.push(
        `cart.metadata key ${JSON.stringify(truncate(key))} must be at most ` +
          `${CART_LIMITS.maxMetadataKeyLength} characters`,
      );
    }
  }
  const computed = sumCart(cart);
  if (BigInt(cart.total) !== computed) {
    errors.push(`cart.total is ${cart.total} but the items, tax, shipping and fees add up to ${computed}`);
  }
  return errors;
}

/** tax + shipping + sum(fees.amount): what an itemized split spreads over the members. */
export function cartExtras(cart: Cart): number {
  return toSafeNumber(extrasOf(cart), 'the cart extras');
}

function sumCart(cart: Cart): bigint {
  let sum = extrasOf(cart);
  for (const item of cart.items) sum += BigInt(item.quantity) * BigInt(item.unit_price);
  return sum;
}

function extrasOf(cart: Cart): bigint {
  let sum = BigInt(cart.tax ?? 0) + BigInt(cart.shipping ?? 0);
  for (const fee of cart.fees ?? []) sum += BigInt(fee.amount);
  return sum;
}

function isHttpsUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'https:' && url.hostname.length > 0;
  } catch {
    return false;
  }
}

/** Code points in `text`, counted exactly only when the answer could be near `limit`. */
function codePointLength(text: string, limit: number): number {
  // A code point is one or two UTF-16 code units, so length bounds the count from both sides.
  if (text.length <= limit || text.length > 2 * limit) return text.length;
  let count = 0;
  for (const _ of text) count++;
  return count;
}

/** Long keys are cut in messages, so that an error cannot be made arbitrarily large by its input. */
function truncate(text: string): string {
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

function toSafeNumber(value: bigint, what: string): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`${what} is too large: ${value}`);
  return Number(value);
}
