// What a session still owes in money, read from its members and its processor attempts
// (docs/decisions.md#payments): the captures of a complete on_funded group, the transfer of a funded
// session, the refunds and releases of a closed one, and when each is due. Pure: the settling flow asks
// this, claims each piece of work, and calls the processor.
import { isClosed, type MemberStatus, type SessionStatus } from './session-state.ts';

export interface MemberFacts {
  id: string;
  amountCents: number;
  status: MemberStatus;
  payingAttemptId: string | null;
}

export interface AttemptFacts {
  id: string;
  kind: 'charge' | 'authorize' | 'capture' | 'release' | 'refund' | 'transfer';
  memberId: string | null;
  targetId: string | null;
  amountCents: number;
  feeCents: number;
  state: 'started' | 'succeeded' | 'declined' | 'failed';
  processorId: string | null;
  /** Set once the processor asked the payer to authenticate this payment (3-D Secure). */
  clientSecret: string | null;
  /** Why it failed, as recorded. */
  error?: string | null;
  /** A refund the processor took but has not finished. */
  pending?: boolean;
  /**
   * The status of the payer's dispute of this payment (a charge or hold), when the reader attached the
   * session's disputes (withDisputes): what decides whether a closed session refunds it.
   */
  dispute?: 'needs_response' | 'won' | 'lost';
  /**
   * What the payment's lost disputes returned to the payer through their bank, with `dispute`: a bank may
   * dispute part of a payment.
   */
  lostCents?: number;
  createdAt: number;
  updatedAt: number;
}

/** How long the settling waits on the processor and on payers (docs/decisions.md#payments). */
export interface SettlingTimes {
  /** PAYMENT_RECOVERY_AFTER_MS: when a call left unanswered is asked about. */
  recoveryAfterMs: number;
  /** PAYMENT_AUTH_TIMEOUT_MS: when a payment still waiting on the payer's authentication is abandoned. */
  authTimeoutMs: number;
}

export interface SessionFacts {
  status: SessionStatus;
  capture: 'immediate' | 'on_funded';
  expiresAt: number;
  settledAt: number | null;
}

export type Work =
  | { kind: 'capture' | 'release' | 'refund'; memberId: string; payment: AttemptFacts }
  | { kind: 'transfer' };

/** Waits after the 1st, 2nd, … failed try of a refund, release, capture or transfer; the last repeats. */
const RETRY_DELAYS_MS = [5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000];

const retryDelayMs = (failures: number): number =>
  RETRY_DELAYS_MS[Math.min(Math.max(failures, 1), RETRY_DELAYS_MS.length) - 1] as number;

/** The member's live payment: their latest charge or hold that succeeded. */
export function paymentOf<A extends AttemptFacts>(attempts: readonly A[], memberId: string): A | undefined {
  let found: A | undefined;
  for (const a of attempts) {
    if (a.memberId === memberId && (a.kind === 'charge' || a.kind === 'authorize') && a.state === 'succeeded')
      found = a;
  }
  return found;
}

/** Tries of one piece of work so far: its attempts of that kind on that payment (or the session's transfers). */
export function triesOf<A extends AttemptFacts>(attempts: readonly A[], work: Work): A[] {
  return attempts.filter((a) =>
    work.kind === 'transfer'
      ? a.kind === 'transfer'
      : a.kind === work.kind && a.memberId === work.memberId && a.targetId === work.payment.processorId,
  );
}

/** A started payment waiting on the payer's authentication (3-D Secure). */
export const awaitsAuthentication = (a: Pick<AttemptFacts, 'state' | 'clientSecret'>): boolean =>
  a.state === 'started' && a.clientSecret !== null;

/**
 * The attempts with the status of each payment's dispute set on it (the latest dispute of that payment):
 * the settling rules read them there (refundBlocked).
 */
export function withDisputes<A extends AttemptFacts>(
  attempts: readonly A[],
  disputes: readonly {
    attemptId: string;
    status: NonNullable<AttemptFacts['dispute']>;
    amountCents: number;
  }[],
): A[] {
  if (disputes.length === 0) return [...attempts];
  const latest = new Map(disputes.map((d) => [d.attemptId, d.status]));
  const lost = new Map<string, number>();
  for (const d of disputes)
    if (d.status === 'lost') lost.set(d.attemptId, (lost.get(d.attemptId) ?? 0) + d.amountCents);
  return attempts.map((a) => {
    const dispute = latest.get(a.id);
    return dispute === undefined ? a : { dispute, lostCents: lost.get(a.id) ?? 0, ...a };
  });
}

/**
 * A payment its payer disputed with their bank is not ours to refund while the dispute is open, nor once
 * the merchant lost a dispute of all of it: the bank returns the money through the dispute, and a refund
 * would return it twice (Stripe refuses to refund a disputed charge). Once the merchant won it, the money
 * is back and a closed session refunds it as any other; a dispute lost for part of the payment returned
 * that part, and the rest is refunded (refundDue; docs/decisions.md#disputes).
 */
const disputedAway = (payment: Pick<AttemptFacts, 'dispute' | 'lostCents' | 'amountCents'>): boolean =>
  payment.dispute === 'needs_response' || (payment.lostCents ?? 0) >= payment.amountCents;

/**
 * What a closed session's refund of `payment` returns: all it took (share and consumer fee), less what a
 * lost dispute already returned through the payer's bank. The fee is returned first, as in any refund of
 * a closed session, so a dispute's loss stays with the session's funds, the merchant's.
 */
export function refundDue(payment: Pick<AttemptFacts, 'amountCents' | 'feeCents' | 'lostCents'>): {
  amountCents: number;
  feeCents: number;
} {
  const lost = Math.min(payment.lostCents ?? 0, payment.amountCents);
  const amountCents = payment.amountCents - lost;
  return { amountCents, feeCents: Math.min(payment.feeCents, amountCents) };
}

/**
 * Whether the settling leaves a paid member's refund alone. A refund the processor took and later
 * reported failed leaves the member paid with the money back with us; it is not tried again by itself (the
 * card it went to is closed, as a rule), but waits for an operator (docs/operations.md#a-refund-failed).
 * A payment under a dispute not won is returned by the payer's bank, not by us (disputedAway).
 */
export function refundBlocked(attempts: readonly AttemptFacts[], memberId: string): boolean {
  const payment = paymentOf(attempts, memberId);
  if (!payment) return false;
  if (disputedAway(payment)) return true;
  return refundFailedLater(attempts, memberId, payment);
}

/** Whether the member's latest refund try of `payment` was taken by the processor, then failed. */
function refundFailedLater(
  attempts: readonly AttemptFacts[],
  memberId: string,
  payment: AttemptFacts,
): boolean {
  const last = triesOf(attempts, { kind: 'refund', memberId, payment }).at(-1);
  return last !== undefined && last.state === 'failed' && last.processorId !== null;
}

/**
 * A closed or funded session's members are settled when none holds money or a payment in flight; a
 * member whose taken refund failed waits for an operator, not for the settling, and a disputed payment
 * is the bank's to return (refundBlocked).
 */
export const holdsMoney = (m: MemberFacts, attempts: readonly AttemptFacts[] = []): boolean =>
  m.payingAttemptId !== null ||
  m.status === 'authorized' ||
  (m.status === 'paid' && !refundBlocked(attempts, m.id));

/**
 * What the funding and capture rules read of a group: four counts, which a store can sum under the
 * session's lock instead of reading every member (store/members.ts sumGroup). Shares of 0 owe nothing.
 */
export interface GroupCounts {
  paid: number;
  authorized: number;
  /** Shares with money in them not yet paid, or with a payment in flight. */
  unpaid: number;
  /** Shares with money in them neither authorized nor paid, or with a payment in flight. */
  unready: number;
}

export function countGroup(members: readonly MemberFacts[]): GroupCounts {
  const counts: GroupCounts = { paid: 0, authorized: 0, unpaid: 0, unready: 0 };
  for (const m of members) {
    if (m.status === 'paid') counts.paid++;
    if (m.status === 'authorized') counts.authorized++;
    if (m.amountCents === 0) continue;
    if (m.status !== 'paid' || m.payingAttemptId !== null) counts.unpaid++;
    if ((m.status !== 'paid' && m.status !== 'authorized') || m.payingAttemptId !== null) counts.unready++;
  }
  return counts;
}

/** Whether the last payment makes an immediate group funded: every share with money in it paid. */
export const isFullyPaid = (group: GroupCounts): boolean => group.paid > 0 && group.unpaid === 0;

/** Whether an on_funded group is ready to capture: every share authorized or paid, one at least authorized. */
const isReadyToCapture = (group: GroupCounts): boolean => group.authorized > 0 && group.unready === 0;

/**
 * Whether an on_funded group's captures have begun: it was complete once, and a capture was tried. From
 * then on every hold is captured, whatever became of the others: a capture declined for one member puts
 * that member back to pending but does not hold back the rest, and the hold that member places when they
 * pay again is captured in turn.
 */
const capturesBegun = (attempts: readonly AttemptFacts[]): boolean =>
  attempts.some((a) => a.kind === 'capture');

/**
 * Whether a pending session surely owes nothing but the recovery of its calls in flight, judged from its
 * group's counts alone: an immediate session, or an on_funded one holding no hold to capture (nextSettleAt
 * is then recoveryAt of its started attempts). An on_funded session with a hold is judged by owedWork.
 */
export const owesOnlyRecovery = (session: SessionFacts, group: GroupCounts): boolean =>
  session.status === 'pending' && (session.capture === 'immediate' || group.authorized === 0);

/** The money work the session owes, whenever it is due. */
export function owedWork(
  session: SessionFacts,
  members: readonly MemberFacts[],
  attempts: readonly AttemptFacts[],
  now: number,
): Work[] {
  const work: Work[] = [];
  const forEach = (status: MemberStatus, kind: 'capture' | 'release' | 'refund') => {
    for (const m of members) {
      if (m.status !== status) continue;
      if (kind === 'refund' && refundBlocked(attempts, m.id)) continue;
      const payment = paymentOf(attempts, m.id);
      if (payment) work.push({ kind, memberId: m.id, payment });
    }
  };
  if (session.status === 'pending') {
    if (
      session.capture === 'on_funded' &&
      now < session.expiresAt &&
      (isReadyToCapture(countGroup(members)) || capturesBegun(attempts))
    )
      forEach('authorized', 'capture');
  } else if (session.status === 'funded') {
    if (session.settledAt === null && !attempts.some((a) => a.kind === 'transfer' && a.state === 'succeeded'))
      work.push({ kind: 'transfer' });
  } else {
    forEach('paid', 'refund');
    forEach('authorized', 'release');
  }
  return work;
}

/** How long the recovery waits to ask again about a call it could not learn the outcome of. */
const RECOVERY_RETRY_MS = 60_000;

/**
 * When the recovery should look at a started attempt: `recoveryAfterMs` after its claim, then a minute
 * after each time it asked and learnt nothing (updated_at marks that). A payment waiting on the payer's
 * authentication is left to them for `authTimeoutMs` after its claim, and is given up at once when its
 * session closed (`closed`).
 */
export function recoveryDueAt(
  a: Pick<AttemptFacts, 'createdAt' | 'updatedAt' | 'state' | 'clientSecret'>,
  times: SettlingTimes,
  closed = false,
): number {
  const first = awaitsAuthentication(a)
    ? closed
      ? a.createdAt
      : a.createdAt + times.authTimeoutMs
    : a.createdAt + times.recoveryAfterMs;
  return a.updatedAt > a.createdAt ? Math.max(first, a.updatedAt + RECOVERY_RETRY_MS) : first;
}

/** The soonest recovery of the started attempts among `attempts` (any others are skipped); null without one. */
export function recoveryAt(
  attempts: readonly Pick<AttemptFacts, 'createdAt' | 'updatedAt' | 'state' | 'clientSecret'>[],
  times: SettlingTimes,
  closed = false,
): number | null {
  let next = Number.POSITIVE_INFINITY;
  for (const a of attempts) if (a.state === 'started') next = Math.min(next, recoveryDueAt(a, times, closed));
  return next === Number.POSITIVE_INFINITY ? null : next;
}

/** When `work` may next be tried: never while a try is in flight, after a delay once a try failed. */
export function workDueAt(work: Work, attempts: readonly AttemptFacts[], now: number): number {
  // One call at a time per member: a refund waits for a capture of the same share still with the processor.
  const busy = (a: AttemptFacts) =>
    a.state === 'started' && (work.kind === 'transfer' || a.memberId === work.memberId);
  if (attempts.some(busy)) return Number.POSITIVE_INFINITY;
  const tries = triesOf(attempts, work);
  if (tries.some((a) => a.state === 'started' || a.state === 'succeeded')) return Number.POSITIVE_INFINITY;
  const failed = tries.filter((a) => a.state === 'failed' || a.state === 'declined');
  const last = failed.at(-1);
  return last ? last.updatedAt + retryDelayMs(failed.length) : now;
}

/**
 * When the settling worker should next look at the session, or null when it owes nothing: the soonest of
 * its due work, the recovery of a call left unanswered, and the closing of a closed session whose money
 * has all gone back.
 */
export function nextSettleAt(
  session: SessionFacts,
  members: readonly MemberFacts[],
  attempts: readonly AttemptFacts[],
  now: number,
  times: SettlingTimes,
): number | null {
  const closed = isClosed(session.status);
  let next = recoveryAt(attempts, times, closed) ?? Number.POSITIVE_INFINITY;
  for (const w of owedWork(session, members, attempts, now))
    next = Math.min(next, workDueAt(w, attempts, now));
  if (closed && session.settledAt === null && !members.some((m) => holdsMoney(m, attempts)))
    next = Math.min(next, now);
  return next === Number.POSITIVE_INFINITY ? null : next;
}

/** Processor ids of the money taken from payers (a charge, or a captured hold), oldest first. */
export function chargeIds(
  attempts: readonly Pick<AttemptFacts, 'kind' | 'state' | 'processorId'>[],
): string[] {
  const ids: string[] = [];
  for (const a of attempts) {
    if (a.state !== 'succeeded' || a.processorId === null) continue;
    if (a.kind === 'charge' || a.kind === 'capture') ids.push(a.processorId);
  }
  return ids;
}

export interface RefundFacts {
  id: string | null;
  memberId: string;
  amountCents: number;
  status: 'pending' | 'succeeded' | 'failed';
  /** Why a refund the processor took failed later (it waits for an operator); null otherwise. */
  failureReason: string | null;
}

/** The refunds of a closed session: one per share whose money was taken, with how far it got. */
export function refundsOf(
  session: Pick<SessionFacts, 'status'>,
  members: readonly MemberFacts[],
  attempts: readonly AttemptFacts[],
): RefundFacts[] {
  if (session.status !== 'cancelled' && session.status !== 'expired') return [];
  const refunds: RefundFacts[] = [];
  for (const m of members) {
    if (m.status !== 'paid' && m.status !== 'refunded') continue;
    const payment = paymentOf(attempts, m.id);
    if (!payment) continue;
    const tries = triesOf(attempts, { kind: 'refund', memberId: m.id, payment });
    // A payment disputed away is returned by the payer's bank: no refund of ours, unless one was made. A
    // dispute lost for part of it leaves the rest to refund (refundDue).
    if (tries.length === 0 && disputedAway(payment)) continue;
    const done = tries.find((a) => a.state === 'succeeded');
    const last = tries.at(-1);
    const blocked = refundFailedLater(attempts, m.id, payment);
    refunds.push({
      id: done?.processorId ?? (blocked ? (last?.processorId ?? null) : null),
      memberId: m.id,
      amountCents: done?.amountCents ?? refundDue(payment).amountCents,
      // Taken but not finished at the processor (a card refund it answered pending) is pending still.
      status: done
        ? done.pending
          ? 'pending'
          : 'succeeded'
        : last && last.state !== 'started'
          ? 'failed'
          : 'pending',
      failureReason: blocked ? (last?.error ?? null) : null,
    });
  }
  return refunds;
}
