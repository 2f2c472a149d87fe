// Row types of every table, as Kysely sees them. Timestamps are integer milliseconds since the epoch,
// money is integer minor units, booleans are 0/1 and JSON is stored as text: one shape on SQLite and
// PostgreSQL alike.
import type { Generated, Kysely, Transaction } from 'kysely';

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
  /**
   * PostgreSQL: the created_at of the merchant's newest session, taken by the create's update of this
   * row (store/merchants.ts takeSessionCreatedAt); null before its first create there, and on SQLite.
   */
  last_session_at: number | null;
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
  /** A publishable key in the clear (it is public), for the dashboard; null for secret keys and old rows. */
  shown: string | null;
}

export interface WebhookEndpointsTable {
  id: string;
  merchant_id: string;
  url: string;
  events: string;
  secret: string;
  created_at: number;
  revoked_at: number | null;
  /** When a 410 answer disabled the endpoint: it gets no new deliveries. */
  disabled_at: number | null;
  /** The secret before the last rotation, and when deliveries stop being signed with it too. */
  previous_secret: string | null;
  previous_secret_expires_at: number | null;
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
  charge_step: number;
  /** POST /sessions locale: en es fr de it pt nl ja, or auto. */
  locale: string;
  /** The language of the session's mail: en es fr de it pt nl ja. */
  mail_locale: string;
  created_at: number;
  updated_at: number;
  expires_at: number;
  closed_at: number | null;
  funded_at: number | null;
  settled_at: number | null;
  settle_after: number | null;
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
  status: 'pending' | 'authenticating' | 'authorized' | 'paid' | 'refunded' | 'released';
  is_organizer: number;
  last_reminded_at: number | null;
  paying_attempt_id: string | null;
  failure: string | null;
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
  /** When the dispatcher made the event's deliveries; null while it still has to. */
  dispatched_at: number | null;
  /** Commit order, assigned by the database on insert (docs/decisions.md#webhook-delivery). */
  seq: Generated<number>;
}

export interface DeliveriesTable {
  id: string;
  event_id: string;
  merchant_id: string;
  /** The endpoint delivered to; null for the session's webhook_url. */
  webhook_id: string | null;
  url: string;
  state: 'pending' | 'delivered' | 'failed';
  attempt_count: number;
  /** When the next attempt is due; null once delivered or failed for good. */
  next_attempt_at: number | null;
  /** The order of the URL's queue, assigned by the database on insert. */
  seq: Generated<number>;
  created_at: number;
  updated_at: number;
}

/** A receiver URL's queue: who delivers to it now, and when its oldest pending delivery falls due. */
interface DeliveryUrlsTable {
  url: string;
  /** null while nothing waits; may be stale while the URL is held (its holder writes it on release). */
  due_at: number | null;
  holder: string | null;
  held_until: number | null;
}

/** One-time set-ups done by whichever process got there first (the sandbox's demo merchant). */
interface SingletonsTable {
  name: string;
  created_at: number;
}

export interface DeliveryAttemptsTable {
  delivery_id: string;
  /** 1 for the first attempt of the delivery. */
  number: number;
  at: number;
  /** The receiver's HTTP status; null when no answer came (refused, timed out, blocked). */
  status_code: number | null;
  latency_ms: number;
  error: string | null;
}

export interface AttemptsTable {
  id: string;
  idempotency_key: string;
  kind: 'charge' | 'authorize' | 'capture' | 'release' | 'refund' | 'transfer';
  merchant_id: string;
  session_id: string;
  member_id: string | null;
  /** The processor's id of the charge or hold a capture, release or refund acts on. */
  target_id: string | null;
  /** What moves: share + consumer fee for a payment, its refund, capture or release; the net for a transfer. */
  amount_cents: number;
  /** The consumer fee within amount_cents (0 for a transfer). */
  fee_cents: number;
  currency: string;
  /** A Stripe PaymentMethod id (never card data): kept so that recovery can send the same request. */
  payment_method: string | null;
  /** A transfer's connected account, fixed when it is claimed: a retry or a recovery sends it there. */
  destination: string | null;
  state: 'started' | 'succeeded' | 'declined' | 'failed';
  processor_id: string | null;
  card_brand: string | null;
  card_last4: string | null;
  decline_code: string | null;
  error: string | null;
  /**
   * When the processor asked the payer to authenticate the payment (3-D Secure): the secret their page
   * hands the processor's script. Kept once the attempt is settled, as the record that it asked.
   */
  client_secret: string | null;
  /** 1 while a refund the processor took has not finished there (its `pending`), else 0. */
  processor_pending: Generated<number>;
  created_at: number;
  updated_at: number;
}

export interface SandboxOperationsTable {
  idempotency_key: string;
  id: string | null;
  kind: string;
  target_id: string | null;
  amount_cents: number;
  currency: string;
  state: string;
  outcome: string;
  client_secret: string | null;
  created_at: number;
  updated_at: number;
}

interface ProcessorEventsTable {
  /** The processor's event id (Stripe's evt_…, the sandbox's sbxevt_…). */
  id: string;
  type: string;
  /** The event as flows read it (processor/types.ts ProcessorEvent), JSON. */
  payload: string;
  received_at: number;
  /** Not handled before this (the sandbox's disputes open a few seconds after the charge). */
  due_at: number;
  /** A process handling it holds it until then. */
  claimed_until: number | null;
  processed_at: number | null;
  tries: number;
  error: string | null;
}

export interface DisputesTable {
  id: string;
  merchant_id: string;
  session_id: string;
  member_id: string;
  /** The member's payment (charge, or the hold that was captured) the dispute is on. */
  attempt_id: string;
  amount_cents: number;
  currency: string;
  reason: string;
  status: 'needs_response' | 'won' | 'lost';
  created_at: number;
  updated_at: number;
  closed_at: number | null;
}

export interface LedgerLinesTable {
  id: string;
  entry_id: string;
  kind: string;
  account: string;
  amount_cents: number;
  currency: string;
  merchant_id: string;
  session_id: string;
  member_id: string | null;
  attempt_id: string | null;
  created_at: number;
}

interface ReminderRoundsTable {
  session_id: string;
  round: number;
  merchant_id: string;
  sent_at: number;
}

interface ReminderMailsTable {
  id: string;
  merchant_id: string;
  session_id: string;
  /** The recipient's address, trimmed and lowercased: what the limits are keyed by. */
  address: string;
  sent_at: number;
}

export interface MailsTable {
  id: string;
  /** What the mail reports, once: `receipt:{event id}`, `declined:{member id}`, … (store/mails.ts). */
  fact: string;
  kind: string;
  merchant_id: string;
  session_id: string;
  member_id: string | null;
  event_id: string | null;
  attempt_id: string | null;
  address: string;
  state: 'pending' | 'sent' | 'failed' | 'skipped';
  attempts: number;
  next_attempt_at: number;
  holder: string | null;
  held_until: number | null;
  last_error: string | null;
  created_at: number;
  sent_at: number | null;
}

export interface DashboardUsersTable {
  id: string;
  merchant_id: string;
  /** Lowercased. */
  email: string;
  role: 'owner' | 'developer' | 'viewer';
  created_at: number;
}

interface DashboardLinksTable {
  /** SHA-256 of the link's token: the token itself is only in the mail. */
  token_hash: string;
  user_id: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

interface DashboardSessionsTable {
  /** SHA-256 of the cookie's value. */
  token_hash: string;
  user_id: string;
  csrf_token: string;
  created_at: number;
  last_seen_at: number;
  ended_at: number | null;
}

/** How far reconcile of the changed sessions has read (one row, name 'sessions'). */
interface ReconcileMarksTable {
  name: string;
  /** Every session at or before (changed_at, session_id), in that order, has been checked. */
  changed_at: number;
  session_id: string;
  ran_at: number;
}

/** A session reconcile found a mismatch in, checked again by each run until it is clean. */
interface ReconcileFindingsTable {
  session_id: string;
  found_at: number;
}

/** One answered merchant API request (docs/dashboard.md#api-request-log); kept 7 days. */
interface ApiRequestsTable {
  /** The request id (req_…). */
  id: string;
  merchant_id: string;
  method: string;
  /** The route pattern, never the URL. */
  route: string;
  status: number;
  duration_us: number;
  key_prefix: string;
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
  deliveries: DeliveriesTable;
  delivery_attempts: DeliveryAttemptsTable;
  delivery_urls: DeliveryUrlsTable;
  singletons: SingletonsTable;
  attempts: AttemptsTable;
  sandbox_operations: SandboxOperationsTable;
  processor_events: ProcessorEventsTable;
  disputes: DisputesTable;
  ledger_lines: LedgerLinesTable;
  reminder_rounds: ReminderRoundsTable;
  reminder_mails: ReminderMailsTable;
  mails: MailsTable;
  dashboard_users: DashboardUsersTable;
  dashboard_links: DashboardLinksTable;
  dashboard_sessions: DashboardSessionsTable;
  api_requests: ApiRequestsTable;
  reconcile_marks: ReconcileMarksTable;
  reconcile_findings: ReconcileFindingsTable;
}

/** What a named query runs on: the database, or a transaction a flow holds open. */
export type Executor = Kysely<Database> | Transaction<Database>;
