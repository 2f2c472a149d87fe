// What the session suites share: a valid sample cart, creating sessions the way a merchant does (signed
// with the publishable key, or headless with the secret key), and the event rows.
import assert from 'node:assert/strict';
import { type Cart, signCart } from '@group-checkout/node';
import { type ApiClient, RELAXED_LIMITS, type TestApp, type TestMerchant } from './app.ts';

/**
 * Environment for session suites: fixed public addresses to assert links against, and the route limits
 * relaxed (RELAXED_LIMITS) so that a suite's own traffic never trips them.
 */
export const SESSION_ENV: Record<string, string> = {
  PUBLIC_BASE_URL: 'https://api.example.test/v1',
  PUBLIC_PAY_URL: 'https://pay.example.test',
  ...RELAXED_LIMITS,
};

export const PAY_URL = 'https://pay.example.test';

/** 2 × 40.00 + 1 × 10.00 + 6.00 tax + 4.00 shipping = 100.00 USD. Items are sent out of id order. */
export function sampleCart(overrides: Partial<Cart> = {}): Cart {
  return {
    total: 10_000,
    currency: 'usd',
    items: [
      { id: 'sku_dinner', name: 'Dinner for two', quantity: 2, unit_price: 4000 },
      { id: 'sku_cake', name: 'Cake', quantity: 1, unit_price: 1000 },
    ],
    tax: 600,
    shipping: 400,
    metadata: { order_ref: 'ORD-1001' },
    ...overrides,
  };
}

export interface CreateOptions {
  merchant?: TestMerchant;
  cart?: Cart;
  /** Sign with the publishable key (default) or create headless with the secret key. */
  via?: 'publishable' | 'secret';
  group_config?: Record<string, unknown>;
  customer?: Record<string, unknown>;
  extra?: Record<string, unknown>;
  /** The page's Origin with the publishable key: default the merchant's first registered origin. */
  origin?: string;
  /** More request headers (Accept-Language, …). */
  headers?: Record<string, string>;
}

// biome-ignore lint/suspicious/noExplicitAny: the created session as the API answered it
export type Created = Record<string, any> & { session_id: string; session_url: string };

/** Creates a session over HTTP and asserts 200. */
export async function createSession(t: ApiClient, options: CreateOptions = {}): Promise<Created> {
  const merchant = options.merchant ?? t.merchant;
  const cart = options.cart ?? sampleCart();
  const via = options.via ?? 'publishable';
  const body: Record<string, unknown> = { cart, ...options.extra };
  if (via === 'publishable') body.signature = signCart(cart, merchant.merchant.signingSecret);
  if (options.group_config) body.group_config = options.group_config;
  if (options.customer) body.customer = options.customer;
  const key = via === 'publishable' ? merchant.publishableKey : merchant.secretKey;
  // A publishable key is used from a web page: the browser sends the page's Origin (docs/api.md#origins).
  const headers: Record<string, string> = {
    ...(via === 'publishable' ? { origin: options.origin ?? pageOrigin(merchant) } : {}),
    ...options.headers,
  };
  const res = await t.request('POST', '/v1/sessions', { key, body, headers });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

/** The origin a merchant's page creates sessions from: its first registered one. */
export const pageOrigin = (merchant: TestMerchant): string =>
  merchant.merchant.allowedOrigins[0] ?? 'https://shop.example';

/** The organizer's access token out of session_url. */
export const organizerToken = (created: Created): string =>
  new URL(created.session_url).searchParams.get('access') as string;

export interface EventRow {
  id: string;
  type: string;
  merchant_id: string;
  session_id: string | null;
  created_at: number;
  // biome-ignore lint/suspicious/noExplicitAny: the stored payload, parsed
  payload: any;
}

/** The outbox rows of one session (or of every session), oldest first. */
export async function eventRows(t: TestApp, sessionId?: string): Promise<EventRow[]> {
  let query = t.deps.db.kysely.selectFrom('events').selectAll();
  if (sessionId !== undefined) query = query.where('session_id', '=', sessionId);
  const rows = await query.orderBy('created_at', 'asc').orderBy('id', 'asc').execute();
  return rows.map((r) => ({ ...r, payload: JSON.parse(r.payload) }));
}

/** The session ids the merchant's GET /v1/sessions lists, all pages. */
export async function listedSessionIds(t: TestApp, merchant: TestMerchant = t.merchant): Promise<string[]> {
  const ids: string[] = [];
  let cursor: number | null = null;
  do {
    const query: string = cursor === null ? 'limit=100' : `limit=100&cursor=${cursor}`;
    const res = await t.request('GET', `/v1/sessions?${query}`, { key: merchant.secretKey });
    assert.equal(res.status, 200, res.text);
    ids.push(...res.body.data.map((s: { session_id: string }) => s.session_id));
    cursor = res.body.next_cursor;
  } while (cursor !== null);
  return ids;
}
