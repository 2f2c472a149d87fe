// The cart and its signature (docs/api.md#cart-signature): the one module that computes the canonical form.
// The service, this helper and the example merchant all import it, so they cannot disagree.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** A line of the cart, as sent on the wire (docs/api.md#cart-fields). */
export interface CartItem {
  /** Merchant SKU or line id; items are sorted by it for the signature. */
  id?: string;
  name: string;
  /** At least 1. */
  quantity: number;
  /** Smallest currency unit (cents for USD), at least 0. */
  unit_price: number;
  /** HTTPS thumbnail; not part of the signature. */
  image_url?: string;
}

/** A fee line of the cart (docs/api.md#cart-fields). */
export interface CartFee {
  id: string;
  label: string;
  /** Smallest currency unit. */
  amount: number;
}

/** The cart as sent on the wire (docs/api.md#cart-fields). All amounts are integers in the smallest currency unit. */
export interface Cart {
  total: number;
  /** Lowercase ISO 4217, for example 'usd'. */
  currency: string;
  items: CartItem[];
  tax?: number;
  shipping?: number;
  fees?: CartFee[];
  /** String values; `order_ref` carries the merchant's own order id. */
  metadata?: Record<string, string>;
}

/** 32 bytes of HMAC-SHA256 as hex. */
const SIGNATURE_HEX = /^[0-9a-f]{64}$/i;

/**
 * The exact string that is signed: image_url removed from every item, items stably sorted by id
 * (UTF-16 code units, a missing id as ""), then RFC 8785 (JCS) serialization. The cart is not changed.
 */
export function canonicalCart(cart: Cart): string {
  if (cart === null || typeof cart !== 'object' || Array.isArray(cart)) {
    throw new TypeError('canonicalCart expects the cart object');
  }
  if (!Array.isArray(cart.items)) {
    throw new TypeError('canonicalCart expects cart.items to be an array');
  }
  const items = cart.items.map((item) => withoutImageUrl(item));
  // Array.prototype.sort is stable (ES2019), so items with equal ids keep their request order.
  items.sort((a, b) => compareCodeUnits(itemId(a), itemId(b)));
  return serializeJcs({ ...cart, items }, 'cart');
}

/** HMAC-SHA256 of canonicalCart(cart), keyed with the UTF-8 bytes of the signing secret: 64 lowercase hex. */
export function signCart(cart: Cart, signingSecret: string): string {
  assertSigningSecret(signingSecret, 'signCart');
  return createHmac('sha256', Buffer.from(signingSecret, 'utf8'))
    .update(Buffer.from(canonicalCart(cart), 'utf8'))
    .digest('hex');
}

/**
 * Whether `signature` is the cart's signature under `signingSecret`. Hex in either case is accepted;
 * the comparison takes constant time. A signature that is not 64 hex characters, or a cart that cannot
 * be canonicalized, gives false rather than an exception: neither can be a valid signature.
 */
export function verifyCartSignature(cart: Cart, signature: string, signingSecret: string): boolean {
  assertSigningSecret(signingSecret, 'verifyCartSignature');
  if (typeof signature !== 'string' || !SIGNATURE_HEX.test(signature)) return false;
  let expected: string;
  try {
    expected = signCart(cart, signingSecret);
  } catch {
    return false;
  }
  return timingSafeEqual(Buffer.from(signature, 'hex'), Buffer.from(expected, 'hex'));
}

function assertSigningSecret(signingSecret: unknown, caller: string): void {
  if (typeof signingSecret !== 'string' || signingSecret.length === 0) {
    throw new TypeError(`${caller} needs the cart signing secret (svc_sig_…) as a non-empty string`);
  }
}

function withoutImageUrl(item: unknown): unknown {
  if (item === null || typeof item !== 'object' || Array.isArray(item)) return item;
  const { image_url: _imageUrl, ...rest } = item as Record<string, unknown>;
  return rest;
}

function itemId(item: unknown): string {
  if (item === null || typeof item !== 'object') return '';
  const id = (item as { id?: unknown }).id;
  return typeof id === 'string' ? id : '';
}

/** JavaScript's own string order, which compares UTF-16 code units (not code points). */
function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * RFC 8785 for the JSON values a cart holds. Numbers and strings use JSON.stringify, which is what JCS
 * specifies (ECMAScript number serialization; lone surrogates come out as \uXXXX escapes). Object
 * members whose value is undefined are left out, as JSON.stringify leaves them out of the request body.
 */
function serializeJcs(value: unknown, path: string): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) {
        throw new TypeError(`${path} is ${value}; a signed cart can only hold finite numbers`);
      }
      return JSON.stringify(value);
    case 'object': {
      if (Array.isArray(value)) {
        const elements = value.map((element, index) => serializeJcs(element ?? null, `${path}[${index}]`));
        return `[${elements.join(',')}]`;
      }
      const record = value as Record<string, unknown>;
      const members: string[] = [];
      for (const key of Object.keys(record).sort(compareCodeUnits)) {
        if (record[key] === undefined) continue;
        members.push(`${JSON.stringify(key)}:${serializeJcs(record[key], `${path}.${key}`)}`);
      }
      return `{${members.join(',')}}`;
    }
    default:
      throw new TypeError(`${path} is a ${typeof value}; a signed cart can only hold JSON values`);
  }
}
