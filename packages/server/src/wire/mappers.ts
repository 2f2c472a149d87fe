// Our objects to the wire shapes of wire/schemas.ts, one mapper per resource, used by the merchant API,
// the pay-page API and the events outbox alike (docs/api.md). camelCase inside, snake_case on the wire.
import type { Cart } from '@group-checkout/node';
import { toIso } from '../clock.ts';
import { chargeAmount, consumerFee } from '../domain/fees.ts';
import { type GroupProgress, paidAmountOf, progressOf } from '../domain/members.ts';
import { formatRate } from '../domain/money.ts';
import { chargeIds, paymentOf, type RefundFacts, refundsOf, withDisputes } from '../domain/settling.ts';
import type { Attempt } from '../store/attempts.ts';
import type { Delivery, DeliveryAttempt } from '../store/deliveries.ts';
import type { Dispute } from '../store/disputes.ts';
import type { Member } from '../store/members.ts';
import type { Session, SessionListItem } from '../store/sessions.ts';
import type { WebhookEndpoint } from '../store/webhooks.ts';

/** The hosted pages' links, made from PUBLIC_PAY_URL. */
export interface PayLinks {
  /** The organizer's page (with the organizer token) or the group's (with the group token). */
  session(sessionId: string, token: string): string;
  /** A member's page, where their share is paid. */
  share(shareId: string): string;
}

export function payLinks(publicPayUrl: string): PayLinks {
  return {
    session: (sessionId, token) => `${publicPayUrl}/session/${sessionId}?access=${token}`,
    share: (shareId) => `${publicPayUrl}/s/${shareId}`,
  };
}

type MemberBasics = Pick<Member, 'id' | 'name' | 'amountCents' | 'status' | 'isOrganizer'>;

/**
 * Who sees a member: the merchant API and events (the share itself), a member of the group on the
 * hosted pages (also who the organizer is), or the organizer (also each member's email, split inputs,
 * share link and what they will be charged).
 */
export type MemberView =
  | { kind: 'merchant' }
  | { kind: 'member' }
  | { kind: 'organizer'; links: PayLinks; consumerFeePpm: number; chargeStep: number };

const MERCHANT_VIEW: MemberView = { kind: 'merchant' };

export function memberToWire(
  m: MemberBasics,
  view?: { kind: 'merchant' },
): {
  id: string;
  name: string;
  amount_cents: number;
  status: string;
};
export function memberToWire(m: Member, view: MemberView): object;
export function memberToWire(m: MemberBasics & Partial<Member>, view: MemberView = MERCHANT_VIEW) {
  // Each view written out whole: not a base object spread and added to (docs/decisions.md#no-new-keys-after-a-leading-spread).
  const { id, name, amountCents: amount_cents, status } = m;
  if (view.kind === 'merchant') return { id, name, amount_cents, status };
  if (view.kind === 'member') return { id, name, amount_cents, status, is_organizer: m.isOrganizer };
  const full = m as Member;
  return {
    id,
    name,
    amount_cents,
    status,
    is_organizer: full.isOrganizer,
    email: full.email,
    basis_points: full.basisPoints,
    items: full.items?.map((i) => ({ item_index: i.itemIndex, quantity: i.quantity })) ?? null,
    share_id: full.shareId,
    share_url: view.links.share(full.shareId),
    amount_due_cents: chargeAmount(full.amountCents, view.consumerFeePpm, view.chargeStep),
  };
}

/** paid_amount and pending_amount of a session (docs/api.md#sessions). */
export function amountsToWire(session: Pick<Session, 'totalCents'>, paidCents: number) {
  return { paid_amount: paidCents, pending_amount: session.totalCents - paidCents };
}

/** The group as answers show it; `more` goes after its members (the hosted pages' set-up facts). */
function groupToWire<M extends object>(
  session: Session,
  members: readonly Member[],
  view: MemberView = MERCHANT_VIEW,
  more?: M,
) {
  return {
    id: session.groupId,
    size: members.length,
    mode: session.groupMode,
    ...amountsToWire(session, paidAmountOf(members)),
    members: members.map((m) => memberToWire(m, view)),
    ...(more as M),
  };
}

/** The money of a session: charge ids, the transfer id, disputes, and for a closed session its refunds. */
function moneyToWire(
  session: Session,
  members: readonly Member[],
  attempts: readonly Attempt[],
  disputes: readonly Dispute[],
) {
  const transfer = attempts.find((a) => a.kind === 'transfer' && a.state === 'succeeded');
  return {
    charges: chargeIds(attempts),
    transfer: transfer?.processorId ?? null,
    disputes: disputes.map(disputeToWire),
    refunds: refundsOf(session, members, withDisputes(attempts, disputes)).map(refundToWire),
  };
}

/** GET /sessions/{id}: the session with its group and its money; the customer only for the secret key. */
export function sessionToWire(
  session: Session,
  members: readonly Member[],
  attempts: readonly Attempt[],
  disputes: readonly Dispute[],
  withCustomer: boolean,
) {
  return {
    session_id: session.id,
    status: session.status,
    created_at: toIso(session.createdAt),
    expires_at: toIso(session.expiresAt),
    order_ref: session.orderRef,
    currency: session.currency,
    total_cents: session.totalCents,
    group: groupToWire(session, members),
    ...moneyToWire(session, members, attempts, disputes),
    ...(withCustomer && session.customer ? { customer: session.customer } : {}),
  };
}

/** POST /sessions: the new session with the organizer's link (the only time its token is shown). */
export function createdSessionToWire(session: Session, organizerToken: string, links: PayLinks) {
  return {
    session_id: session.id,
    session_url: links.session(session.id, organizerToken),
    status: session.status,
    expires_at: toIso(session.expiresAt),
    merchant_fee_rate: formatRate(session.merchantFeePpm),
    consumer_fee_rate: formatRate(session.consumerFeePpm),
    group_access_token: session.groupToken,
  };
}

export const sessionListItemToWire = (s: SessionListItem) => ({
  session_id: s.id,
  status: s.status,
  order_ref: s.orderRef,
  total_cents: s.totalCents,
  currency: s.currency,
  created_at: toIso(s.createdAt),
  expires_at: toIso(s.expiresAt),
});

export type RefundView = RefundFacts;

const refundToWire = (r: RefundView) => ({
  id: r.id,
  member_id: r.memberId,
  amount_cents: r.amountCents,
  status: r.status,
  failure_reason: r.failureReason,
});

const disputeToWire = (d: Dispute) => ({
  id: d.id,
  member_id: d.memberId,
  amount_cents: d.amountCents,
  reason: d.reason,
  status: d.status,
});

/** The answer to a cancel or an expiry, wherever it was asked for. */
export const closedToWire = ({ session, refunds }: { session: Session; refunds: readonly RefundView[] }) => ({
  session_id: session.id,
  status: session.status,
  refunds: refunds.map(refundToWire),
});

const cartToWire = (cart: Cart) => ({
  items: cart.items,
  tax: cart.tax ?? 0,
  shipping: cart.shipping ?? 0,
  fees: cart.fees ?? [],
});

/** The payment of a share as its payer sees it: the charge or hold, and the card's brand and last four. */
function paymentToWire(member: Member, attempts: readonly Attempt[]) {
  const payment = paymentOf(attempts, member.id);
  if (!payment) return null;
  return {
    id: payment.processorId,
    kind: payment.kind,
    amount_cents: payment.amountCents,
    card_brand: payment.cardBrand,
    card_last4: payment.cardLast4,
  };
}

/** While the member's bank asks them to authenticate their payment: what their page hands the processor. */
function nextActionOf(member: Member, attempts: readonly Attempt[]) {
  if (member.status !== 'authenticating') return null;
  const paying = attempts.find((a) => a.id === member.payingAttemptId);
  return paying?.clientSecret ? { type: 'authenticate' as const, client_secret: paying.clientSecret } : null;
}

/**
 * Why the share's last payment failed, as a code (docs/api.md#payments): the card's decline code, or
 * capture_declined, authentication_failed, authentication_abandoned, refund_failed; null when nothing failed or it cannot tell.
 * The pages say it in their own language; `failure` keeps the processor's English sentence.
 */
function failureCodeOf(member: Member, attempts: readonly Attempt[]): string | null {
  if (member.failure === null) return null;
  const last = attempts
    .filter((a) => a.memberId === member.id && (a.state === 'declined' || a.state === 'failed'))
    .sort((a, b) => b.updatedAt - a.updatedAt)[0];
  if (!last) return null;
  if (last.kind === 'refund') return 'refund_failed';
  if (last.kind === 'capture') return 'capture_declined';
  // A payment the payer's bank was asked to confirm (3-D Secure): refused by the bank, or left unfinished.
  if (last.clientSecret !== null)
    return last.state === 'declined' ? 'authentication_failed' : 'authentication_abandoned';
  if (last.state === 'declined') return last.declineCode ?? 'generic_decline';
  return 'authentication_failed';
}

/**
 * One member's share as the payer's page shows it, with their payment once there is one. No session id, no
 * group token, no other member: a share link is forwarded, and with the public publishable key a session
 * id would list the whole group (docs/api.md#share-privacy).
 */
export function shareToWire(
  session: Session,
  member: Member,
  merchantName: string,
  attempts: readonly Attempt[] = [],
  /** The group, or how far it is: the share shows its progress without naming the others. */
  group?: readonly Member[] | GroupProgress,
) {
  return {
    share_id: member.shareId,
    session_status: session.status,
    merchant_name: merchantName,
    order_ref: session.orderRef,
    currency: session.currency,
    expires_at: toIso(session.expiresAt),
    member: memberToWire(member),
    status: member.status,
    amount_cents: member.amountCents,
    consumer_fee_rate: formatRate(session.consumerFeePpm),
    consumer_fee_cents: consumerFee(member.amountCents, session.consumerFeePpm, session.chargeStep),
    amount_due_cents: chargeAmount(member.amountCents, session.consumerFeePpm, session.chargeStep),
    capture: session.groupConfig.capture,
    failure: member.failure,
    failure_code: failureCodeOf(member, attempts),
    next_action: nextActionOf(member, attempts),
    payment: paymentToWire(member, attempts),
    cart: cartToWire(session.cart),
    split: {
      mode: session.groupMode,
      items: member.items?.map((i) => ({ item_index: i.itemIndex, quantity: i.quantity })) ?? null,
      basis_points: member.basisPoints,
    },
    ...(group ? { group: shareGroupToWire(session, 'paidCount' in group ? group : progressOf(group)) } : {}),
  };
}

/** How far the payer's group is, without who the others are: a share link shows only its own member. */
const shareGroupToWire = (session: Session, progress: GroupProgress) => ({
  size: progress.size,
  paid_count: progress.paidCount,
  total_cents: session.totalCents,
  ...amountsToWire(session, progress.paidCents),
});

export type PageRole = 'organizer' | 'member';

/** The session as the hosted pages show it to the organizer or to a member of the group. */
export function payPageToWire(
  session: Session,
  members: readonly Member[],
  role: PageRole,
  merchantName: string,
  links: PayLinks,
) {
  const cfg = session.groupConfig;
  const view: MemberView =
    role === 'organizer'
      ? {
          kind: 'organizer',
          links,
          consumerFeePpm: session.consumerFeePpm,
          chargeStep: session.chargeStep,
        }
      : { kind: 'member' };
  return {
    role,
    session_id: session.id,
    status: session.status,
    merchant_name: merchantName,
    order_ref: session.orderRef,
    currency: session.currency,
    total_cents: session.totalCents,
    consumer_fee_rate: formatRate(session.consumerFeePpm),
    expires_at: toIso(session.expiresAt),
    capture: cfg.capture,
    cart: cartToWire(session.cart),
    group: groupToWire(session, members, view, {
      set_up: session.groupSetUpAt !== null,
      min_size: cfg.minSize,
      max_size: cfg.maxSize,
      allowed_modes: cfg.allowedModes,
    }),
    ...(role === 'organizer'
      ? {
          join_url: links.session(session.id, session.groupToken),
          success_url: session.successUrl,
          cancel_url: session.cancelUrl,
        }
      : {}),
  };
}

export const endpointToWire = (e: WebhookEndpoint) => ({
  id: e.id,
  url: e.url,
  events: e.events,
  created_at: toIso(e.createdAt),
  disabled_at: e.disabledAt === null ? null : toIso(e.disabledAt),
});

const deliveryToWire = (d: Delivery & { attempts: DeliveryAttempt[] }) => ({
  id: d.id,
  webhook_id: d.webhookId,
  url: d.url,
  state: d.state,
  attempts: d.attempts.map((a) => ({
    at: toIso(a.at),
    status_code: a.statusCode,
    latency_ms: a.latencyMs,
    error: a.error,
  })),
  next_attempt_at: d.nextAttemptAt === null ? null : toIso(d.nextAttemptAt),
  created_at: toIso(d.createdAt),
});

export const eventDetailToWire = (detail: {
  event: object;
  deliveries: (Delivery & { attempts: DeliveryAttempt[] })[];
}) => Object.assign({}, detail.event, { deliveries: detail.deliveries.map(deliveryToWire) });
