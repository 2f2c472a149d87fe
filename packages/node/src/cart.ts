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
  return serializeCart(cart);
}

/** How a cart is serialized for signing; every option at its default gives the canonical form. */
export interface CartSerialization {
  /** Leave image_url in the items (canonical: removed). */
  keepImageUrl?: boolean;
  /** Keep the items in request order (canonical: sorted by id). */
  requestOrder?: boolean;
  /** Leave the fees out (canonical: kept; signers before SDK 0.1.7 left them out). */
  omitFees?: boolean;
  /** Keep object keys in the order given (canonical: sorted by UTF-16 code units). */
  unsortedKeys?: boolean;
  /**
   * Whitespace: none (canonical), `indented` as JSON.stringify(value, null, 2) writes it, or `spaced`
   * as Python's json.dumps writes it by default (", " and ": ").
   */
  layout?: 'compact' | 'indented' | 'spaced';
  /** With `indented`, one level of indentation: two spaces (JSON.stringify(value, null, 2)), four, a tab. */
  indentUnit?: string;
}

/**
 * The cart as signing would serialize it, optionally with the common mistakes of a merchant's signer
 * (the service's signature diagnosis signs these variants to name the mistake). This is the one
 * implementation of the canonical form: canonicalCart is serializeCart(cart).
 */
export function serializeCart(cart: Cart, options: CartSerialization = {}): string {
  if (cart === null || typeof cart !== 'object' || Array.isArray(cart)) {
    throw new TypeError('canonicalCart expects the cart object');
  }
  if (!Array.isArray(cart.items)) {
    throw new TypeError('canonicalCart expects cart.items to be an array');
  }
  const items = options.keepImageUrl ? [...cart.items] : cart.items.map((item) => withoutImageUrl(item));
  // Array.prototype.sort is stable (ES2019), so items with equal ids keep their request order.
  if (!options.requestOrder) items.sort((a, b) => compareCodeUnits(itemId(a), itemId(b)));
  // Spreading keeps the key order as sent, and `items` keeps its place: that order matters when unsorted.
  const copy: Record<string, unknown> = { ...cart, items };
  if (options.omitFees) delete copy.fees;
  const format = {
    sortKeys: !options.unsortedKeys,
    layout: options.layout ?? 'compact',
    unit: options.indentUnit ?? '  ',
  };
  return writeJson(copy, 'cart', format, '');
}

/**
 * Any JSON value in RFC 8785 (JCS) form: object keys sorted by UTF-16 code units, no whitespace. Two
 * values that differ only in key order or layout serialize to the same text.
 */
export function canonicalJson(value: unknown): string {
  return writeJson(value, 'value', CANONICAL, '');
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
 * RFC 8785 for the JSON values a cart holds, when keys are sorted and the layout is compact. Numbers and
 * strings use JSON.stringify, which is what JCS specifies (ECMAScript number serialization; lone
 * surrogates come out as \uXXXX escapes). Object members whose value is undefined are left out, as
 * JSON.stringify leaves them out of the request body.
 */
interface JsonFormat {
  sortKeys: boolean;
  layout: 'compact' | 'indented' | 'spaced';
  /** One level of indentation, with the `indented` layout. */
  unit: string;
}

const CANONICAL: JsonFormat = { sortKeys: true, layout: 'compact', unit: '' };

function writeJson(value: unknown, path: string, format: JsonFormat, indent: string): string {
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
      const { sortKeys, layout } = format;
      const inner = `${indent}${format.unit}`;
      const open = layout === 'indented' ? `\n${inner}` : '';
      const close = layout === 'indented' ? `\n${indent}` : '';
      const separator = layout === 'indented' ? `,\n${inner}` : layout === 'spaced' ? ', ' : ',';
      const colon = layout === 'compact' ? ':' : ': ';
      if (Array.isArray(value)) {
        if (value.length === 0) return '[]';
        const elements = value.map((element, index) =>
          writeJson(element ?? null, `${path}[${index}]`, format, inner),
        );
        return `[${open}${elements.join(separator)}${close}]`;
      }
      const record = value as Record<string, unknown>;
      const keys = Object.keys(record).filter((key) => record[key] !== undefined);
      if (sortKeys) keys.sort(compareCodeUnits);
      if (keys.length === 0) return '{}';
      const members = keys.map(
        (key) => `${JSON.stringify(key)}${colon}${writeJson(record[key], `${path}.${key}`, format, inner)}`,
      );
      return `{${open}${members.join(separator)}${close}}`;
    }
    default:
      throw new TypeError(`${path} is a ${typeof value}; a signed cart can only hold JSON values`);
  }
}
