// The settling loop (docs/decisions.md#payments): what a session still owes in money — captures, the
// transfer, refunds and releases, and the recovery of calls a crash left unanswered — each piece claimed
// under the session's lock, called with no transaction open, and recorded through flows/record.ts. Any
// number of processes may settle one session at once: every claim is a unique idempotency key.

import type { Transaction } from 'kysely';
import type { Deps } from '../deps.ts';
import { isClosed } from '../domain/session-state.ts';
import {
  awaitsAuthentication,
  nextSettleAt,
  owedWork,
  recoveryDueAt,
  refundDue,
  triesOf,
  type Work,
  workDueAt,
} from '../domain/settling.ts';
import { ids } from '../ids.ts';
import type { Outcome } from '../processor/types.ts';
import { type Attempt, insertAttempt, startedAttempt, touchStartedAttempt } from '../store/attempts.ts';
import { isUniqueViolation } from '../store/db.ts';
import { sumSessionAccounts } from '../store/ledger.ts';
import { findMerchantById } from '../store/merchants.ts';
import type { Database } from '../store/schema.ts';
import { listSessionsToSettle, lockSession, type Session } from '../store/sessions.ts';
import { call, operationOf } from './calls.ts';
import {
  loadMoney,
  lockForChange,
  type MoneyState,
  type Recorded,
  readMoneyState,
  recordOutcome,
  scheduleSettlement,
  settleClosing,
  settlingFacts,
  settlingTimes,
} from './record.ts';

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
      const state = await readMoneyState(trx, session);
      const { members, attempts } = state;
      const still = owedWork(settlingFacts(session), members, attempts, now).find(
        (w) =>
          w.kind === work.kind &&
          (w.kind === 'transfer' || (work.kind !== 'transfer' && w.memberId === work.memberId)),
      );
      if (!still || workDueAt(still, attempts, now) > now) return undefined;
      const tries = triesOf(attempts, still);
      // A refund returns what the payment took, less what a lost dispute returned already (refundDue).
      const due =
        still.kind === 'refund'
          ? refundDue(still.payment)
          : still.kind === 'transfer'
            ? { amountCents: await transferAmount(trx, session), feeCents: 0 }
            : { amountCents: still.payment.amountCents, feeCents: still.payment.feeCents };
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
          amountCents: due.amountCents,
          feeCents: due.feeCents,
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
      await scheduleSettlement(deps, trx, { ...state, attempts: [...attempts, attempt] }, now);
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
  return session.totalCents - (await sumSessionAccounts(trx, session.id, ['merchant_fees', 'fx_fees']));
}

/**
 * What became of a started attempt, read from the processor (never by sending it again: docs/decisions.md
 * #recovery). `abandon`: the payment waits on an authentication the payer abandoned (or its session
 * closed), so it is cancelled at the processor, unless the payer completed it first. A request the
 * processor never received certainly did nothing: failed, and the work (if still owed) is claimed again.
 */
async function learnOutcome(deps: Deps, a: Attempt, abandon: boolean): Promise<Outcome> {
  try {
    if (abandon && a.processorId !== null)
      return await deps.processor.cancelOpen(operationOf(a), a.processorId);
    return (
      (await deps.processor.retrieve(operationOf(a), a.processorId)) ?? {
        status: 'failed',
        message: 'The processor never received this request; nothing moved.',
      }
    );
  } catch (error) {
    return { status: 'unknown', message: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * Reads a started attempt's outcome from the processor and records it through the one record path: how
 * the payer's page (refresh) and the processor's events settle a payment. Undefined when the processor
 * could not tell; a recorded answer otherwise (not `recorded` when nothing was new).
 */
export async function settleFromProcessor(deps: Deps, a: Attempt): Promise<Recorded | undefined> {
  const outcome = await learnOutcome(deps, a, false);
  if (outcome.status === 'unknown') {
    deps.logger.warn(
      { attempt_id: a.id, error: outcome.message },
      'could not read the attempt at the processor',
    );
    return undefined;
  }
  return recordOutcome(deps, a, outcome);
}

/**
 * Asks the processor what became of calls left unanswered past the recovery delay, gives up payments
 * whose authentication was abandoned, and records what it learns.
 */
async function recoverStale(deps: Deps, state: MoneyState, now: number): Promise<boolean> {
  const closed = isClosed(state.session.status);
  let progressed = false;
  for (const a of state.attempts) {
    if (a.state !== 'started' || recoveryDueAt(a, settlingTimes(deps), closed) > now) continue;
    const outcome = await learnOutcome(deps, a, awaitsAuthentication(a));
    if (outcome.status === 'unknown' || outcome.status === 'action_required') {
      // Asked again a minute later, not at every round: the processor is unreachable or undecided.
      await touchStartedAttempt(deps.db.kysely, a.id, now);
      deps.logger.warn(
        { attempt_id: a.id, session_id: a.sessionId, outcome: outcome.status },
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
export async function settleSession(deps: Deps, sessionId: string, known?: MoneyState): Promise<void> {
  // A round starts from the state the last record left when it has one (`known`, or the round before's
  // when each of its pieces of work was recorded), else from a read. Either may be overtaken by another
  // process the moment after: what a round decides from it is decided again under the session's lock
  // (claimWork, settleClosing) before anything is written, so it reads only what a fresh read would.
  let next = known;
  // Each round does at least one thing or stops; the bound only guards against a bug looping.
  for (let round = 0; round < 20; round++) {
    const state = next ?? (await loadMoney(deps, sessionId));
    next = undefined;
    if (!state) return;
    const { session, members, attempts } = state;
    const now = deps.clock.now();
    if (await recoverStale(deps, state, now)) continue;
    const due = owedWork(settlingFacts(session), members, attempts, now).filter(
      (w) => workDueAt(w, attempts, now) <= now,
    );
    if (due.length === 0) {
      // Nothing to close (pending, or settled already) and the schedule already what the rules say: the
      // locked pass below would write nothing. Every writer schedules the session under its lock, so a
      // change made since this read has scheduled itself.
      const closes = session.status !== 'pending' && session.settledAt === null;
      const next = nextSettleAt(settlingFacts(session), members, attempts, now, settlingTimes(deps));
      if (!closes && next === session.settleAfter) return;
      await deps.db.kysely.transaction().execute(async (trx) => {
        const { session: locked, now } = await lockForChange(deps, trx, sessionId);
        if (locked) await settleClosing(deps, trx, locked, now);
      });
      return;
    }
    // The last record's state stands for the next round only when every piece of work was recorded by
    // this round in turn: each record read its state after the ones before it committed.
    let left: MoneyState | undefined;
    let whole = true;
    for (const work of due) {
      const claimed = await claimWork(deps, sessionId, work);
      if (!claimed) {
        whole = false;
        continue;
      }
      const outcome = await call(deps, operationOf(claimed.attempt));
      deps.faults.reach(`${work.kind}-called`);
      if (outcome.status === 'failed' || outcome.status === 'declined')
        deps.logger.warn(
          { attempt_id: claimed.attempt.id, kind: work.kind, error: outcome.message },
          'processor refused',
        );
      const recorded = await recordOutcome(deps, claimed.attempt, outcome);
      left = recorded.state;
      if (!recorded.recorded || !left) whole = false;
    }
    if (whole) next = left;
  }
}

/** Settles now when the session owes something due now; errors are logged, the worker tries again. */
export async function settleIfDue(
  deps: Deps,
  session: Pick<Session, 'id' | 'settleAfter'>,
  known?: MoneyState,
): Promise<void> {
  if (session.settleAfter === null || session.settleAfter > deps.clock.now()) return;
  try {
    await settleSession(deps, session.id, known);
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
