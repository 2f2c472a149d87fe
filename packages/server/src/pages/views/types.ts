// The wire shapes the pages read: the pay-page API's answers (docs/api.md#pay-page-api), plus the page's own
// context. The server renders from them and the pages' scripts re-render from the same answers when they poll.
import type { Locale } from '../../i18n/locales.ts';
import type { Catalogue } from '../../i18n/translate.ts';

export type SplitMode = 'equal' | 'itemized' | 'custom' | 'percentage' | 'host-pays';
export type SessionStatus = 'pending' | 'funded' | 'cancelled' | 'expired';

interface PageCartItem {
  id?: string;
  name: string;
  quantity: number;
  unit_price: number;
  image_url?: string;
}

export interface PageCart {
  items: PageCartItem[];
  tax: number;
  shipping: number;
  fees: { id?: string; label?: string; amount: number }[];
}

export interface PageMember {
  id: string;
  name: string;
  amount_cents: number;
  status: string;
  is_organizer: boolean;
  // The organizer's view only:
  email?: string | null;
  basis_points?: number | null;
  items?: { item_index: number; quantity: number }[] | null;
  share_id?: string;
  share_url?: string;
  amount_due_cents?: number;
}

/** GET /api/v1/session?access=… */
export interface PageSession {
  role: 'organizer' | 'member';
  session_id: string;
  status: SessionStatus;
  merchant_name: string;
  order_ref: string | null;
  currency: string;
  total_cents: number;
  consumer_fee_rate: number;
  expires_at: string;
  capture: 'immediate' | 'on_funded';
  cart: PageCart;
  group: {
    id: string;
    size: number;
    mode: SplitMode;
    paid_amount: number;
    pending_amount: number;
    set_up: boolean;
    min_size: number;
    max_size: number;
    allowed_modes: SplitMode[];
    members: PageMember[];
  };
  join_url?: string;
  success_url?: string | null;
  cancel_url?: string | null;
}

/** GET /api/v1/shares/{shareId} */
export interface PageShare {
  share_id: string;
  session_status: SessionStatus;
  merchant_name: string;
  order_ref: string | null;
  currency: string;
  expires_at: string;
  member: { id: string; name: string; amount_cents: number; status: string };
  status: string;
  /** While `authenticating`: what the page hands the processor for the bank's step (3-D Secure). */
  next_action: { type: 'authenticate'; client_secret: string } | null;
  amount_cents: number;
  /** The service fee as a fraction of the share (0.01 is 1 %). */
  consumer_fee_rate: number;
  consumer_fee_cents: number;
  amount_due_cents: number;
  capture: 'immediate' | 'on_funded';
  failure: string | null;
  /** Why, as a code the page says in its own words (views/parts.ts failureWords). */
  failure_code: string | null;
  payment: {
    id: string | null;
    kind: string;
    amount_cents: number;
    card_brand: string | null;
    card_last4: string | null;
  } | null;
  cart: PageCart;
  /** What this share is of the cart: the member's items, their percentage, or neither. */
  split: {
    mode: SplitMode;
    items: { item_index: number; quantity: number }[] | null;
    basis_points: number | null;
  };
  group?: {
    size: number;
    paid_count: number;
    paid_amount: number;
    pending_amount: number;
    total_cents: number;
  };
}

/** What a page knows besides the API's answer, from its URL and the server. */
export interface PageContext {
  /** Where the pay-page API is: {pay_url}/api/v1. */
  apiBase: string;
  /** The Intl locale amounts, dates and times are formatted with (fr-CA, en-GB, ja). */
  locale: string;
  /** The page's language: the session's, or the reader's Accept-Language (docs/api.md#languages). */
  lang: Locale;
  /** That language's messages, and only that one's: the page's script speaks it too. */
  messages: Catalogue;
  /** The token in ?access= (session pages). */
  access?: string;
  embed: boolean;
  /** The parent window to post events to: set only when it is one of the session's recorded origins. */
  parentOrigin?: string;
  /** The sandbox takes card details on our page; with Stripe, the Payment Element does. */
  processor: 'sandbox' | 'stripe';
  stripePublishableKey?: string;
  /**
   * With Stripe: how many powers of ten Stripe's amount sits above the session currency's minor units
   * (ISK +2, MGA −2, most 0), so that the card form is given the amount Stripe will be asked to charge.
   */
  stripeAmountShift?: number;
}
