// Checks a cart signature and, when it is wrong, works out why: it re-signs the cart the ways merchants
// commonly get wrong (docs/api.md#cart-signature) and names the mistake whose signature matches, before the checklist.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Cart } from '@group-checkout/node';
import { canonicalCart, serializeCart, signCart } from '@group-checkout/node';

/**
 * The four signing steps of docs/api.md#cart-signature, as the `details` of an invalid-signature error.
 * @internal Exported for its tests.
 */
export const CART_SIGNATURE_CHECKLIST: readonly string[] = Object.freeze([
  'Take the cart exactly as sent and remove image_url from every item.',
  'Sort the items by id, comparing UTF-16 code units as JavaScript does; an item without id sorts as "", ' +
    'and items with equal ids keep their order.',
  'Serialize with RFC 8785 (JCS): object keys sorted by UTF-16 code units, no whitespace, strings escaped ' +
    'as JSON.stringify escapes them; keep tax, shipping, fees and metadata.',
  'Sign the UTF-8 bytes with HMAC-SHA256 keyed with the cart signing secret (svc_sig_…), never an API key, ' +
    'and send the 64 hexadecimal characters.',
]);

/** @internal Exported for its tests. */
export type SignatureMistake =
  | 'signature_format'
  | 'secret_api_key'
  | 'publishable_key'
  | 'image_url_included'
  | 'items_unsorted'
  | 'fees_omitted'
  | 'keys_unsorted'
  | 'whitespace';

export interface SignatureCheckInput {
  cart: Cart;
  /** As received: the body's `signature` or the X-Service-Signature header. */
  signature: unknown;
  signingSecret: string;
  /** Keys the merchant may have signed with by mistake; the API key of the request, when it is known. */
  knownWrongKeys?: { secretApiKey?: string; publishableKey?: string };
}

export type SignatureCheck =
  | { valid: true }
  | {
      valid: false;
      /** The mistakes recognized, one sentence each, then CART_SIGNATURE_CHECKLIST. */
      details: string[];
      /** The same mistakes as codes, in the same order, for logs and tests. */
      mistakes: SignatureMistake[];
    };

/** The mistakes a re-signed variant can reveal; a malformed signature is seen without re-signing. */
type VariantMistake = Exclude<SignatureMistake, 'signature_format'>;

const MISTAKE_MESSAGES: Readonly<Record<Exclude<VariantMistake, 'whitespace'>, string>> = {
  secret_api_key:
    'The signature was made with your secret API key; sign with the cart signing secret (svc_sig_…) instead.',
  publishable_key:
    'The signature was made with your publishable key; ' +
    'sign with the cart signing secret (svc_sig_…) instead.',
  image_url_included: 'image_url was left in the signed items; remove it from every item before signing.',
  items_unsorted:
    'The items were signed in request order; sort them by id (UTF-16 code units, a missing id as "") ' +
    'before signing.',
  fees_omitted: 'fees were left out of the signed cart; sign the whole cart, fees included.',
  keys_unsorted:
    'The object keys were not sorted (as plain JSON.stringify leaves them); serialize with RFC 8785 (JCS), ' +
    'keys sorted by UTF-16 code units.',
};

const HEX_SIGNATURE = /^[0-9a-f]{64}$/i;
// 32 bytes in base64 (44 characters with padding) or base64url (43 without).
const BASE64_SIGNATURE = /^(?:[A-Za-z0-9+/]{43}=|[A-Za-z0-9_-]{43})$/;

/**
 * Whitespace a merchant's serializer may have added: indentation (by two spaces, four or a tab), or
 * spaces after ':' and ','.
 */
type Layout = 'compact' | 'indented' | 'indented4' | 'tabs' | 'spaced';
const LAYOUTS: readonly Layout[] = ['compact', 'indented', 'indented4', 'tabs', 'spaced'];
const INDENT_UNITS: Partial<Record<Layout, string>> = { indented: '  ', indented4: '    ', tabs: '\t' };

interface Variant {
  key: 'signing' | 'secretApiKey' | 'publishableKey';
  imageUrlKept: boolean;
  requestOrder: boolean;
  feesOmitted: boolean;
  keysUnsorted: boolean;
  layout: Layout;
}

/**
 * Whether `signature` is the cart's signature under `signingSecret`, and if not, why not. Never throws
 * for a malformed signature; every comparison takes constant time.
 */
export function diagnoseCartSignature(input: SignatureCheckInput): SignatureCheck {
  const { cart, signature, signingSecret, knownWrongKeys = {} } = input;
  const mistakes: SignatureMistake[] = [];
  const details: string[] = [];

  let received: Buffer | undefined;
  if (typeof signature === 'string' && HEX_SIGNATURE.test(signature)) {
    received = Buffer.from(signature, 'hex');
  } else {
    mistakes.push('signature_format');
    details.push(describeMalformedSignature(signature));
    if (typeof signature === 'string' && BASE64_SIGNATURE.test(signature)) {
      // Still worth diagnosing: the HMAC may be right and only its encoding wrong.
      received = Buffer.from(signature, signature.endsWith('=') ? 'base64' : 'base64url');
    }
  }

  let canonical: string;
  try {
    canonical = canonicalCart(cart);
  } catch (error) {
    return invalid([...details, (error as Error).message], mistakes);
  }

  if (received === undefined) return invalid(details, mistakes);
  if (matches(received, Buffer.from(signCart(cart, signingSecret), 'hex'))) {
    return mistakes.length === 0 ? { valid: true } : invalid(details, mistakes);
  }

  const keys: Record<Variant['key'], string | undefined> = {
    signing: signingSecret,
    secretApiKey: usableWrongKey(knownWrongKeys.secretApiKey, signingSecret),
    publishableKey: usableWrongKey(knownWrongKeys.publishableKey, signingSecret),
  };
  const tried = new Set<string>([`signing\u0000${canonical}`]);
  // The same serialization is signed under up to three keys: write each one once.
  const texts = new Map<string, string>();
  for (const variant of variantsByMistakeCount(cart)) {
    const key = keys[variant.key];
    if (key === undefined) continue;
    const { imageUrlKept, requestOrder, feesOmitted, keysUnsorted, layout } = variant;
    const shape = `${imageUrlKept} ${requestOrder} ${feesOmitted} ${keysUnsorted} ${layout}`;
    let text = texts.get(shape);
    if (text === undefined) {
      text = serializeVariant(cart, variant);
      texts.set(shape, text);
    }
    // The same bytes under the same key were already tried with fewer mistakes: keep that explanation.
    const id = `${variant.key}\u0000${text}`;
    if (tried.has(id)) continue;
    tried.add(id);
    if (matches(received, hmac(key, text))) {
      const found = mistakesOf(variant);
      return invalid([...details, ...found.map(describeMistake(variant))], [...mistakes, ...found]);
    }
  }
  return invalid(details, mistakes);
}

function invalid(first: string[], mistakes: SignatureMistake[]): SignatureCheck {
  return { valid: false, details: [...first, ...CART_SIGNATURE_CHECKLIST], mistakes };
}

function describeMalformedSignature(signature: unknown): string {
  const rule = 'signature must be 64 hexadecimal characters';
  if (typeof signature !== 'string') return `${rule}, got ${signature === null ? 'null' : typeof signature}`;
  if (BASE64_SIGNATURE.test(signature))
    return `${rule}; this one is base64, so encode the HMAC as hex instead`;
  if (signature.length !== 64) return `${rule}, got ${signature.length}`;
  const position = [...signature].findIndex((char) => !/[0-9a-f]/i.test(char));
  return `${rule}; character ${position + 1} is not hexadecimal`;
}

function usableWrongKey(key: string | undefined, signingSecret: string): string | undefined {
  return typeof key === 'string' && key.length > 0 && key !== signingSecret ? key : undefined;
}

function hmac(key: string, text: string): Buffer {
  return createHmac('sha256', Buffer.from(key, 'utf8')).update(Buffer.from(text, 'utf8')).digest();
}

function matches(received: Buffer, expected: Buffer): boolean {
  return received.length === expected.length && timingSafeEqual(received, expected);
}

function mistakesOf(variant: Variant): VariantMistake[] {
  const found: VariantMistake[] = [];
  if (variant.key === 'secretApiKey') found.push('secret_api_key');
  if (variant.key === 'publishableKey') found.push('publishable_key');
  if (variant.imageUrlKept) found.push('image_url_included');
  if (variant.requestOrder) found.push('items_unsorted');
  if (variant.feesOmitted) found.push('fees_omitted');
  if (variant.keysUnsorted) found.push('keys_unsorted');
  if (variant.layout !== 'compact') found.push('whitespace');
  return found;
}

function describeMistake(variant: Variant): (mistake: VariantMistake) => string {
  return (mistake) => {
    if (mistake === 'whitespace') {
      return variant.layout === 'spaced'
        ? 'The signed JSON had spaces after ":" and ","; serialize without any whitespace.'
        : 'The signed JSON was indented; serialize without any whitespace.';
    }
    return MISTAKE_MESSAGES[mistake];
  };
}

/**
 * Every combination of the common mistakes, fewest mistakes first, so that when two combinations give
 * the same bytes the simpler explanation is the one reported. At most 3 × 2 × 2 × 2 × 2 × 5 = 240, each an
 * HMAC over the cart: cheap enough for a request that is already an error.
 */
function variantsByMistakeCount(cart: Cart): Variant[] {
  const hasFees = Array.isArray(cart.fees);
  const variants: Variant[] = [];
  for (const key of ['signing', 'secretApiKey', 'publishableKey'] as const) {
    for (const imageUrlKept of [false, true]) {
      for (const requestOrder of [false, true]) {
        for (const feesOmitted of hasFees ? [false, true] : [false]) {
          for (const keysUnsorted of [false, true]) {
            for (const layout of LAYOUTS) {
              variants.push({ key, imageUrlKept, requestOrder, feesOmitted, keysUnsorted, layout });
            }
          }
        }
      }
    }
  }
  // Array.prototype.sort is stable: equal counts keep the loop order above.
  return variants.sort((a, b) => mistakesOf(a).length - mistakesOf(b).length);
}

/** The cart as a merchant making the variant's mistakes would have serialized it. */
const serializeVariant = (cart: Cart, variant: Variant): string =>
  serializeCart(cart, {
    keepImageUrl: variant.imageUrlKept,
    requestOrder: variant.requestOrder,
    omitFees: variant.feesOmitted,
    unsortedKeys: variant.keysUnsorted,
    layout: variant.layout === 'compact' || variant.layout === 'spaced' ? variant.layout : 'indented',
    indentUnit: INDENT_UNITS[variant.layout],
  });
