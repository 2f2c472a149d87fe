// The SDK's public types (docs/sdk.md). Wire objects (cart, customer) keep the API's snake_case names;
// the SDK's own options are camelCase, and `group` is converted to the wire's group_config in one place.

export interface CartItem {
  id?: string;
  name: string;
  quantity: number;
  /** Minor units of the cart's currency. */
  unit_price: number;
  image_url?: string;
  [field: string]: unknown;
}

export interface CartFee {
  name?: string;
  amount: number;
  [field: string]: unknown;
}

/** The cart as on the wire (docs/api.md#cart-fields); amounts in minor units. */
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

export type SplitMode = 'equal' | 'itemized' | 'custom' | 'percentage' | 'host-pays';

/** docs/api.md#group-config in camelCase; every field optional. */
export interface GroupOptions {
  minSize?: number;
  maxSize?: number;
  defaultMode?: SplitMode;
  allowedModes?: SplitMode[];
  expiryHours?: number;
  capture?: 'immediate' | 'on_funded';
}

export interface Customer {
  name?: string;
  email?: string;
  phone?: string;
}

/** What onError receives. `code` is the API's error code, or one of the SDK's own (docs/sdk.md#errors). */
export interface GroupCheckoutError {
  code: string;
  message: string;
  request_id?: string;
}

export interface Callbacks {
  onGroupCreated?: (sessionId: string) => void;
  onGroupFunded?: (sessionId: string, orderRef: string | null) => void;
  onGroupExpired?: (sessionId: string) => void;
  onGroupCancelled?: (sessionId: string) => void;
  onError?: (error: GroupCheckoutError) => void;
}

export interface Appearance {
  /** Default true: the button fills its container's width. */
  fullWidth?: boolean;
  /** Default 'md'. */
  size?: 'sm' | 'md' | 'lg';
  /** Default 'primary'. */
  variant?: 'primary' | 'outline' | 'dark';
}

export type GetSignature = (cart: Cart) => string | Promise<string>;

export type Theme = 'auto' | 'light' | 'dark';

/** The language of the button, the modal and the hosted pages; `auto` follows the browser. */
export type Locale = 'auto' | 'en' | 'es' | 'fr' | 'de' | 'it' | 'pt' | 'nl' | 'ja';

export interface InitOptions {
  merchantId: string;
  publishableKey: string;
  /** Required unless every button passes `signature`. Usually a call to the merchant's POST /api/cart/sign. */
  getSignature?: GetSignature;
  /** Must match the key: svc_pk_test_ is the sandbox, svc_pk_live_ production. */
  environment?: 'sandbox' | 'production';
  theme?: Theme;
  /** The language of every button, its modal and the hosted pages (default `auto`: the browser's). */
  locale?: Locale;
  /** The merchant API, {base_url}. */
  apiBaseUrl?: string;
  /** The hosted pages, {pay_url}; the iframe's origin. */
  payBaseUrl?: string;
}

export interface ButtonOptions {
  cart: Cart;
  group?: GroupOptions;
  /** A signature computed beforehand; skips getSignature. */
  signature?: string;
  /** Overrides the init-level getSignature for this button. */
  getSignature?: GetSignature;
  customer?: Customer;
  success_url?: string;
  cancel_url?: string;
  callbacks?: Callbacks;
  appearance?: Appearance;
  /** This button's language, over init's (default: init's, else `auto`). */
  locale?: Locale;
}

export interface ButtonInstance {
  /** Puts the button into the element (or the first element matching the selector). */
  mount(target: string | Element): ButtonInstance;
  /** Takes the button out of the page; the session, if any, is kept. */
  unmount(): void;
  /** What a click does: creates the session (once), then opens the checkout. Never rejects. */
  open(): Promise<void>;
  /** Unmounts, closes the checkout, stops polling and listening; the instance is done. */
  destroy(): void;
}
