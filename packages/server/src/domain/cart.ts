// Cart rules beyond the JSON schema (DESIGN.md §6): the currency, the size limits, https images and the
// total rule. checkCart re-checks the basic shape too, so it is safe on any parsed JSON value.
import type { Cart } from '@group-checkout/node';
import { isCurrencyCode } from './currencies.ts';
import { MAX_AMOUNT } from './money.ts';

/** Bounds from DESIGN.md §6. Lengths count Unicode code points, as JSON Schema's maxLength does. */
export const CART_LIMITS = {
  maxItems: 100,
  maxFees: 20,
  maxMetadataKeys: 50,
  maxMetadataKeyLength: 40,
  maxStringLength: 500,
  minTotal: 1,
  maxTotal: MAX_AMOUNT,
} as const;

const CART_FIELDS = new Set(['total', 'currency', 'items', 'tax', 'shipping', 'fees', 'metadata']);
const ITEM_FIELDS = new Set(['id', 'name', 'quantity', 'unit_price', 'image_url']);
const FEE_FIELDS = new Set(['id', 'label', 'amount']);

/**
 * Every rule the cart breaks, one sentence each naming the exact path (`cart.items[2].quantity must be
 * at least 1`); [] when the cart is valid. The total rule is checked only once every amount is an integer.
 */
export function checkCart(cart: Cart): string[] {
  const errors: string[] = [];
  const value: unknown = cart;
  if (!isRecord(value)) return ['cart must be an object'];
  rejectUnknownFields(value, CART_FIELDS, 'cart', errors);

  // The range is its own message below, so any integer passes here.
  let amountsAreIntegers = checkInteger(value.total, 'cart.total', Number.NEGATIVE_INFINITY, true, errors);
  if (
    Number.isSafeInteger(value.total) &&
    ((value.total as number) < CART_LIMITS.minTotal || (value.total as number) > CART_LIMITS.maxTotal)
  ) {
    errors.push(
      `cart.total must be between ${CART_LIMITS.minTotal} and ${CART_LIMITS.maxTotal}, got ${value.total}`,
    );
  }

  if (value.currency === undefined) errors.push('cart.currency is required');
  else if (!isCurrencyCode(value.currency)) {
    const got = typeof value.currency === 'string' ? truncate(value.currency) : value.currency;
    errors.push(`cart.currency must be a lowercase ISO 4217 code, got ${JSON.stringify(got)}`);
  }

  if (value.items === undefined) errors.push('cart.items is required');
  else if (!Array.isArray(value.items)) errors.push('cart.items must be an array');
  else {
    if (value.items.length < 1) errors.push('cart.items must have at least 1 item');
    if (value.items.length > CART_LIMITS.maxItems) {
      errors.push(`cart.items has ${value.items.length} items; at most ${CART_LIMITS.maxItems} are allowed`);
    }
    for (const [index, item] of value.items.entries()) {
      if (!checkItem(item, `cart.items[${index}]`, errors)) amountsAreIntegers = false;
    }
  }

  if (!checkInteger(value.tax, 'cart.tax', 0, false, errors)) amountsAreIntegers = false;
  if (!checkInteger(value.shipping, 'cart.shipping', 0, false, errors)) amountsAreIntegers = false;

  if (value.fees !== undefined) {
    if (!Array.isArray(value.fees)) {
      errors.push('cart.fees must be an array');
      amountsAreIntegers = false;
    } else {
      if (value.fees.length > CART_LIMITS.maxFees) {
        errors.push(`cart.fees has ${value.fees.length} lines; at most ${CART_LIMITS.maxFees} are allowed`);
      }
      for (const [index, fee] of value.fees.entries()) {
        if (!checkFee(fee, `cart.fees[${index}]`, errors)) amountsAreIntegers = false;
      }
    }
  }

  if (value.metadata !== undefined) checkMetadata(value.metadata, errors);

  if (amountsAreIntegers && Array.isArray(value.items)) {
    const computed = sumCart(cart);
    if (BigInt(cart.total) !== computed) {
      errors.push(`cart.total is ${cart.total} but the items, tax, shipping and fees add up to ${computed}`);
    }
  }
  return errors;
}

/** sum(quantity × unit_price) + tax + shipping + sum(fees.amount), for a cart whose amounts are integers. */
export function computeCartTotal(cart: Cart): number {
  return toSafeNumber(sumCart(cart), 'the cart total');
}

/** quantity × unit_price of each item, in item order. */
export function cartSubtotals(cart: Cart): number[] {
  return cart.items.map((item, index) =>
    toSafeNumber(BigInt(item.quantity) * BigInt(item.unit_price), `cart.items[${index}] subtotal`),
  );
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

function checkItem(item: unknown, path: string, errors: string[]): boolean {
  if (!isRecord(item)) {
    errors.push(`${path} must be an object`);
    return false;
  }
  rejectUnknownFields(item, ITEM_FIELDS, path, errors);
  checkString(item.id, `${path}.id`, false, CART_LIMITS.maxStringLength, errors);
  checkString(item.name, `${path}.name`, true, CART_LIMITS.maxStringLength, errors);
  const quantityOk = checkInteger(item.quantity, `${path}.quantity`, 1, true, errors);
  const priceOk = checkInteger(item.unit_price, `${path}.unit_price`, 0, true, errors);
  if (
    item.image_url !== undefined &&
    checkString(item.image_url, `${path}.image_url`, false, CART_LIMITS.maxStringLength, errors) &&
    !isHttpsUrl(item.image_url as string)
  ) {
    errors.push(`${path}.image_url must be an https URL`);
  }
  return quantityOk && priceOk;
}

function checkFee(fee: unknown, path: string, errors: string[]): boolean {
  if (!isRecord(fee)) {
    errors.push(`${path} must be an object`);
    return false;
  }
  rejectUnknownFields(fee, FEE_FIELDS, path, errors);
  checkString(fee.id, `${path}.id`, true, CART_LIMITS.maxStringLength, errors);
  checkString(fee.label, `${path}.label`, true, CART_LIMITS.maxStringLength, errors);
  return checkInteger(fee.amount, `${path}.amount`, 0, true, errors);
}

function checkMetadata(metadata: unknown, errors: string[]): void {
  if (!isRecord(metadata)) {
    errors.push('cart.metadata must be an object with string values');
    return;
  }
  const keys = Object.keys(metadata);
  if (keys.length > CART_LIMITS.maxMetadataKeys) {
    errors.push(`cart.metadata has ${keys.length} keys; at most ${CART_LIMITS.maxMetadataKeys} are allowed`);
  }
  for (const key of keys) {
    const path = metadataPath(key);
    if (codePointLength(key, CART_LIMITS.maxMetadataKeyLength) > CART_LIMITS.maxMetadataKeyLength) {
      errors.push(
        `cart.metadata key ${JSON.stringify(truncate(key))} must be at most ` +
          `${CART_LIMITS.maxMetadataKeyLength} characters`,
      );
    }
    if (typeof metadata[key] !== 'string') errors.push(`${path} must be a string`);
    else checkString(metadata[key], path, false, CART_LIMITS.maxStringLength, errors);
  }
}

/** Records a message and answers false unless `value` is an integer ≥ min (or absent when optional). */
function checkInteger(
  value: unknown,
  path: string,
  min: number,
  required: boolean,
  errors: string[],
): boolean {
  if (value === undefined) {
    if (required) errors.push(`${path} is required`);
    return !required;
  }
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
    errors.push(`${path} must be an integer`);
    return false;
  }
  if (value < min) {
    errors.push(`${path} must be at least ${min}`);
    return false;
  }
  return true;
}

function checkString(value: unknown, path: string, required: boolean, maxLength: number, errors: string[]) {
  if (value === undefined) {
    if (required) errors.push(`${path} is required`);
    return false;
  }
  if (typeof value !== 'string') {
    errors.push(`${path} must be a string`);
    return false;
  }
  if (required && value.length === 0) {
    errors.push(`${path} must not be empty`);
    return false;
  }
  if (codePointLength(value, maxLength) > maxLength) {
    errors.push(`${path} must be at most ${maxLength} characters`);
    return false;
  }
  return true;
}

function rejectUnknownFields(
  record: Record<string, unknown>,
  known: ReadonlySet<string>,
  path: string,
  errors: string[],
) {
  for (const key of Object.keys(record)) {
    if (!known.has(key)) errors.push(`${path} has an unknown field ${JSON.stringify(truncate(key))}`);
  }
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

function metadataPath(key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key)
    ? `cart.metadata.${key}`
    : `cart.metadata[${JSON.stringify(truncate(key))}]`;
}

/** Long keys are cut in messages, so that an error cannot be made arbitrarily large by its input. */
function truncate(text: string): string {
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function toSafeNumber(value: bigint, what: string): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`${what} is too large: ${value}`);
  return Number(value);
}
