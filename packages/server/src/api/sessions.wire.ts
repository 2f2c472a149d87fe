// Sessions as the merchant API shows them: internal objects to snake_case wire shapes, in one place.
import { toIso } from '../clock.ts';
import { paidAmountOf } from '../events/outbox.ts';
import type { ClosedSession } from '../flows/sessions.ts';
import type { Member, Session } from '../store/sessions.ts';

export const memberToWire = (m: Member) => ({
  id: m.id,
  name: m.name,
  amount_cents: m.amountCents,
  status: m.status,
});

export function groupToWire(session: Session, members: Member[]) {
  const paid = paidAmountOf(members);
  return {
    id: session.groupId,
    size: members.length,
    mode: session.groupMode,
    paid_amount: paid,
    pending_amount: session.totalCents - paid,
    members: members.map(memberToWire),
  };
}

/** SPEC.md §2.8, plus created_at, currency, total_cents and (for secret keys) customer. */
export function sessionDetail(session: Session, members: Member[], withCustomer: boolean) {
  return {
    session_id: session.id,
    status: session.status,
    created_at: toIso(session.createdAt),
    expires_at: toIso(session.expiresAt),
    order_ref: session.orderRef,
    currency: session.currency,
    total_cents: session.totalCents,
    group: groupToWire(session, members),
    charges: [] as string[],
    transfer: null as string | null,
    ...(withCustomer && session.customer ? { customer: session.customer } : {}),
  };
}

/** The answer to a cancel or an expiry, wherever it was asked for. */
export const closedToWire = (closed: ClosedSession) => ({
  session_id: closed.session.id,
  status: closed.session.status,
  refunds: closed.refunds,
});
