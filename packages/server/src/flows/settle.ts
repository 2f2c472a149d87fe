// Money after the call (docs/decisions.md#payments): recording what the processor did, in one
// transaction with its member move, ledger entry and event; and settling what a session still owes
// (captures, the transfer, refunds and releases), each piece claimed, called and recorded in turn.
// Any number of processes may settle one session at once: every claim is a unique idempotency key.
import type { Transaction } from 'kysely';
import type { Deps } from '../deps.ts';
import { merchantFees } from '../domain/fees.ts';
import {
  authorizeEntry,
  captureEntry,
  chargeEntry,
  fundedEntry,
  type LedgerLine,
  refundEntry,
  releaseEntry,
  transferEntry,
} from '../domain/ledger.ts';
import type { MemberStatus } from '../domain/session-state.ts';
import {
  chargeIds,
  holdsMoney,
  isFullyPaid,
  nextSettleAt,
  owedWork,
  recoveryDueAt,
  triesOf,
  type Work,
  workDueAt,
} from '../domain/settling.ts';
import { recordEvent } from '../events/outbox.ts';
import type { EventType } from '../events/types.ts';
import { ids } from '../ids.ts';
import type { Operation, Outcome } from '../processor/types.ts';
import { perform } from '../processor/types.ts';
import {
  type Attempt,
  type AttemptResult,
  findAttempt,
  insertAttempt,
  listSessionAttempts,
  settleAttempt,
  startedAttempt,
  touchStartedAttempt,
} from '../store/attempts.ts';
import { isUniqueViolation } from '../store/db.ts';
import { insertLedgerLines, listSessionLedgerLines } from '../store/ledger.ts';
import { listMembers, type Member, moveMember, stopPaying } from '../store/members.ts';
import { findMerchantById } from '../store/merchants.ts';
import type { Database } from '../store/schema.ts';
import {
  findSessionByIdUnscoped,
  fundPendingSession,
  listSessionsToSettle,
  lockSession,
  type Session,
  scheduleSettling,
} from '../store/sessions.ts';
import { type AnswerSpec, recordAnswerIfStillOurs } from './idempotency.ts';

/** The session, its members and its attempts, as one transaction left them. */
export interface MoneyState {
  session: Session;
  members: Member[];
  attempts: Attempt[];
}

export interface Recorded extends MoneyState {
  /** The attempt as it now stands (settled by this call, or by another process first). */
  attempt: Attempt;
  /** False when the outcome was unknown, or another process had already recorded this attempt. */
  recorded: boolean;
}

const facts = (session: Session) => ({
  status: session.status,
  capture: session.groupConfig.capture,
  expiresAt: session.expiresAt,
  settledAt: session.settledAt,
});

function resultOf(outcome: Exclude<Outcome, { status: 'unknown' }>): AttemptResult {
  switch (outcome.status) {
    case 'succeeded':
      return {
        state: 'succeeded',
        processorId: outcome.processorId,
        cardBrand: outcome.card?.brand,
        cardLast4: outcome.card?.last4,
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
      ...l,
      id: ids.ledgerLine(),
      entryId,
      merchantId: session.merchantId,
      sessionId: session.id,
      attemptId,
      createdAt: now,
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
  const now = deps.clock.now();
  return deps.db.kysely.transaction().execute(async (trx) => {
    const locked = await lockSession(trx, attempt.sessionId, now);
    if (!locked) throw new Error(`attempt ${attempt.id} names a session that does not exist`);
    let session = locked;
    const settled =
      outcome.status === 'unknown' ? undefined : await settleAttempt(trx, attempt.id, resultOf(outcome), now);
    if (!settled) {
      const state = await loadState(trx, session);
      const current = (await findAttempt(trx, attempt.id)) ?? attempt;
      return { ...state, attempt: current, recorded: false };
    }
    const memberId = attempt.memberId;
    const events: EventType[] = [];
    /** A member not in the state its claim found is a bug: fail the record rather than book it. */
    const move = async (from: MemberStatus, to: MemberStatus, failure?: string | null) => {
      const id = memberId as string;
      const options = { now, failure, ...(from === 'pending' ? { attemptId: attempt.id } : {}) };
      if (!(await moveMember(trx, id, from, to, options)))
        throw new Error(
          `member ${id} is not ${from}: attempt ${attempt.id} (${attempt.kind}) cannot be recorded`,
        );
    };
    const succeeded = outcome.status === 'succeeded';
    const open = session.status === 'pending';

    switch (attempt.kind) {
      case 'charge':
      case 'authorize': {
        const id = memberId as string;
        if (succeeded) {
          await move('pending', attempt.kind === 'charge' ? 'paid' : 'authorized', null);
          const money = moneyOf(attempt, id);
          await post(
            trx,
            session,
            attempt.id,
            attempt.kind === 'charge' ? chargeEntry(money) : authorizeEntry(money),
            now,
          );
          // Reported even when the session closed meanwhile: its refund, reported next, then makes sense.
          events.push('group.share_paid');
        } else {
          // A decline says why, for the payer's page; a processing error is nobody's fault to show.
          await stopPaying(trx, id, attempt.id, outcome.status === 'declined' ? settled.error : null, now);
        }
        break;
      }
      case 'capture': {
        const id = memberId as string;
        if (succeeded) {
          await move('authorized', 'paid', null);
          await post(trx, session, attempt.id, captureEntry(moneyOf(attempt, id)), now);
        } else if (outcome.status === 'declined') {
          // The hold is gone with the failed capture: the member owes their share again.
          await move('authorized', 'pending', CAPTURE_DECLINED);
          await post(trx, session, attempt.id, releaseEntry(moneyOf(attempt, id)), now);
          if (open) events.push('group.share_failed');
        }
        break;
      }
      case 'release':
        if (succeeded) {
          await move('authorized', 'released');
          await post(trx, session, attempt.id, releaseEntry(moneyOf(attempt, memberId as string)), now);
        }
        break;
      case 'refund':
        if (succeeded) {
          await move('paid', 'refunded');
          await post(trx, session, attempt.id, refundEntry(moneyOf(attempt, memberId as string)), now);
          events.push('group.share_refunded');
        }
        break;
      case 'transfer':
        if (succeeded)
          await post(trx, session, attempt.id, transferEntry(attempt.amountCents, attempt.currency), now);
        break;
    }

    const state = await loadState(trx, session);
    let members = state.members;
    const attempts = state.attempts;
    const member = members.find((m) => m.id === memberId);
    for (const type of events) {
      await recordEvent(
        deps.db.events,
        trx,
        type,
        { session, members, member, charges: chargeIds(attempts) },
        now,
      );
    }
    // The last share makes the session funded in the same transaction: charged under immediate, the
    // last hold captured under on_funded.
    const takesMoney =
      session.groupConfig.capture === 'immediate' ? attempt.kind === 'charge' : attempt.kind === 'capture';
    if (open && succeeded && takesMoney && isFullyPaid(members)) {
      session = await fund(deps, trx, session, members, attempts, now);
      ({ members } = await loadState(trx, session));
    }
    session = await finishIfSettled(deps, trx, session, members, attempts, now);
    session = await schedule(deps, trx, session, members, attempts, now);
    const recorded: Recorded = { session, members, attempts, attempt: settled, recorded: true };
    const result = answer?.of(recorded);
    // The money moved whatever becomes of the answer: a claim taken over meanwhile must not undo its record.
    if (answer && result !== undefined) await recordAnswerIfStillOurs(trx, answer.spec, result);
    return recorded;
  });
}

async function loadState(trx: Transaction<Database>, session: Session) {
  return {
    session,
    members: await listMembers(trx, session.id),
    attempts: await listSessionAttempts(trx, session.id),
  };
}

/** The session with its members and attempts, read without a transaction. */
export async function loadMoney(deps: Deps, sessionId: string): Promise<MoneyState | undefined> {
  const session = await findSessionByIdUnscoped(deps.db.kysely, sessionId);
  if (!session) return undefined;
  return {
    session,
    members: await listMembers(deps.db.kysely, sessionId),
    attempts: await listSessionAttempts(deps.db.kysely, sessionId),
  };
}

/**
 * The last share is in: the session becomes funded, shares of nothing count as paid, the merchant and FX
 * fees are taken from its funds, and group.funded is written. The transfer follows, by the settling.
 */
async function fund(
  deps: Deps,
  trx: Transaction<Database>,
  session: Session,
  members: Member[],
  attempts: Attempt[],
  now: number,
): Promise<Session> {
  if (!(await fundPendingSession(trx, session.id, now))) return session;
  for (const m of members) {
    if (m.status === 'pending' && m.amountCents === 0)
      await moveMember(trx, m.id, 'pending', 'paid', { now });
  }
  const merchant = await findMerchantById(trx, deps.db.secrets, session.merchantId);
  const fees = merchantFees({
    total: session.totalCents,
    merchantFeePpm: session.merchantFeePpm,
    fxFeePpm: merchant?.fxFeePpm,
    payoutMode: merchant?.payoutMode ?? 'checkout',
    payoutCurrency: merchant?.payoutCurrency ?? null,
    checkoutCurrency: session.currency,
  });
  await post(trx, session, null, fundedEntry({ ...fees, currency: session.currency }), now);
  const funded: Session = { ...session, status: 'funded', fundedAt: now, updatedAt: now };
  const after = await listMembers(trx, session.id);
  await recordEvent(
    deps.db.events,
    trx,
    'group.funded',
    { session: funded, members: after, charges: chargeIds(attempts) },
    now,
  );
  return funded;
}

/**
 * A funded session is settled once its transfer succeeded; a closed one once no member holds money or a
 * payment in flight, when its closing event (group.cancelled or group.expired) is written: after the
 * refunds, as a merchant fulfilling or restocking on it expects.
 */
async function finishIfSettled(
  deps: Deps,
  trx: Transaction<Database>,
  session: Session,
  members: Member[],
  attempts: Attempt[],
  now: number,
): Promise<Session> {
  if (session.settledAt !== null || session.status === 'pending') return session;
  if (session.status === 'funded') {
    if (!attempts.some((a) => a.kind === 'transfer' && a.state === 'succeeded')) return session;
    await scheduleSettling(trx, session.id, null, now);
    return { ...session, settledAt: now, settleAfter: null };
  }
  if (members.some(holdsMoney)) return session;
  const type: EventType = session.status === 'cancelled' ? 'group.cancelled' : 'group.expired';
  await recordEvent(deps.db.events, trx, type, { session, members, charges: chargeIds(attempts) }, now);
  await scheduleSettling(trx, session.id, null, now);
  return { ...session, settledAt: now, settleAfter: null };
}

/** Writes when the session is next to be settled; answers the session with it. */
async function schedule(
  deps: Deps,
  trx: Transaction<Database>,
  session: Session,
  members: Member[],
  attempts: Attempt[],
  now: number,
): Promise<Session> {
  const next = nextSettleAt(facts(session), members, attempts, now, deps.config.paymentRecoveryAfterMs);
  if (next !== session.settleAfter) await scheduleSettling(trx, session.id, next);
  return { ...session, settleAfter: next };
}

/**
 * Writes what a closed session owes and, when it owes nothing, its closing event; used by the close
 * itself (cancel, expiry), in its transaction. Answers the session as it now stands.
 */
export async function settleClosing(
  deps: Deps,
  trx: Transaction<Database>,
  session: Session,
  now: number,
): Promise<MoneyState> {
  const { members, attempts } = await loadState(trx, session);
  const finished = await finishIfSettled(deps, trx, session, members, attempts, now);
  return { session: await schedule(deps, trx, finished, members, attempts, now), members, attempts };
}

/** The operation an attempt stands for, as the processor is sent it (again, for recovery). */
export function operationOf(attempt: Attempt): Operation {
  const common = { key: attempt.key, sessionId: attempt.sessionId };
  switch (attempt.kind) {
    case 'charge':
    case 'authorize':
      return {
        ...common,
        kind: attempt.kind,
        amountCents: attempt.amountCents,
        currency: attempt.currency,
        memberId: attempt.memberId as string,
        // The card itself is never kept: the sandbox answers by key alone; Stripe needs the PaymentMethod.
        source: { paymentMethod: attempt.paymentMethod ?? '' },
      };
    case 'capture':
    case 'release':
    case 'refund':
      return {
        ...common,
        kind: attempt.kind,
        paymentId: attempt.targetId as string,
        amountCents: attempt.amountCents,
        currency: attempt.currency,
        memberId: attempt.memberId as string,
      };
    case 'transfer':
      return {
        ...common,
        kind: 'transfer',
        amountCents: attempt.amountCents,
        currency: attempt.currency,
        destination: attempt.destination,
      };
  }
}

/** Calls the processor; a throw is an outcome we cannot know. */
export async function call(deps: Deps, operation: Operation): Promise<Outcome> {
  try {
    return await perform(deps.processor, operation);
  } catch (error) {
    deps.logger.warn({ err: error, kind: operation.kind, key: operation.key }, 'processor call failed');
    return { status: 'unknown', message: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * Claims one piece of work in its own transaction: under the session's lock, checks that it is still
 * owed and not in flight, and writes its attempt with a key made of the work and its try number, so
 * that two processes claiming the same try collide on the key and only one calls. Undefined when the
 * work is no longer owed or another process has it.
 */
async function claimWork(
  deps: Deps,
  sessionId: string,
  work: Work,
): Promise<{ attempt: Attempt; session: Session } | undefined> {
  const now = deps.clock.now();
  try {
    return await deps.db.kysely.transaction().execute(async (trx) => {
      const session = await lockSession(trx, sessionId, now);
      if (!session) return undefined;
      const { members, attempts } = await loadState(trx, session);
      const still = owedWork(facts(session), members, attempts, now).find(
        (w) =>
          w.kind === work.kind &&
          (w.kind === 'transfer' || (work.kind !== 'transfer' && w.memberId === work.memberId)),
      );
      if (!still || workDueAt(still, attempts, now) > now) return undefined;
      const tries = triesOf(attempts, still);
      const amount =
        still.kind === 'transfer' ? await transferAmount(trx, session) : still.payment.amountCents;
      const subject = still.kind === 'transfer' ? session.id : `${still.memberId}_${still.payment.id}`;
      const attempt = startedAttempt(
        {
          id: ids.attempt(),
          key: `gc_${still.kind}_${subject}_${tries.length + 1}`,
          kind: still.kind,
          merchantId: session.merchantId,
          sessionId: session.id,
          memberId: still.kind === 'transfer' ? null : still.memberId,
          targetId: still.kind === 'transfer' ? null : still.payment.processorId,
          amountCents: amount,
          feeCents: still.kind === 'transfer' ? 0 : still.payment.feeCents,
          currency: session.currency,
          paymentMethod: null,
          destination:
            still.kind === 'transfer'
              ? ((await findMerchantById(trx, deps.db.secrets, session.merchantId))?.processorAccountId ??
                null)
              : null,
        },
        now,
      );
      await insertAttempt(trx, attempt);
      await schedule(deps, trx, session, members, [...attempts, attempt], now);
      return { attempt, session };
    });
  } catch (error) {
    if (isUniqueViolation(error)) return undefined;
    throw error;
  }
}

/**
 * total − merchant fee − FX fee: what a funded session transfers to the merchant, with the fees its
 * funding wrote in the ledger (so a payout setting changed since then does not change the transfer).
 */
async function transferAmount(trx: Transaction<Database>, session: Session): Promise<number> {
  const lines = await listSessionLedgerLines(trx, session.id);
  const fees = lines
    .filter((l) => l.account === 'merchant_fees' || l.account === 'fx_fees')
    .reduce((sum, l) => sum + l.amountCents, 0);
  return session.totalCents - fees;
}

/** Asks the processor what became of calls left unanswered past the recovery delay, and records it. */
async function recoverStale(deps: Deps, attempts: Attempt[], now: number): Promise<boolean> {
  let progressed = false;
  for (const a of attempts) {
    if (a.state !== 'started' || recoveryDueAt(a, deps.config.paymentRecoveryAfterMs) > now) continue;
    let outcome: Outcome | undefined;
    try {
      outcome = await deps.processor.retrieve(operationOf(a));
    } catch (error) {
      outcome = { status: 'unknown', message: error instanceof Error ? error.message : String(error) };
    }
    // Never received: it certainly did nothing, and the work (if still owed) is claimed again.
    outcome ??= { status: 'failed', message: 'The processor never received this request; nothing moved.' };
    if (outcome.status === 'unknown') {
      // Asked again a minute later, not at every round: the processor is unreachable or undecided.
      await touchStartedAttempt(deps.db.kysely, a.id, now);
      deps.logger.warn(
        { attempt_id: a.id, session_id: a.sessionId, error: outcome.message },
        'recovery could not learn the outcome; asking again later',
      );
      continue;
    }
    deps.logger.info(
      { attempt_id: a.id, session_id: a.sessionId, outcome: outcome.status },
      'attempt recovered',
    );
    if ((await recordOutcome(deps, a, outcome)).recorded) progressed = true;
  }
  return progressed;
}

/**
 * Does everything the session owes that is due now: recovers calls left unanswered, then claims, calls
 * and records each capture, release, refund or transfer; writes the closing event once a closed
 * session's money is all back. Safe to run in any number of processes at once.
 */
export async function settleSession(deps: Deps, sessionId: string): Promise<void> {
  // Each round does at least one thing or stops; the bound only guards against a bug looping.
  for (let round = 0; round < 20; round++) {
    const session = await findSessionByIdUnscoped(deps.db.kysely, sessionId);
    if (!session) return;
    const members = await listMembers(deps.db.kysely, sessionId);
    const attempts = await listSessionAttempts(deps.db.kysely, sessionId);
    const now = deps.clock.now();
    if (await recoverStale(deps, attempts, now)) continue;
    const due = owedWork(facts(session), members, attempts, now).filter(
      (w) => workDueAt(w, attempts, now) <= now,
    );
    if (due.length === 0) {
      await deps.db.kysely.transaction().execute(async (trx) => {
        const locked = await lockSession(trx, sessionId, deps.clock.now());
        if (locked) await settleClosing(deps, trx, locked, deps.clock.now());
      });
      return;
    }
    for (const work of due) {
      const claimed = await claimWork(deps, sessionId, work);
      if (!claimed) continue;
      const outcome = await call(deps, operationOf(claimed.attempt));
      deps.faults.reach(`${work.kind}-called`);
      if (outcome.status === 'failed' || outcome.status === 'declined')
        deps.logger.warn(
          { attempt_id: claimed.attempt.id, kind: work.kind, error: outcome.message },
          'processor refused',
        );
      await recordOutcome(deps, claimed.attempt, outcome);
    }
  }
}

/** Settles now when the session owes something due now; errors are logged, the worker tries again. */
export async function settleIfDue(deps: Deps, session: Pick<Session, 'id' | 'settleAfter'>): Promise<void> {
  if (session.settleAfter === null || session.settleAfter > deps.clock.now()) return;
  try {
    await settleSession(deps, session.id);
  } catch (error) {
    deps.logger.error(
      { err: error, session_id: session.id },
      'settling a session failed; the worker retries',
    );
  }
}

/** Sessions whose settling is due now, soonest first: what the settling worker works through. */
export const listSessionsDueForSettling = (deps: Deps, limit: number): Promise<string[]> =>
  listSessionsToSettle(deps.db.kysely, deps.clock.now(), limit);
