// Recording what the processor did (docs/decisions.md#payments): the one path by which an outcome becomes
// our record, in one transaction with everything it causes — the member's move, the ledger entry, the
// event, the session funded by its last share, a closed session's closing event once its money is back,
// and when the session is next to be settled. Paying, settling and recovery all record through here.
import type { Transaction } from 'kysely';
import type { Deps } from '../deps.ts';
import type { EventType } from '../domain/event-types.ts';
import { sessionFees } from '../domain/fees.ts';
import {
  authorizeEntry,
  captureEntry,
  chargeEntry,
  disputeClosedEntry,
  disputeOpenedEntry,
  fundedEntry,
  type LedgerLine,
  refundEntry,
  refundFailedEntry,
  releaseEntry,
  transferEntry,
} from '../domain/ledger.ts';
import { type GroupProgress, paidAmountOf, progressOf } from '../domain/members.ts';
import { isClosed, type MemberStatus } from '../domain/session-state.ts';
import {
  chargeIds,
  countGroup,
  type GroupCounts,
  holdsMoney,
  isFullyPaid,
  nextSettleAt,
  owesOnlyRecovery,
  recoveryAt,
  withDisputes,
} from '../domain/settling.ts';
import { recordEvent } from '../events/outbox.ts';
import { ids } from '../ids.ts';
import type { DisputeFacts, Outcome } from '../processor/types.ts';
import {
  type Attempt,
  type AttemptResult,
  awaitAuthentication,
  confirmTakenRefund,
  failTakenRefund,
  findAttempt,
  listLiveAttempts,
  listSessionAttempts,
  settleAttempt,
} from '../store/attempts.ts';
import {
  closeDispute,
  type Dispute,
  findDispute,
  insertDispute,
  listSessionDisputes,
} from '../store/disputes.ts';
import { insertLedgerLines } from '../store/ledger.ts';
import {
  findMemberById,
  type GroupSums,
  listMembers,
  type Member,
  moveMember,
  startAuthenticating,
  stopPaying,
  sumGroup,
} from '../store/members.ts';
import { findMerchantById } from '../store/merchants.ts';
import type { Database, Executor } from '../store/schema.ts';
import {
  findSessionByIdUnscoped,
  fundPendingSession,
  lockSession,
  type Session,
  scheduleSettling,
} from '../store/sessions.ts';
import { type AnswerSpec, recordAnswerIfStillOurs } from './idempotency.ts';
import { queueDeclineMail } from './mails.ts';

/**
 * Locks the session for a change and answers it with the change's time: the clock read once the lock is
 * held. A change that waited on another for the lock is then never dated before it, so a session's event
 * timestamps follow the order its changes committed in (docs/api.md#event-payload).
 */
export async function lockForChange(
  deps: Deps,
  trx: Transaction<Database>,
  sessionId: string,
): Promise<{ session: Session | undefined; now: number }> {
  const session = await lockSession(trx, sessionId, deps.clock.now());
  return { session, now: deps.clock.now() };
}

/** The session, its members and its attempts, as one transaction left them. */
export interface MoneyState {
  session: Session;
  members: Member[];
  attempts: Attempt[];
}

export interface Recorded {
  /** The session as the record left it. */
  session: Session;
  /** The attempt's member as it now stands (none for a transfer). */
  member: Member | undefined;
  /** The attempt as it now stands (settled by this call, or by another process first). */
  attempt: Attempt;
  /** False when the outcome was unknown, or another process had already recorded this attempt. */
  recorded: boolean;
  /** How far the group is as the record left it: a payer's answer shows it (docs/api.md#pay-page-api). */
  progress: GroupProgress;
  /**
   * The session with its members and attempts as the record's transaction left them, when it read them
   * all (not when it read only its group's sums): the settling that follows starts from it rather than
   * reading them again (flows/settle.ts settleSession).
   */
  state?: MoneyState;
}

/** How far the group is, from its sums (domain/members.ts progressOf counts the same from its members). */
const progressOfSums = (g: GroupSums): GroupProgress => ({
  size: g.size,
  paidCount: g.paid + g.authorized,
  paidCents: g.paidCents,
});

/** The session's facts the settling rules of domain/settling.ts read. */
export const settlingFacts = (session: Session) => ({
  status: session.status,
  capture: session.groupConfig.capture,
  expiresAt: session.expiresAt,
  settledAt: session.settledAt,
});

/** How long the settling waits on the processor and on payers, from the configuration. */
export const settlingTimes = (deps: Pick<Deps, 'config'>) => ({
  recoveryAfterMs: deps.config.paymentRecoveryAfterMs,
  authTimeoutMs: deps.config.paymentAuthTimeoutMs,
});

/**
 * The members and attempts of `session`, read in `db` (a transaction holding its lock, or not). A closed
 * session's payments carry the status of their disputes: whether one is refunded depends on it
 * (domain/settling.ts refundBlocked); nothing else is refunded, so the others are read without.
 */
export async function readMoneyState(db: Executor, session: Session): Promise<MoneyState> {
  const members = await listMembers(db, session.id);
  const attempts = await listSessionAttempts(db, session.id);
  const closed = isClosed(session.status);
  return {
    session,
    members,
    attempts: closed ? withDisputes(attempts, await listSessionDisputes(db, session.id)) : attempts,
  };
}

/** The session with its members and attempts, read without a transaction. */
export async function loadMoney(deps: Deps, sessionId: string): Promise<MoneyState | undefined> {
  const session = await findSessionByIdUnscoped(deps.db.kysely, sessionId);
  return session && readMoneyState(deps.db.kysely, session);
}

function resultOf(outcome: Exclude<Outcome, { status: 'unknown' | 'action_required' }>): AttemptResult {
  switch (outcome.status) {
    case 'succeeded':
      return {
        state: 'succeeded',
        processorId: outcome.processorId,
        cardBrand: outcome.card?.brand,
        cardLast4: outcome.card?.last4,
        pending: outcome.pending,
      };
    case 'declined':
      return {
        state: 'declined',
        declineCode: outcome.declineCode,
        error: outcome.message,
        cardBrand: outcome.card?.brand,
        cardLast4: outcome.card?.last4,
      };
    case 'failed':
      return { state: 'failed', error: outcome.message };
  }
}

/** Writes one ledger entry of the session (its lines share an entry id). */
async function post(
  trx: Transaction<Database>,
  session: Session,
  attemptId: string | null,
  lines: LedgerLine[],
  now: number,
): Promise<void> {
  const entryId = ids.ledgerEntry();
  await insertLedgerLines(
    trx,
    lines.map((l) => ({
      id: ids.ledgerLine(),
      entryId,
      merchantId: session.merchantId,
      sessionId: session.id,
      attemptId,
      createdAt: now,
      ...l,
    })),
  );
}

const moneyOf = (a: Pick<Attempt, 'amountCents' | 'feeCents' | 'currency'>, memberId: string) => ({
  memberId,
  shareCents: a.amountCents - a.feeCents,
  feeCents: a.feeCents,
  currency: a.currency,
});

/** What the payer's page says after a capture was declined. */
const CAPTURE_DECLINED =
  'Your card was declined when the group was complete, so your hold was released. Pay your share again, with another card if need be.';

/**
 * Records the outcome of a started attempt with everything it causes, in one transaction: the member's
 * move, the ledger entry, the event, the session funded by its last share, the closing of a closed
 * session whose money has all gone back, and when the session is next to be settled. An `unknown`
 * outcome records nothing: the attempt stays started until the recovery learns what happened.
 */
export async function recordOutcome<R>(
  deps: Deps,
  attempt: Attempt,
  outcome: Outcome,
  answer?: { spec: AnswerSpec<R> | undefined; of: (recorded: Recorded) => R | undefined },
): Promise<Recorded> {
  return deps.db.kysely.transaction().execute(async (trx) => {
    const { session, now } = await lockForChange(deps, trx, attempt.sessionId);
    if (!session) throw new Error(`attempt ${attempt.id} names a session that does not exist`);
    const memberOf = (members?: readonly Member[]) =>
      attempt.memberId === null
        ? undefined
        : members
          ? members.find((m) => m.id === attempt.memberId)
          : findMemberById(trx, attempt.memberId);
    const unrecorded = async (): Promise<Recorded> => {
      const current = (await findAttempt(trx, attempt.id)) ?? attempt;
      const progress = progressOfSums(await sumGroup(trx, session.id));
      return { session, member: await memberOf(), attempt: current, recorded: false, progress };
    };
    if (outcome.status === 'unknown') return unrecorded();
    if (outcome.status === 'action_required') {
      // The payer's bank asks them to authenticate: nothing moved; the attempt stays open, waiting on them.
      const waiting = await awaitAuthentication(trx, attempt.id, {
        processorId: outcome.processorId,
        clientSecret: outcome.clientSecret,
        cardBrand: outcome.card?.brand,
        cardLast4: outcome.card?.last4,
      });
      if (!waiting) return unrecorded();
      if (!(await startAuthenticating(trx, attempt.memberId as string, attempt.id, now)))
        throw new Error(
          `member ${attempt.memberId} is not paying with attempt ${attempt.id}: cannot authenticate`,
        );
      const state = await scheduleSettlement(deps, trx, await readMoneyState(trx, session), now);
      return {
        session: state.session,
        member: await memberOf(state.members),
        attempt: waiting,
        recorded: true,
        progress: progressOf(state.members),
        state,
      };
    }
    const settled = await settleAttempt(trx, attempt.sessionId, attempt.id, resultOf(outcome), now);
    if (!settled) return unrecorded();
    const { events, moved } = await applyOutcome(trx, session, settled, outcome, now);
    // The last share makes the session funded in the same transaction: charged under immediate, the
    // last hold captured under on_funded.
    const takesMoney =
      session.groupConfig.capture === 'immediate' ? attempt.kind === 'charge' : attempt.kind === 'capture';
    const funds = (group: GroupCounts) =>
      session.status === 'pending' && outcome.status === 'succeeded' && takesMoney && isFullyPaid(group);

    let recorded: Recorded;
    // A pending session that this outcome neither funds nor makes ready to capture owes only the recovery
    // of its calls in flight: its group's sums and live attempts are all the rules read, and all they
    // write is the events and when it is next settled. Anything else reads the whole session.
    const group = session.status === 'pending' ? await sumGroup(trx, session.id) : undefined;
    if (group && !funds(group) && owesOnlyRecovery(settlingFacts(session), group)) {
      const live = await listLiveAttempts(trx, session.id);
      // The member as its move left it (update … returning), else as it stands.
      const member = moved ?? (await memberOf());
      const snapshot = { session, paidCents: group.paidCents, member, charges: live.charges };
      for (const type of events) await recordEvent(deps.db.events, trx, type, snapshot, now);
      const next = recoveryAt(live.started, settlingTimes(deps));
      if (next !== session.settleAfter) await scheduleSettling(trx, session.id, next);
      recorded = {
        session: { ...session, settleAfter: next },
        member,
        attempt: settled,
        recorded: true,
        progress: progressOfSums(group),
      };
    } else {
      let state = await readMoneyState(trx, session);
      // The session is funded before the outcome's events are written, so that they report the session
      // after the change (the last share's group.share_paid says `funded`); group.funded comes after them.
      const funded = funds(countGroup(state.members)) ? await fund(deps, trx, state, now) : undefined;
      if (funded) state = funded;
      const snapshot = {
        session: state.session,
        paidCents: paidAmountOf(state.members),
        member: await memberOf(state.members),
        charges: chargeIds(state.attempts),
      };
      for (const type of events) await recordEvent(deps.db.events, trx, type, snapshot, now);
      if (funded) {
        const { member: _, ...group } = snapshot;
        await recordEvent(deps.db.events, trx, 'group.funded', group, now);
      }
      state = await scheduleSettlement(deps, trx, await finishIfSettled(deps, trx, state, now), now);
      recorded = {
        session: state.session,
        member: await memberOf(state.members),
        attempt: settled,
        recorded: true,
        progress: progressOf(state.members),
        state,
      };
    }
    const result = answer?.of(recorded);
    // The money moved whatever becomes of the answer: a claim taken over meanwhile must not undo its record.
    if (answer && result !== undefined) await recordAnswerIfStillOurs(trx, answer.spec, result);
    return recorded;
  });
}

/**
 * The member's move and the ledger entry of one settled attempt; answers the events it causes. A member
 * not in the state its claim found is a bug: the record fails rather than book it.
 */
async function applyOutcome(
  trx: Transaction<Database>,
  session: Session,
  attempt: Attempt,
  outcome: Exclude<Outcome, { status: 'unknown' | 'action_required' }>,
  now: number,
): Promise<{ events: EventType[]; moved?: Member }> {
  const memberId = attempt.memberId as string;
  let moved: Member | undefined;
  // A payment the processor asked the payer to authenticate left its member authenticating, not pending.
  const payingFrom: MemberStatus = attempt.clientSecret !== null ? 'authenticating' : 'pending';
  const move = async (from: MemberStatus, to: MemberStatus, failure?: string | null) => {
    const paying = from === 'pending' || from === 'authenticating';
    const options = { now, failure, ...(paying ? { attemptId: attempt.id } : {}) };
    moved = await moveMember(trx, session.id, memberId, from, to, options);
    if (!moved)
      throw new Error(
        `member ${memberId} is not ${from}: attempt ${attempt.id} (${attempt.kind}) cannot be recorded`,
      );
  };
  const book = (lines: LedgerLine[]) => post(trx, session, attempt.id, lines, now);
  const succeeded = outcome.status === 'succeeded';

  switch (attempt.kind) {
    case 'charge':
    case 'authorize':
      if (!succeeded) {
        // A decline says why, for the payer's page; a processing error is nobody's fault to show.
        // An authentication that failed or was abandoned says so too: the payer was in the middle of it.
        const why =
          payingFrom === 'authenticating' && outcome.status !== 'declined' && isClosed(session.status)
            ? `The group was ${session.status} before your bank's check was completed, so the card was not charged.`
            : outcome.status === 'declined' || payingFrom === 'authenticating'
              ? attempt.error
              : null;
        if (payingFrom === 'authenticating') await move('authenticating', 'pending', why);
        else await stopPaying(trx, session.id, memberId, attempt.id, why, now);
        // The organizer hears of it later if the share is still open then (flows/mails.ts).
        if (outcome.status === 'declined') await queueDeclineMail(trx, session, attempt, now);
        return { events: [], moved };
      }
      await move(payingFrom, attempt.kind === 'charge' ? 'paid' : 'authorized', null);
      await book(
        attempt.kind === 'charge'
          ? chargeEntry(moneyOf(attempt, memberId))
          : authorizeEntry(moneyOf(attempt, memberId)),
      );
      // Reported even when the session closed meanwhile: its refund, reported next, then makes sense.
      return { events: ['group.share_paid'], moved };
    case 'capture':
      if (succeeded) {
        await move('authorized', 'paid', null);
        await book(captureEntry(moneyOf(attempt, memberId)));
      } else if (outcome.status === 'declined') {
        // The hold is gone with the failed capture: the member owes their share again.
        await move('authorized', 'pending', CAPTURE_DECLINED);
        await book(releaseEntry(moneyOf(attempt, memberId)));
        if (session.status === 'pending') return { events: ['group.share_failed'], moved };
      }
      return { events: [], moved };
    case 'release':
      if (succeeded) {
        await move('authorized', 'released');
        await book(releaseEntry(moneyOf(attempt, memberId)));
      }
      return { events: [], moved };
    case 'refund':
      if (!succeeded) return { events: [] };
      await move('paid', 'refunded');
      await book(refundEntry(moneyOf(attempt, memberId)));
      return { events: ['group.share_refunded'], moved };
    case 'transfer':
      if (succeeded) await book(transferEntry(attempt.amountCents, attempt.currency));
      return { events: [] };
  }
}

/**
 * The last share is in: the session becomes funded, shares of nothing count as paid, and the merchant and
 * FX fees are taken from its funds. Answers the funded state, or undefined when the session was no longer
 * pending; the caller writes group.funded after the events of the outcome that funded it. The transfer
 * follows, by the settling.
 */
async function fund(
  deps: Deps,
  trx: Transaction<Database>,
  state: MoneyState,
  now: number,
): Promise<MoneyState | undefined> {
  const { session } = state;
  if (!(await fundPendingSession(trx, session.id, now))) return undefined;
  // Shares of nothing count as paid: each is moved, and the group read again only when one was.
  let members = state.members;
  for (const m of state.members) {
    if (m.status === 'pending' && m.amountCents === 0) {
      const moved = await moveMember(trx, session.id, m.id, 'pending', 'paid', { now });
      if (moved) members = members.map((other) => (other.id === moved.id ? moved : other));
    }
  }
  const merchant = await findMerchantById(trx, deps.db.secrets, session.merchantId);
  const fees = sessionFees(session, merchant);
  await post(trx, session, null, fundedEntry({ currency: session.currency, ...fees }), now);
  return {
    ...state,
    session: { ...session, status: 'funded', fundedAt: now, updatedAt: now },
    members,
  };
}

/**
 * A funded session is settled once its transfer succeeded; a closed one once no member holds money or a
 * payment in flight, when its closing event (group.cancelled or group.expired) is written: after the
 * refunds, as a merchant fulfilling or restocking on it expects.
 */
async function finishIfSettled(
  deps: Deps,
  trx: Transaction<Database>,
  state: MoneyState,
  now: number,
): Promise<MoneyState> {
  const { session, members, attempts } = state;
  if (session.settledAt !== null || session.status === 'pending') return state;
  if (session.status === 'funded') {
    if (!attempts.some((a) => a.kind === 'transfer' && a.state === 'succeeded')) return state;
  } else {
    if (members.some((m) => holdsMoney(m, attempts))) return state;
    const type: EventType = session.status === 'cancelled' ? 'group.cancelled' : 'group.expired';
    const snapshot = { session, paidCents: paidAmountOf(members), charges: chargeIds(attempts) };
    await recordEvent(deps.db.events, trx, type, snapshot, now);
  }
  await scheduleSettling(trx, session.id, null, now);
  return { ...state, session: { ...session, settledAt: now, settleAfter: null } };
}

/** Writes when the session is next to be settled; answers the state with it. */
export async function scheduleSettlement(
  deps: Deps,
  trx: Transaction<Database>,
  state: MoneyState,
  now: number,
): Promise<MoneyState> {
  const { session, members, attempts } = state;
  const next = nextSettleAt(settlingFacts(session), members, attempts, now, settlingTimes(deps));
  if (next !== session.settleAfter) await scheduleSettling(trx, session.id, next);
  return { ...state, session: { ...session, settleAfter: next } };
}

/**
 * Writes what a closed session owes and, when it owes nothing, its closing event; used by the close
 * itself (cancel, expiry) and by the settling loop once nothing is due, in the caller's transaction
 * holding the session's lock. Answers the state as it now stands.
 */
export async function settleClosing(
  deps: Deps,
  trx: Transaction<Database>,
  session: Session,
  now: number,
): Promise<MoneyState> {
  const state = await readMoneyState(trx, session);
  return scheduleSettlement(deps, trx, await finishIfSettled(deps, trx, state, now), now);
}

/** What a payer's page and the merchant read when a refund the processor took failed later. */
const REFUND_FAILED =
  'Your refund could not reach your card (it may be closed or replaced). The shop has been told and will return your money another way.';

/**
 * A refund the processor took and later reported failed (Stripe's refund.failed; the sandbox's card
 * 4000000000005126): in one transaction the refund attempt becomes failed, the member is paid again (the
 * money is back with us), the ledger entry is reversed, and group.share_refund_failed is written. The
 * refund is not tried again by itself: an operator decides (docs/operations.md#a-refund-failed). False
 * when there was nothing to record (told before, or not a refund of ours that had succeeded).
 */
export async function recordRefundFailure(deps: Deps, refund: Attempt, reason: string): Promise<boolean> {
  return deps.db.kysely.transaction().execute(async (trx) => {
    const { session, now } = await lockForChange(deps, trx, refund.sessionId);
    if (!session) return false;
    const failed = await failTakenRefund(trx, refund.id, reason, now);
    if (!failed) return false;
    const memberId = failed.memberId as string;
    if (!(await moveMember(trx, session.id, memberId, 'refunded', 'paid', { now, failure: REFUND_FAILED })))
      throw new Error(
        `member ${memberId} is not refunded: the failure of refund ${refund.id} cannot be recorded`,
      );
    await post(trx, session, failed.id, refundFailedEntry(moneyOf(failed, memberId)), now);
    const state = await readMoneyState(trx, session);
    await recordEvent(
      deps.db.events,
      trx,
      'group.share_refund_failed',
      {
        session,
        paidCents: paidAmountOf(state.members),
        member: state.members.find((m) => m.id === memberId),
        charges: chargeIds(state.attempts),
        refund: {
          id: failed.processorId,
          member_id: memberId,
          amount_cents: failed.amountCents,
          status: 'failed',
          failure_reason: reason,
        },
      },
      now,
    );
    await scheduleSettlement(deps, trx, state, now);
    return true;
  });
}

/**
 * A refund the processor took pending has reached the card: it is listed succeeded from now on. Nothing
 * else changes (the member was refunded, the ledger booked and the event sent when it was taken). Answers
 * whether it was a pending refund.
 */
export async function recordRefundConfirmed(deps: Deps, refund: Attempt): Promise<boolean> {
  const now = deps.clock.now();
  return deps.db.kysely.transaction().execute(async (trx) => {
    // Under the session's lock, as every change to its money is; the lock also tells the read caches.
    if (!(await lockSession(trx, refund.sessionId, now))) return false;
    return confirmTakenRefund(trx, refund.id, now);
  });
}

const disputeToEvent = (d: Dispute) => ({
  id: d.id,
  member_id: d.memberId,
  amount_cents: d.amountCents,
  reason: d.reason,
  status: d.status,
});

/**
 * A payer disputed their payment with their bank: the dispute is recorded on the member, the amount held
 * back is booked, and group.share_disputed is written, in one transaction. `payment` is the member's
 * charge or hold the dispute is on. False when it was recorded before.
 */
export async function recordDisputeOpened(
  deps: Deps,
  payment: Attempt,
  facts: DisputeFacts,
): Promise<boolean> {
  return deps.db.kysely.transaction().execute(async (trx) => {
    const { session, now } = await lockForChange(deps, trx, payment.sessionId);
    if (!session) return false;
    const memberId = payment.memberId as string;
    const dispute: Dispute = {
      id: facts.id,
      merchantId: session.merchantId,
      sessionId: session.id,
      memberId,
      attemptId: payment.id,
      amountCents: facts.amountCents,
      currency: payment.currency,
      reason: facts.reason,
      status: 'needs_response',
      createdAt: now,
      updatedAt: now,
      closedAt: null,
    };
    if (!(await insertDispute(trx, dispute))) return false;
    await bookDispute(
      deps,
      trx,
      session,
      payment.id,
      disputeOpenedEntry(memberId, dispute.amountCents, dispute.currency),
      'group.share_disputed',
      dispute,
      now,
    );
    // A dispute closed as soon as it opened (told in one go) is closed here too.
    if (facts.status !== 'needs_response')
      await closeRecordedDispute(deps, trx, session, facts.id, facts.status, now);
    return true;
  });
}

/** A dispute closed, won or lost: its status, the money held back returned or lost, group.share_dispute_closed. */
export async function recordDisputeClosed(
  deps: Deps,
  disputeId: string,
  status: 'won' | 'lost',
): Promise<boolean> {
  const known = await findDispute(deps.db.kysely, disputeId);
  if (!known) return false;
  return deps.db.kysely.transaction().execute(async (trx) => {
    const { session, now } = await lockForChange(deps, trx, known.sessionId);
    return session ? closeRecordedDispute(deps, trx, session, disputeId, status, now) : false;
  });
}

async function closeRecordedDispute(
  deps: Deps,
  trx: Transaction<Database>,
  session: Session,
  disputeId: string,
  status: 'won' | 'lost',
  now: number,
): Promise<boolean> {
  const closed = await closeDispute(trx, disputeId, status, now);
  if (!closed) return false;
  await bookDispute(
    deps,
    trx,
    session,
    closed.attemptId,
    disputeClosedEntry(closed.memberId, closed.amountCents, closed.currency, status),
    'group.share_dispute_closed',
    closed,
    now,
  );
  return true;
}

/** A dispute's ledger lines on the payment they concern, then its event with the session as it now stands. */
async function bookDispute(
  deps: Deps,
  trx: Transaction<Database>,
  session: Session,
  attemptId: string,
  entry: Parameters<typeof post>[3],
  type: 'group.share_disputed' | 'group.share_dispute_closed',
  dispute: Parameters<typeof disputeToEvent>[0] & { memberId: string },
  now: number,
): Promise<void> {
  await post(trx, session, attemptId, entry, now);
  const state = await readMoneyState(trx, session);
  await recordEvent(
    deps.db.events,
    trx,
    type,
    {
      session,
      paidCents: paidAmountOf(state.members),
      member: state.members.find((m) => m.id === dispute.memberId),
      charges: chargeIds(state.attempts),
      dispute: disputeToEvent(dispute),
    },
    now,
  );
  // A closed session's refund of this payment waits while the dispute is open, is owed again once the
  // merchant won it, and is never owed once they lost it (domain/settling.ts refundBlocked): its closing
  // and its settling are decided again.
  await scheduleSettlement(deps, trx, await finishIfSettled(deps, trx, state, now), now);
}
