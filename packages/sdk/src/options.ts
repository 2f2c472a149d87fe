// Checks the options given to init() and button() and throws an Error that names the option and says what
// to send (docs/sdk.md#options). These throw at set-up time, in the merchant's code, never from a click.
import type { ButtonOptions, GetSignature, GroupOptions, InitOptions, Locale, Theme } from './types.ts';

const LOCALE_OPTIONS: readonly Locale[] = ['auto', 'en', 'es', 'fr', 'de', 'it', 'pt', 'nl', 'ja'];

export interface Config {
  merchantId: string;
  publishableKey: string;
  getSignature: GetSignature | undefined;
  theme: Theme | undefined;
  locale: Locale | undefined;
  apiBaseUrl: string;
  payBaseUrl: string;
}

const fail = (where: string, message: string): never => {
  throw new Error(`GroupCheckout.${where}: ${message}`);
};

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

const show = (v: unknown): string => (typeof v === 'string' ? JSON.stringify(v) : String(v));

function oneOf<T extends string>(where: string, name: string, value: unknown, allowed: readonly T[]): T {
  if (!allowed.includes(value as T)) {
    fail(where, `${name} must be one of ${allowed.map((a) => `"${a}"`).join(', ')} (got ${show(value)})`);
  }
  return value as T;
}

function functionOrUndefined(where: string, name: string, value: unknown): GetSignature | undefined {
  if (value !== undefined && typeof value !== 'function') {
    fail(where, `${name} must be a function (cart) => signature`);
  }
  return value as GetSignature | undefined;
}

/** An absolute http(s) URL, without a trailing slash. */
function baseUrl(name: string, value: unknown): string {
  let url: URL | undefined;
  try {
    url = new URL(String(value));
  } catch {}
  if (typeof value !== 'string' || !url || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    fail(
      'init',
      `${name} must be an absolute http(s) URL such as "https://pay.example.com" (got ${show(value)})`,
    );
  }
  return (value as string).replace(/\/+$/, '');
}

/**
 * Where the script was loaded from: {pay_url}/sdk/v1/group-checkout.js gives {pay_url}. Read while the
 * classic script runs (document.currentScript is null later, and for ES modules).
 */
const scriptBase = ((): string | undefined => {
  const src =
    typeof document === 'undefined' ? undefined : (document.currentScript as HTMLScriptElement)?.src;
  return src?.match(/^(https?:\/\/.+?)\/sdk\/v1\/group-checkout\.js(?:[?#].*)?$/)?.[1];
})();

/**
 * The addresses of the service that served this file: its PUBLIC_PAY_URL and PUBLIC_BASE_URL, written over
 * the placeholder as it serves {pay_url}/sdk/v1/ (docs/sdk.md#init), %-encoded JSON. A copy bundled from
 * the npm package keeps the placeholder, and knows none.
 */
const SERVED_BY = '__GROUP_CHECKOUT_SERVED_BY__';
const servedBy = ((): { pay?: string; api?: string } => {
  if (SERVED_BY.charAt(0) !== '%') return {};
  try {
    return JSON.parse(decodeURIComponent(SERVED_BY));
  } catch {
    return {};
  }
})();

export function initConfig(options: InitOptions): Config {
  const where = 'init';
  if (!isObject(options))
    fail(where, 'pass an options object: GroupCheckout.init({ merchantId, publishableKey, … })');
  const o = options as unknown as Record<string, unknown>;
  const known = [
    'merchantId',
    'publishableKey',
    'getSignature',
    'environment',
    'theme',
    'locale',
    'apiBaseUrl',
    'payBaseUrl',
  ];
  for (const key of Object.keys(o)) {
    if (!known.includes(key)) fail(where, `unknown option ${key}; the options are ${known.join(', ')}`);
  }
  if (typeof o.merchantId !== 'string' || !/^svc_merch_[A-Za-z0-9]+$/.test(o.merchantId)) {
    fail(where, `merchantId must be your merchant id, starting svc_merch_ (got ${show(o.merchantId)})`);
  }
  const key = o.publishableKey;
  if (typeof key !== 'string' || !/^svc_pk_(test|live)_[A-Za-z0-9]+$/.test(key)) {
    const secret = typeof key === 'string' && /^svc_s(k|ig)_/.test(key);
    fail(
      where,
      secret
        ? 'publishableKey must be the publishable key (svc_pk_test_… or svc_pk_live_…); this is a secret, which must never reach a browser: keep it on your server and roll it'
        : `publishableKey must start svc_pk_test_ (sandbox) or svc_pk_live_ (production) (got ${show(key)})`,
    );
  }
  const keyEnvironment = (key as string).startsWith('svc_pk_test_') ? 'sandbox' : 'production';
  if (o.environment !== undefined) {
    const environment = oneOf(where, 'environment', o.environment, ['sandbox', 'production']);
    if (environment !== keyEnvironment) {
      fail(
        where,
        `environment is "${environment}" but publishableKey is a ${keyEnvironment === 'sandbox' ? 'test key (svc_pk_test_…), which is the sandbox' : 'live key (svc_pk_live_…), which is production'}; the key decides, so fix one of them`,
      );
    }
  }
  const theme = o.theme === undefined ? undefined : oneOf(where, 'theme', o.theme, ['auto', 'light', 'dark']);
  const payBaseUrl = baseUrl(
    'payBaseUrl',
    o.payBaseUrl ?? servedBy.pay ?? scriptBase ?? 'http://localhost:4000',
  );
  const apiBaseUrl = baseUrl(
    'apiBaseUrl',
    o.apiBaseUrl ?? servedBy.api ?? (scriptBase ? `${scriptBase}/v1` : 'http://localhost:4000/v1'),
  );
  return {
    merchantId: o.merchantId as string,
    publishableKey: key as string,
    getSignature: functionOrUndefined(where, 'getSignature', o.getSignature),
    theme,
    locale: o.locale === undefined ? undefined : oneOf(where, 'locale', o.locale, LOCALE_OPTIONS),
    apiBaseUrl,
    payBaseUrl,
  };
}

/** https, or http on a loopback host for development (as the API accepts in the sandbox). */
function redirectUrl(name: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(String(value));
  } catch {}
  const loopback = url && /^(localhost|.+\.localhost|127\.\d+\.\d+\.\d+|\[::1\])$/.test(url.hostname);
  if (
    typeof value !== 'string' ||
    !url ||
    !(url.protocol === 'https:' || (url.protocol === 'http:' && loopback))
  ) {
    fail(
      'button',
      `${name} must be an absolute https URL (http only on localhost or 127.0.0.1, for development) (got ${show(value)})`,
    );
  }
  return value as string;
}

const GROUP_FIELDS: Record<keyof GroupOptions, string> = {
  minSize: 'min_size',
  maxSize: 'max_size',
  defaultMode: 'default_mode',
  allowedModes: 'allowed_modes',
  expiryHours: 'expiry_hours',
  capture: 'capture',
};

/** `group` (camelCase) → the wire's group_config (snake_case); the API checks the values' rules. */
function groupConfig(group: unknown): Record<string, unknown> | undefined {
  if (group === undefined) return undefined;
  if (!isObject(group)) fail('button', 'group must be an object such as { minSize: 2, maxSize: 6 }');
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(group as Record<string, unknown>)) {
    const wire = GROUP_FIELDS[name as keyof GroupOptions];
    if (!wire) {
      const camel = Object.entries(GROUP_FIELDS).find(([, w]) => w === name)?.[0];
      fail(
        'button',
        camel
          ? `group.${name} is the wire name; the SDK takes group.${camel}`
          : `unknown option group.${name}; the options are ${Object.keys(GROUP_FIELDS).join(', ')}`,
      );
    }
    if (value !== undefined) out[wire as string] = value;
  }
  return out;
}

export interface ButtonConfig {
  body: Record<string, unknown>;
  signature: string | undefined;
  getSignature: GetSignature | undefined;
  successUrl: string | undefined;
  cancelUrl: string | undefined;
  callbacks: NonNullable<ButtonOptions['callbacks']>;
  locale: Locale | undefined;
  fullWidth: boolean;
  size: 'sm' | 'md' | 'lg';
  variant: 'primary' | 'outline' | 'dark';
}

export function buttonConfig(options: ButtonOptions): ButtonConfig {
  const where = 'button';
  if (!isObject(options)) fail(where, 'pass an options object: GroupCheckout.button({ cart, … })');
  const o = options as unknown as Record<string, unknown>;
  const known = [
    'cart',
    'group',
    'signature',
    'getSignature',
    'customer',
    'success_url',
    'cancel_url',
    'callbacks',
    'appearance',
    'locale',
  ];
  for (const key of Object.keys(o)) {
    const hint =
      key === 'successUrl' || key === 'cancelUrl'
        ? ` (did you mean ${key === 'successUrl' ? 'success_url' : 'cancel_url'}?)`
        : '';
    if (!known.includes(key))
      fail(where, `unknown option ${key}${hint}; the options are ${known.join(', ')}`);
  }
  const cart = o.cart;
  if (!isObject(cart))
    fail(where, 'cart is required: { total, currency, items, … } as on the wire (docs/api.md#cart-fields)');
  const c = cart as Record<string, unknown>;
  if (!Number.isInteger(c.total)) {
    fail(
      where,
      `cart.total must be an integer amount in minor units, such as 2500 for 25.00 (got ${show(c.total)})`,
    );
  }
  if (typeof c.currency !== 'string' || !/^[a-z]{3}$/.test(c.currency)) {
    fail(where, `cart.currency must be a lowercase ISO 4217 code such as "usd" (got ${show(c.currency)})`);
  }
  if (!Array.isArray(c.items) || c.items.length === 0)
    fail(where, 'cart.items must be an array of at least one item');
  if (o.signature !== undefined && (typeof o.signature !== 'string' || o.signature === '')) {
    fail(where, 'signature must be the cart signature as a hex string');
  }
  if (o.customer !== undefined && !isObject(o.customer))
    fail(where, 'customer must be an object { name, email, phone }');
  const callbacks = o.callbacks ?? {};
  if (!isObject(callbacks)) fail(where, 'callbacks must be an object of functions');
  const names = ['onGroupCreated', 'onGroupFunded', 'onGroupExpired', 'onGroupCancelled', 'onError'];
  for (const [name, fn] of Object.entries(callbacks as Record<string, unknown>)) {
    if (!names.includes(name)) fail(where, `unknown callback ${name}; the callbacks are ${names.join(', ')}`);
    if (fn !== undefined && typeof fn !== 'function') fail(where, `callbacks.${name} must be a function`);
  }
  const appearance = o.appearance ?? {};
  if (!isObject(appearance)) fail(where, 'appearance must be an object { fullWidth, size, variant }');
  const a = appearance as Record<string, unknown>;
  for (const key of Object.keys(a)) {
    if (!['fullWidth', 'size', 'variant'].includes(key)) {
      fail(
        where,
        `unknown option appearance.${key}; the options are fullWidth, size, variant${key === 'label' || key === 'text' ? ' (the label "Pay as a group" is fixed; its language follows the locale option)' : ''}`,
      );
    }
  }
  if (a.fullWidth !== undefined && typeof a.fullWidth !== 'boolean') {
    fail(where, `appearance.fullWidth must be true or false (got ${show(a.fullWidth)})`);
  }
  const body: Record<string, unknown> = { cart };
  const group = groupConfig(o.group);
  if (group) body.group_config = group;
  if (o.customer) body.customer = o.customer;
  const successUrl = redirectUrl('success_url', o.success_url);
  const cancelUrl = redirectUrl('cancel_url', o.cancel_url);
  if (successUrl) body.success_url = successUrl;
  if (cancelUrl) body.cancel_url = cancelUrl;
  return {
    body,
    signature: o.signature as string | undefined,
    getSignature: functionOrUndefined(where, 'getSignature', o.getSignature),
    successUrl,
    cancelUrl,
    callbacks: callbacks as ButtonConfig['callbacks'],
    locale: o.locale === undefined ? undefined : oneOf(where, 'locale', o.locale, LOCALE_OPTIONS),
    fullWidth: a.fullWidth !== false,
    size: a.size === undefined ? 'md' : oneOf(where, 'appearance.size', a.size, ['sm', 'md', 'lg']),
    variant:
      a.variant === undefined
        ? 'primary'
        : oneOf(where, 'appearance.variant', a.variant, ['primary', 'outline', 'dark']),
  };
}
