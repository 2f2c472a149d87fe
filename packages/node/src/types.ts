// The merchant API's requests and answers as the client sends and receives them (docs/api.md), written
// out here rather than imported from the server: the package ships with no dependency. The server's
// OpenAPI document is the reference; packages/server/test/node-client.test.ts checks every field name
// and whether it is required against it, so the two cannot drift apart unnoticed.
import type { Cart } from './cart.ts';

/** Every answer carries the id of its request (also in the X-Request-Id header): quote it to support. */
export interface WithRequestId {
  /** `req_…` */
  request_id: string;
}

/** How a group splits the total (docs/api.md#split-modes). */
export type SplitMode = 'equal' | 'itemized' | 'custom' | 'percentage' | 'host-pays';

/** pending while the group pays; funded, cancelled and expired are final. */
export type SessionStatus = 'pending' | 'funded' | 'cancelled' | 'expired';

/**
 * A member's share: authenticating while their bank asks them to confirm (3-D Secure), authorized a hold
 * under capture `on_funded`, released a hold let go.
 */
export type MemberStatus = 'pending' | 'authenticating' | 'authorized' | 'paid' | 'refunded' | 'released';

/** A refund is retried until it succeeds; `failed` only says the last try failed. */
export type RefundStatus = 'pending' | 'succeeded' | 'failed';

/** Every event type (docs/api.md#event-types). */
export type EventType =
  | 'group.created'
  | 'group.share_paid'
  | 'group.share_failed'
  | 'group.funded'
  | 'group.expired'
  | 'group.cancelled'
  | 'group.share_refunded'
  | 'group.share_refund_failed'
  | 'group.share_disputed'
  | 'group.share_dispute_closed';

/** The limits of the group; every field is optional (docs/api.md#group-config). */
export interface GroupConfig {
  /** 1 to 50, default 2. */
  min_size?: number;
  /** 1 to 50, default 10. */
  max_size?: number;
  default_mode?: SplitMode;
  allowed_modes?: SplitMode[];
  /** 1 to 168 hours (at most 144 with capture on_funded), default 48. */
  expiry_hours?: number;
  /** immediate (default): a share is charged when paid; on_funded: held, captured when all are held. */
  capture?: 'immediate' | 'on_funded';
}

/** The organizer (docs/api.md#customer). Shown back to secret keys only. */
export interface Customer {
  name?: string;
  /** Without it, reminders reach nobody. */
  email?: string;
  phone?: string;
}

/** The body of `sessions.create` (docs/api.md#create-a-session). */
export interface CreateSessionParams {
  /** Put your order id in `cart.metadata.order_ref`: it comes back in every event. */
  cart: Cart;
  /** signCart(cart, signingSecret); optional with the secret key when the headless API is enabled. */
  signature?: string;
  group_config?: GroupConfig;
  customer?: Customer;
  /** https; the organizer is sent here once the group is funded. */
  success_url?: string;
  /** https; the organizer is sent here after cancelling. */
  cancel_url?: string;
  /** Receives this session's events, signed with the merchant's session webhook secret. */
  webhook_url?: string;
  /**
   * The language of the hosted pages and mail (docs/api.md#languages); `auto` (the default) follows the
   * reader's browser on pages.
   */
  locale?: 'auto' | 'en' | 'es' | 'fr' | 'de' | 'it' | 'pt' | 'nl' | 'ja';
}

/** A new session: send the organizer to `session_url`. */
export interface CreatedSession extends WithRequestId {
  /** `gs_…` */
  session_id: string;
  /** The organizer's page; its access token lets the holder run the group, so give it to them only. */
  session_url: string;
  status: SessionStatus;
  expires_at: string;
  merchant_fee_rate: number;
  consumer_fee_rate: number;
  /** `gat_…`: lets members view the session and join an equal group. */
  group_access_token: string;
}

export interface Member {
  /** `mem_…` */
  id: string;
  name: string;
  amount_cents: number;
  status: MemberStatus;
}

export interface Group {
  /** `grp_…` */
  id: string;
  size: number;
  mode: SplitMode;
  /** Paid and authorized shares. */
  paid_amount: number;
  /** The rest of the total. */
  pending_amount: number;
  /** Organizer first. */
  members: Member[];
}

export interface Refund {
  /** The processor's refund id once known. */
  id: string | null;
  member_id: string;
  /** All the member was charged: share plus consumer fee. */
  amount_cents: number;
  status: RefundStatus;
  /** Why a failed refund failed, as the processor said it (`expired_or_canceled_card`, …); else null. */
  failure_reason: string | null;
}

/** A chargeback a payer opened with their bank on their share's payment (docs/api.md#disputes). */
export interface Dispute {
  /** The processor's dispute id. */
  id: string;
  member_id: string;
  /** What the bank holds back while it decides. */
  amount_cents: number;
  /** The bank's reason, as the processor says it (`fraudulent`, …). */
  reason: string;
  status: 'needs_response' | 'won' | 'lost';
}

/** A session with its group (GET /sessions/{sessionId}). Amounts in the currency's smallest unit. */
export interface Session extends WithRequestId {
  session_id: string;
  status: SessionStatus;
  created_at: string;
  expires_at: string;
  /** `cart.metadata.order_ref`, or null. */
  order_ref: string | null;
  currency: string;
  total_cents: number;
  group: Group;
  /** Processor ids of the money taken from payers, oldest first. */
  charges: string[];
  /** The processor's transfer id once the merchant was paid. */
  transfer: string | null;
  /** A cancelled or expired session's refunds, one per paid share; [] otherwise. */
  refunds: Refund[];
  /** Chargebacks on its members' payments, oldest first. */
  disputes: Dispute[];
  /** Only when one was sent at creation. */
  customer?: Customer;
}

/** A session as listed (GET /sessions). */
export interface SessionListItem {
  session_id: string;
  status: SessionStatus;
  order_ref: string | null;
  total_cents: number;
  currency: string;
  created_at: string;
  expires_at: string;
}

/**
 * One page of a list, newest first; pass `next_cursor` as `cursor` for the next page. The cursor is a
 * creation time in milliseconds for sessions, and an event id for events.
 */
export interface Page<T, Cursor = number> extends WithRequestId {
  data: T[];
  has_more: boolean;
  /** null on the last page. */
  next_cursor: Cursor | null;
}

/** Paging of a list (docs/api.md#list-sessions). */
export interface ListParams<Cursor = number> {
  /** 1 to 100, default 25. */
  limit?: number;
  /** The previous page's `next_cursor`. */
  cursor?: Cursor;
}

/** A cancelled (or expired) session, with the refunds of its paid shares. */
export interface ClosedSession extends WithRequestId {
  session_id: string;
  status: SessionStatus;
  refunds: Refund[];
}

/** What `sessions.remind` did (docs/api.md#reminders). */
export interface RemindResult extends WithRequestId {
  session_id: string;
  /** Mails sent. */
  reminded: number;
  /** Pending members not mailed: no email, reminded within the hour, or no organizer email. */
  skipped: number;
  /** Mails the mail server refused; those members may be reminded again at once. */
  failed: number;
}

/** The session after the change an event reports (docs/api.md#event-payload). */
export interface EventData {
  session_id: string;
  /** Your order id, from `cart.metadata.order_ref`: fulfil it on `group.funded`. */
  order_ref: string | null;
  status: SessionStatus;
  total_cents: number;
  currency: string;
  paid_amount: number;
  pending_amount: number;
  charges: string[];
  /** Share events: the member concerned. */
  member?: Member;
  transfer?: string;
  /** `group.share_refund_failed`: the refund that failed. */
  refund?: Refund;
  /** `group.share_disputed`, `group.share_dispute_closed`: the dispute. */
  dispute?: Dispute;
}

/** A webhook event, as delivered (verifyWebhook answers it) and as the events API shows it. */
export interface WebhookEvent {
  /** `evt_…`; the webhook-id header of every delivery of it. */
  id: string;
  type: EventType;
  timestamp: string;
  data: EventData;
}

/** One try at delivering an event. */
export interface DeliveryAttempt {
  at: string;
  /** The receiver's answer, or null when it did not answer. */
  status_code: number | null;
  latency_ms: number;
  /** Why the attempt failed, or null. */
  error: string | null;
}

/** An event's delivery to one receiver. */
export interface Delivery {
  id: string;
  /** The endpoint (`we_…`), or null for the session's webhook_url. */
  webhook_id: string | null;
  url: string;
  state: 'pending' | 'delivered' | 'failed';
  attempts: DeliveryAttempt[];
  /** When the next try is due, or null when none is. */
  next_attempt_at: string | null;
  /** When the delivery was made: when the event was fanned out, or redelivered. */
  created_at: string;
}

/** An event with its deliveries (GET /events/{eventId}, POST /events/{eventId}/redeliver). */
export interface EventWithDeliveries extends WebhookEvent, WithRequestId {
  deliveries: Delivery[];
}

/** Paging and filters of `events.list`. */
export interface ListEventsParams extends ListParams<string> {
  type?: EventType;
  session_id?: string;
}

/** A registered webhook endpoint (docs/api.md#webhook-endpoints). */
export interface WebhookEndpoint {
  /** `we_…` */
  id: string;
  url: string;
  /** Event types it receives, or ['*'] for all. */
  events: (EventType | '*')[];
  created_at: string;
  /** When deliveries to it stopped (it answered 410), or null while it is enabled. */
  disabled_at: string | null;
}

/** The body of `webhooks.create`. */
export interface CreateWebhookParams {
  /** https in production, on a public address. */
  url: string;
  /** 1 to 16 event types, or ['*'] for all. */
  events: (EventType | '*')[];
}

/** A new endpoint, with its signing secret: store it now, it is never shown again. */
export interface CreatedWebhookEndpoint extends WebhookEndpoint, WithRequestId {
  /** `whsec_…`, for verifyWebhook. */
  secret: string;
}

/** Every endpoint, oldest first, without their secrets. */
export interface WebhookEndpointList extends WithRequestId {
  data: WebhookEndpoint[];
}

export interface DeletedWebhookEndpoint extends WithRequestId {
  id: string;
  deleted: boolean;
}

/** The endpoint's new secret; for 24 hours deliveries are signed with the old one too. */
export interface RotatedWebhookSecret extends WithRequestId {
  id: string;
  /** `whsec_…`, shown this once. */
  secret: string;
}

/** The merchant the key belongs to (docs/api.md#merchant-profile). */
export interface MerchantProfile extends WithRequestId {
  /** `svc_merch_…` */
  id: string;
  name: string;
  /** True for a sandbox (test-mode) merchant. */
  sandbox: boolean;
  merchant_fee_rate: number;
  consumer_fee_rate: number;
  fx_fee_rate: number;
  /** Whether payouts have a processor account (set by an operator). */
  processor_connected: boolean;
  /** Whether sessions may be created with the secret key and no cart signature. */
  headless_api_enabled: boolean;
  payout_currency: {
    mode: 'checkout' | 'preferred';
    /** null in checkout mode. */
    currency: string | null;
  };
  /** Origins that may embed the hosted pages of server-created sessions. */
  allowed_origins: string[];
}
