// Row types of every table, as Kysely sees them. Timestamps are integer milliseconds since the epoch,
// money is integer minor units, booleans are 0/1 and JSON is stored as text: one shape on SQLite and
// PostgreSQL alike.
export interface MerchantsTable {
  id: string;
  name: string;
  environment: 'test' | 'live';
  headless_api_enabled: number;
  payout_mode: 'checkout' | 'preferred';
  payout_currency: string | null;
  merchant_fee_ppm: number;
  consumer_fee_ppm: number;
  fx_fee_ppm: number;
  signing_secret: string;
  session_webhook_secret: string;
  /** The signing secret before the last roll, and when it stops verifying carts. */
  previous_signing_secret: string | null;
  previous_signing_secret_expires_at: number | null;
  /** The session webhook secret before the last roll, and when deliveries stop being signed with it too. */
  previous_session_webhook_secret: string | null;
  previous_session_webhook_secret_expires_at: number | null;
  allowed_origins: string;
  processor_account_id: string | null;
  created_at: number;
}

interface ApiKeysTable {
  id: string;
  merchant_id: string;
  kind: 'publishable' | 'secret';
  environment: 'test' | 'live';
  /** The key's first 16 characters: shown to operators, and the unit of failed-auth limits. */
  prefix: string;
  /** SHA-256 of the whole key; secret keys are never stored in the clear. */
  key_hash: string;
  created_at: number;
  /** When the key was revoked: it stopped working then, whatever any clock says. */
  revoked_at: number | null;
  /** When the key stops working: null while it has no end; set by a roll with a grace period. */
  expires_at: number | null;
}

export interface WebhookEndpointsTable {
  id: string;
  merchant_id: string;
  url: string;
  events: string;
  secret: string;
  created_at: number;
  revoked_at: number | null;
}

interface IdempotencyKeysTable {
  scope: string;
  key: string;
  request_hash: string;
  status_code: number | null;
  response_body: string | null;
  created_at: number;
  expires_at: number;
}

export interface SessionsTable {
  id: string;
  merchant_id: string;
  status: 'pending' | 'funded' | 'cancelled' | 'expired';
  cart: string;
  currency: string;
  total_cents: number;
  order_ref: string | null;
  group_id: string;
  group_mode: string;
  group_config: string;
  group_set_up_at: number | null;
  customer: string | null;
  success_url: string | null;
  cancel_url: string | null;
  webhook_url: string | null;
  embed_origins: string;
  organizer_token_hash: string;
  group_token: string;
  merchant_fee_ppm: number;
  consumer_fee_ppm: number;
  created_at: number;
  updated_at: number;
  expires_at: number;
  closed_at: number | null;
}

export interface MembersTable {
  id: string;
  session_id: string;
  merchant_id: string;
  position: number;
  name: string;
  email: string | null;
  amount_cents: number;
  basis_points: number | null;
  items: string | null;
  share_id: string;
  status: 'pending' | 'paid' | 'refunded';
  is_organizer: number;
  last_reminded_at: number | null;
  created_at: number;
  updated_at: number;
}

interface EventsTable {
  id: string;
  merchant_id: string;
  session_id: string | null;
  type: string;
  payload: string;
  created_at: number;
}

export interface Database {
  merchants: MerchantsTable;
  api_keys: ApiKeysTable;
  webhook_endpoints: WebhookEndpointsTable;
  idempotency_keys: IdempotencyKeysTable;
  sessions: SessionsTable;
  members: MembersTable;
  events: EventsTable;
}
