// Paying a share (docs/api.md#payments), in the three steps of docs/decisions.md#claim-call-record:
// claim (an attempt row with its idempotency key, committed under the session's lock), call the processor
// with no transaction open, record the outcome with everything it causes. A crash between the call and
// the record leaves the attempt started; the settling worker asks the processor and records it.
import type { Deps } from '../deps.ts';
import { checkCard } from '../domain/card.ts';
import { formatMinorUnits } from '../domain/currencies.ts';
import { consumerFee } from '../domain/fees.ts';
import type { GroupProgress } from '../domain/members.ts';
import { ServiceError } from '../errors.ts';
import { ids } from '../ids.ts';
import type { DeclineCode, PaymentSource } from '../processor/types.ts';
import {
  type Attempt,
  countMemberAttempts,
  findAttempt,
  insertAttempt,
  startedAttempt,
} from '../store/attempts.ts';
import { findMemberById, type Member, startPaying } from '../store/members.ts';
import {
  findSessionByIdUnscoped,
  lockOpenSession,
  type Session,
  scheduleSettling,
} from '../store/sessions.ts';
import { call, operationOf } from './calls.ts';
import { type AnswerSpec, recordAnswerIfStillOurs } from './idempotency.ts';
import { type Recorded, recordOutcome } from './record.ts';
import { notOpen } from './sessions.ts';
import { settleFromProcessor, settleIfDue } from './settle.ts';

const NOT_CONFIRMED =
  'The payment processor did not confirm the payment in time. Do not pay again: the share will show as paid, or as pending if nothing was charged, within a few minutes.';
const FAILED = 'The payment could not be processed and nothing was charged. Try again in a moment.';

export interface PaidShare {
  session: Session;
  member: Member;
  attempt: Attempt;
  /** How far the group is once this payment is recorded. */
  progress: GroupProgress;
}

const NOTHING_TO_PAY = 'This share is 0: there is nothing to pay.';

/** Why a member's share cannot be paid now, by its status. */
function notPayable(member: Member): ServiceError {
  if (member.status === 'authenticating')
    return new ServiceError('payment_in_progress', {
      message:
        "Your bank is asking you to confirm this share's payment: complete that step (or wait a few minutes for it to lapse) before paying again.",
    });
  // A share of nothing is never charged: once its group is funded it counts as paid, but nobody paid it.
  if (member.amountCents === 0) return new ServiceError('share_not_pending', { message: NOTHING_TO_PAY });
  const by: Record<string, string> = {
    authorized: 'This share is already paid: a hold is on the card until the group is complete.',
    paid: 'This share is already paid.',
    refunded: 'This share was paid and has been refunded.',
    released: 'This share was authorized and the hold has been released.',
  };
  return new ServiceError('share_not_pending', {
    message: by[member.status] ?? 'This share is not pending.',
  });
}

/**
 * Checks what pays the share before anything is claimed: a card in the sandbox (the Luhn check, a
 * future expiry), a PaymentMethod id with Stripe. Nothing is written for a request refused here.
 */
function checkSource(deps: Deps, source: PaymentSource): void {
  const sandbox = deps.processor.name === 'sandbox';
  if ('card' in source) {
    if (!sandbox)
      throw new ServiceError('invalid_request', {
        message: 'Send payment_method (a Stripe PaymentMethod id made by Stripe.js), not card numbers.',
      });
    const errors = checkCard(source.card, new Date(deps.clock.now()));
    if (errors.length > 0) throw new ServiceError('invalid_request', { message: errors[0], details: errors });
  } else if (sandbox) {
    throw new ServiceError('invalid_request', {
      message: 'The sandbox takes a test card: send card {number, exp_month, exp_year, cvc}.',
    });
  }
}

/**
 * Pays the share of `found` (the member its share id named, as the caller read it) with `source`: exactly
 * one payment succeeds per share, however many requests race, and a session that is not open takes none. Answers the share paid (or authorized, under
 * on_funded); a declined card is card_declined, a processor that failed is upstream_error, and both leave
 * the share pending.
 */
export async function payShare(
  deps: Deps,
  found: Pick<Member, 'id' | 'sessionId' | 'shareId'>,
  source: PaymentSource,
  answer?: AnswerSpec<PaidShare>,
  /** What the payer was shown they would be charged; another amount now is amount_changed. */
  expectedAmountDueCents?: number,
): Promise<PaidShare> {
  checkSource(deps, source);

  // 1. Claim: under the session's lock, the share must be pending with no payment in flight.
  const now = deps.clock.now();
  const attempt = await deps.db.kysely.transaction().execute(async (trx) => {
    const session = await lockOpenSession(trx, found.sessionId, now);
    if (!session) {
      // A share already paid says so first, whatever became of its session since (funded by it, say).
      const member = await findMemberById(trx, found.id);
      if (member && member.status !== 'pending') throw notPayable(member);
      throw notOpen(await findSessionByIdUnscoped(trx, found.sessionId), now);
    }
    const member = await findMemberById(trx, found.id);
    if (!member) throw new ServiceError('share_not_found');
    if (member.status !== 'pending') throw notPayable(member);
    if (member.payingAttemptId !== null) throw new ServiceError('payment_in_progress');
    if (member.amountCents === 0) throw new ServiceError('share_not_pending', { message: NOTHING_TO_PAY });
    const kind = session.groupConfig.capture === 'on_funded' ? 'authorize' : 'charge';
    const fee = consumerFee(member.amountCents, session.consumerFeePpm, session.chargeStep);
    // The organizer may re-split while a payer types their card: charge only what the payer was shown.
    if (expectedAmountDueCents !== undefined && expectedAmountDueCents !== member.amountCents + fee) {
      throw new ServiceError('amount_changed', {
        message: `Your share changed to ${formatMinorUnits(member.amountCents + fee, session.currency)} ${session.currency.toUpperCase()} (with the fee) since the page showed it; nothing was charged. Check the new amount and pay again.`,
      });
    }
    const earlier = await countMemberAttempts(trx, session.id, member.id);
    const claimed = startedAttempt(
      {
        id: ids.attempt(),
        // The member and their try number: a second claim of the same try collides on the unique key.
        key: `gc_${kind}_${member.id}_${earlier + 1}`,
        kind,
        merchantId: session.merchantId,
        sessionId: session.id,
        memberId: member.id,
        targetId: null,
        amountCents: member.amountCents + fee,
        feeCents: fee,
        currency: session.currency,
        paymentMethod: 'paymentMethod' in source ? source.paymentMethod : null,
        destination: null,
      },
      now,
    );
    await insertAttempt(trx, claimed);
    if (!(await startPaying(trx, session.id, member.id, claimed.id, now)))
      throw new ServiceError('payment_in_progress');
    // Should this process die during the call, the worker recovers the attempt after the delay.
    const recoverAt = now + deps.config.paymentRecoveryAfterMs;
    if (session.settleAfter === null || session.settleAfter > recoverAt)
      await scheduleSettling(trx, session.id, recoverAt);
    return claimed;
  });

  // 2. Call, with no transaction open. The card exists only in this request's memory. A bank that takes
  // the payer away to authenticate sends them back to their share's page.
  const operation = {
    returnUrl: `${deps.config.publicPayUrl}/s/${found.shareId}`,
    ...operationOf(attempt),
    source,
  } as ReturnType<typeof operationOf>;
  const outcome = await call(deps, operation);
  deps.faults.reach('payment-called');

  // 3. Record.
  const toPaid = (r: Recorded): PaidShare => ({
    session: r.session,
    member: r.member as Member,
    attempt: r.attempt,
    progress: r.progress,
  });
  // Only a payment that went through is the answer to keep; refusals are stored as errors by the API.
  const recorded = await recordOutcome(deps, attempt, outcome, {
    spec: answer,
    of: (r) => (r.attempt.state === 'succeeded' ? toPaid(r) : undefined),
  });
  await settleIfDue(deps, recorded.session, recorded.state);
  // The payer's bank asks them to authenticate: the answer is the share, authenticating, with what their
  // page needs (next_action). Not kept as the Idempotency-Key's answer: it is a "not yet".
  if (recorded.attempt.state === 'started' && recorded.attempt.clientSecret !== null) {
    if (answer) answer.claim.notYet = true;
    return toPaid(recorded);
  }
  if (!recorded.recorded && outcome.status !== 'unknown') {
    // Another process (the recovery, the processor's webhook) settled this attempt first. Its record
    // stands; an outcome that disagrees with it is money the processor moved without our record, which
    // reconcile reports, and an operator settles (docs/operations.md#money).
    const kept = recorded.attempt.state;
    const agrees =
      outcome.status === 'action_required' ||
      kept === (outcome.status === 'succeeded' ? 'succeeded' : outcome.status);
    if (!agrees) {
      deps.logger.error(
        { attempt_id: attempt.id, recorded: kept, processor: outcome.status },
        'a payment outcome arrived after the recovery recorded another one; run group-checkout reconcile',
      );
      throw new ServiceError('upstream_error', { message: NOT_CONFIRMED });
    }
    if (kept === 'succeeded') {
      const paid = toPaid(recorded);
      await deps.db.kysely.transaction().execute((trx) => recordAnswerIfStillOurs(trx, answer, paid));
      return paid;
    }
    if (kept === 'declined' || kept === 'failed') throw refusalOf(recorded.attempt);
  }
  if (outcome.status === 'unknown') {
    throw new ServiceError('upstream_error', { message: NOT_CONFIRMED });
  }
  if (outcome.status === 'declined')
    throw new ServiceError('card_declined', { message: outcome.message, declineCode: outcome.declineCode });
  if (outcome.status === 'action_required') throw refusalOf(recorded.attempt);
  if (outcome.status === 'failed') {
    if (outcome.reason === 'invalid_payment_method') {
      throw new ServiceError('invalid_request', {
        message:
          'The payment method cannot be used (it is unknown, or was used already): make a new one on the page and pay again.',
      });
    }
    // The processor's own words stay in the log: they are for us, not for the payer.
    deps.logger.warn({ attempt_id: attempt.id, error: outcome.message }, 'payment failed at the processor');
    throw new ServiceError('upstream_error', { message: FAILED });
  }
  // The answer is the share as the payment left it (the one a retry with the Idempotency-Key replays);
  // the captures and the transfer that may follow show on the session. A session closed while the card was
  // being charged answers the same: the payment went through (a 409 would say nothing was charged), and
  // its session_status says why it is being returned in full, refunded or its hold let go
  // (docs/decisions.md, "A payment in flight when its session closes").
  return toPaid(recorded);
}

/** Why a settled attempt that took no money failed, as the payer is told. */
function refusalOf(attempt: Attempt): ServiceError {
  if (attempt.state === 'declined')
    return new ServiceError('card_declined', {
      message: attempt.error ?? 'Your card was declined.',
      declineCode: (attempt.declineCode ?? 'generic_decline') as DeclineCode,
    });
  return new ServiceError('upstream_error', { message: FAILED });
}

/**
 * POST /shares/{shareId}/refresh: the payer's page is back from their bank's authentication (3-D Secure).
 * Asks the processor what became of the share's open payment and records it through the one record path;
 * the caller then reads the share as it stands — paid (or authorized), still authenticating, or pending
 * again with why. A share with no payment waiting on an authentication is left as it is.
 */
export async function refreshShare(deps: Deps, found: Pick<Member, 'id'>): Promise<void> {
  const member = await findMemberById(deps.db.kysely, found.id);
  if (!member) throw new ServiceError('share_not_found');
  if (member.payingAttemptId === null) return;
  const open = await findAttempt(deps.db.kysely, member.payingAttemptId);
  if (open?.state !== 'started' || open.clientSecret === null) return;
  const recorded = await settleFromProcessor(deps, open);
  if (recorded) await settleIfDue(deps, recorded.session, recorded.state);
}
