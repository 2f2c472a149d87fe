// Reconciliation's rules (docs/decisions.md#ledger-and-reconciliation): a session's ledger lines, statuses
// and attempts checked against each other, and what the processor's record of each attempt should say.
// Pure: flows/reconcile.ts reads the rows and the processor, and reports what these answer.
import { type FeeMerchant, sessionFees } from './fees.ts';
import { balances, type LedgerLine } from './ledger.ts';
import { isClosed, type MemberStatus, type SessionStatus } from './session-state.ts';
import { type AttemptFacts, paymentOf, refundBlocked } from './settling.ts';

type MismatchKind =
  | 'ledger_unbalanced'
  | 'entry_unbalanced'
  | 'ledger_session_funds'
  | 'ledger_holds'
  | 'ledger_member'
  | 'status_mismatch'
  | 'processor_mismatch'
  | 'processor_unknown_object'
  | 'attempt_unsettled';

export interface Mismatch {
  kind: MismatchKind;
  session_id?: string;
  detail: string;
}

/** What the processor says of one of its objects (see processor/types.ts ProcessorRecord). */
export type ProcessorState = 'succeeded' | 'authorized' | 'captured' | 'released' | 'refunded';

export interface CheckedAttempt extends AttemptFacts {
  currency: string;
}

type CheckedLedgerLine = Pick<LedgerLine, 'kind' | 'account' | 'amountCents' | 'memberId'>;

/** One session as reconcile reads it: the row, its members, attempts, and its merchant's payout settings. */
export interface SessionCheck {
  session: {
    id: string;
    status: SessionStatus;
    totalCents: number;
    currency: string;
    merchantFeePpm: number;
    chargeStep: number;
    settledAt: number | null;
  };
  members: readonly { id: string; status: MemberStatus; amountCents: number }[];
  attempts: readonly CheckedAttempt[];
  disputes: readonly DisputeFacts[];
  merchant: FeeMerchant | undefined;
}

/** A dispute on a member's payment, as reconcile reads it. */
interface DisputeFacts {
  id: string;
  memberId: string;
  attemptId: string;
  amountCents: number;
  status: 'needs_response' | 'won' | 'lost';
}

/** An amount as an operator reads it next to the rows: integer minor units and the currency. */
export const money = (cents: number, currency: string) => `${cents} ${currency.toUpperCase()} minor units`;

const succeededTransfers = (attempts: readonly CheckedAttempt[]) =>
  attempts.filter((a) => a.kind === 'transfer' && a.state === 'succeeded');

/** What the succeeded refunds of a member's payment (by its processor id) returned, and their fee part. */
function refundedOf(attempts: readonly CheckedAttempt[], memberId: string | null, paymentId: string | null) {
  const back = { amount: 0, fee: 0 };
  for (const r of attempts)
    if (
      r.kind === 'refund' &&
      r.state === 'succeeded' &&
      r.memberId === memberId &&
      r.targetId === paymentId
    ) {
      back.amount += r.amountCents;
      back.fee += r.feeCents;
    }
  return back;
}

/** The session's ledger lines against its members' statuses and payments. */
export function checkLedger(c: SessionCheck, lines: readonly CheckedLedgerLine[]): Mismatch[] {
  const { session, members, attempts } = c;
  const out: Mismatch[] = [];
  const sid = session.id;
  const cur = session.currency;
  const b = balances(lines);
  const sumOf = (kind: string, account: string) =>
    lines.filter((l) => l.kind === kind && l.account === account).reduce((s, l) => s + l.amountCents, 0);

  let shares = 0;
  let held = 0;
  for (const m of members) {
    const p = paymentOf(attempts, m.id);
    const a = p?.amountCents ?? 0;
    const f = p?.feeCents ?? 0;
    const paid = m.status === 'paid' && p !== undefined;
    const authorized = m.status === 'authorized' && p !== undefined;
    const refunded = m.status === 'refunded' && p !== undefined;
    // What the refunds of the payment returned: all of it, or what a lost dispute of part of it left.
    const back = refunded ? refundedOf(attempts, m.id, p.processorId) : { amount: 0, fee: 0 };
    if (paid) shares += a - f;
    // A share refunded less a lost dispute's part keeps that part in the session's funds, lost with it.
    if (refunded) shares += a - f - (back.amount - back.fee);
    if (authorized) held += a;
    // A dispute gives the payer the amount back while it is open, and for good when it is lost; the
    // network holds it back from us meanwhile (disputes), and keeps it when we lose (dispute_losses).
    const disputed = (status: DisputeFacts['status']) =>
      c.disputes
        .filter((d) => d.memberId === m.id && d.status === status)
        .reduce((s, d) => s + d.amountCents, 0);
    const open = disputed('needs_response');
    const lost = disputed('lost');
    const want = {
      payer_cards: (paid || refunded ? -a + back.amount : 0) + open + lost,
      consumer_fees: paid ? f : refunded ? f - back.fee : 0,
      holds: authorized ? a : 0,
      disputes: -open,
      dispute_losses: -lost,
    } as const;
    const wrong = (Object.keys(want) as (keyof typeof want)[]).filter(
      (account) => b.member(m.id, account) !== want[account],
    );
    if (wrong.length > 0)
      out.push({
        kind: 'ledger_member',
        session_id: sid,
        detail: `Member ${m.id} is ${m.status}${p ? ` with payment ${p.id} of ${money(a, cur)} (fee ${f})` : ' with no payment'}, but the ledger has ${wrong
          .map((account) => `${account} ${b.member(m.id, account)} (expected ${want[account]})`)
          .join(', ')}.`,
      });
  }

  const funded = session.status === 'funded';
  const fees = funded ? sessionFees(c.session, c.merchant) : { merchantFee: 0, fxFee: 0, transfer: 0 };
  const merchantFeeLines = sumOf('merchant_fee', 'merchant_fees');
  const fxFeeLines = sumOf('fx_fee', 'fx_fees');
  if (merchantFeeLines !== fees.merchantFee || fxFeeLines !== fees.fxFee)
    out.push({
      kind: 'ledger_session_funds',
      session_id: sid,
      detail: `Session ${sid} (${session.status}) has merchant fee lines of ${merchantFeeLines} and FX fee lines of ${fxFeeLines}; expected ${fees.merchantFee} and ${fees.fxFee} ${funded ? `on a total of ${money(session.totalCents, cur)}` : 'as it is not funded'}.`,
    });
  const transferred = succeededTransfers(attempts).reduce((s, a) => s + a.amountCents, 0);
  const expectedFunds = shares - fees.merchantFee - fees.fxFee - transferred;
  if (b.account('session_funds') !== expectedFunds)
    out.push({
      kind: 'ledger_session_funds',
      session_id: sid,
      detail: `Session ${sid} (${session.status}) has session_funds of ${money(b.account('session_funds'), cur)}; expected ${expectedFunds}: paid shares ${shares} − merchant fee ${fees.merchantFee} − FX fee ${fees.fxFee} − transferred ${transferred}.`,
    });
  if (b.account('merchant_payouts') !== transferred)
    out.push({
      kind: 'ledger_session_funds',
      session_id: sid,
      detail: `Session ${sid} has merchant_payouts of ${money(b.account('merchant_payouts'), cur)}, but its succeeded transfers come to ${transferred}.`,
    });
  if (b.account('holds') !== held || b.account('payer_holds') !== -held)
    out.push({
      kind: 'ledger_holds',
      session_id: sid,
      detail: `Session ${sid} has holds of ${b.account('holds')} and payer_holds of ${b.account('payer_holds')} (${cur.toUpperCase()} minor units); its authorized members hold ${held}, so expected ${held} and ${-held}.`,
    });
  return out;
}

/** The session's status, its members' statuses and its attempts, against each other. */
export function checkStatuses(c: SessionCheck): Mismatch[] {
  const { session, members, attempts } = c;
  const out: Mismatch[] = [];
  const sid = session.id;
  const cur = session.currency;
  const bad = (detail: string) => out.push({ kind: 'status_mismatch', session_id: sid, detail });
  const succeeded = (kind: CheckedAttempt['kind'], memberId: string, targetId: string | null) =>
    attempts.some(
      (a) => a.kind === kind && a.state === 'succeeded' && a.memberId === memberId && a.targetId === targetId,
    );

  if (members.length > 0) {
    const sum = members.reduce((s, m) => s + m.amountCents, 0);
    if (sum !== session.totalCents)
      bad(
        `The members' shares of session ${sid} add up to ${money(sum, cur)}, not its total ${session.totalCents}.`,
      );
  }
  const paidAmount = members
    .filter((m) => m.status === 'paid' || m.status === 'authorized')
    .reduce((s, m) => s + m.amountCents, 0);
  if (paidAmount > session.totalCents)
    bad(
      `Session ${sid} has ${money(paidAmount, cur)} paid or authorized, more than its total ${session.totalCents}.`,
    );
  if (session.status === 'funded' && paidAmount !== session.totalCents)
    bad(
      `Session ${sid} is funded but has ${money(paidAmount, cur)} paid or authorized of its total ${session.totalCents}.`,
    );

  for (const m of members) {
    const p = paymentOf(attempts, m.id);
    const who = `Member ${m.id} of session ${sid}`;
    // A share once paid (or held) never changes: it is what its payment took, less the fee.
    if (
      (m.status === 'paid' || m.status === 'authorized') &&
      p &&
      p.amountCents - p.feeCents !== m.amountCents
    )
      bad(
        `${who} is ${m.status} with a share of ${money(m.amountCents, cur)}, but its ${p.kind} ${p.id} took ${p.amountCents} (share ${p.amountCents - p.feeCents}, fee ${p.feeCents}).`,
      );
    if (session.status === 'funded' && m.amountCents > 0 && m.status !== 'paid')
      bad(`${who} owes ${money(m.amountCents, cur)} and is ${m.status}, but the session is funded.`);
    switch (m.status) {
      case 'paid':
        if (!p) {
          if (m.amountCents > 0) bad(`${who} is paid but has no succeeded charge or authorize.`);
        } else if (p.kind === 'authorize' && !succeeded('capture', m.id, p.processorId))
          bad(`${who} is paid with hold ${p.id}, but no capture of it succeeded.`);
        break;
      case 'refunded':
        if (!p || !succeeded('refund', m.id, p.processorId))
          bad(`${who} is refunded, but no refund of ${p ? `payment ${p.id}` : 'a payment'} succeeded.`);
        break;
      case 'released':
        if (p?.kind !== 'authorize' || !succeeded('release', m.id, p.processorId))
          bad(`${who} is released, but no release of ${p ? `payment ${p.id}` : 'a hold'} succeeded.`);
        break;
      case 'authorized':
        if (p?.kind !== 'authorize') bad(`${who} is authorized, but has no succeeded authorize.`);
        else if (succeeded('capture', m.id, p.processorId) || succeeded('release', m.id, p.processorId))
          bad(`${who} is authorized, but hold ${p.id} was already captured or released.`);
        break;
      case 'pending':
        // A live payment leaves a member pending only when its hold's capture was declined.
        if (
          p &&
          !(
            p.kind === 'authorize' &&
            attempts.some(
              (a) =>
                a.kind === 'capture' &&
                a.state === 'declined' &&
                a.memberId === m.id &&
                a.targetId === p.processorId,
            )
          )
        )
          bad(
            `${who} is pending, but its ${p.kind} ${p.id} of ${money(p.amountCents, cur)} succeeded and was not ${p.kind === 'charge' ? 'refunded' : 'declined at capture'}.`,
          );
        break;
    }
  }

  const transfers = succeededTransfers(attempts);
  if (session.settledAt !== null) {
    if (isClosed(session.status)) {
      // A member whose taken refund failed is paid again, waiting for an operator, not for the settling.
      const holding = members.filter(
        (m) => m.status === 'authorized' || (m.status === 'paid' && !refundBlocked(attempts, m.id)),
      );
      if (holding.length > 0)
        bad(
          `Session ${sid} is ${session.status} and settled, but ${holding.map((m) => `${m.id} is ${m.status}`).join(', ')}.`,
        );
    } else if (session.status === 'funded' && transfers.length !== 1)
      bad(`Session ${sid} is funded and settled, but has ${transfers.length} succeeded transfers, not 1.`);
  }
  if (session.status !== 'funded' && transfers.length > 0)
    bad(`Session ${sid} is ${session.status}, but has ${transfers.length} succeeded transfers.`);
  if (session.status === 'funded' && transfers.length > 0) {
    const due = sessionFees(c.session, c.merchant).transfer;
    for (const t of transfers)
      if (t.amountCents !== due)
        bad(
          `Transfer ${t.id} of session ${sid} is ${money(t.amountCents, cur)}; the total less fees is ${due}.`,
        );
  }
  for (const d of c.disputes) {
    const payment = attempts.find((a) => a.id === d.attemptId);
    const isPayment = payment?.kind === 'charge' || payment?.kind === 'authorize';
    if (!payment || !isPayment || payment.state !== 'succeeded' || payment.memberId !== d.memberId)
      bad(
        `Dispute ${d.id} of session ${sid} names payment ${d.attemptId} of member ${d.memberId}, which is not a payment of theirs that succeeded.`,
      );
    // The bank returned a lost dispute's amount to the payer: refunds of that payment beyond what its lost
    // disputes left returned money twice. (A dispute lost for more than the payment, with nothing
    // refunded, returned nothing of ours.)
    else if (d.status === 'lost') {
      const refundedCents = refundedOf(attempts, d.memberId, payment.processorId).amount;
      const lostCents = c.disputes
        .filter((other) => other.attemptId === d.attemptId && other.status === 'lost')
        .reduce((sum, other) => sum + other.amountCents, 0);
      const twice = Math.min(refundedCents, refundedCents + lostCents - payment.amountCents);
      // Said once per payment: by its first lost dispute.
      const first = c.disputes.find((other) => other.attemptId === d.attemptId && other.status === 'lost');
      if (twice > 0 && first === d)
        bad(
          `Payment ${payment.id} of member ${d.memberId} (session ${sid}) was refunded ${money(refundedCents, cur)}, and its disputes lost returned ${lostCents} as well (dispute ${d.id} was lost): the payer got ${money(twice, cur)} back twice.`,
        );
    }
  }
  return out;
}

const lostDispute = (a: CheckedAttempt, c: SessionCheck): boolean =>
  c.disputes.some((d) => d.attemptId === a.id && d.status === 'lost');

/** What the processor's record of attempt `a` should say, given its member; a list of acceptable states. */
export function expectedStates(a: CheckedAttempt, c: SessionCheck): ProcessorState[] {
  const member = c.members.find((m) => m.id === a.memberId);
  const live = member ? paymentOf(c.attempts, member.id) : undefined;
  switch (a.kind) {
    case 'charge':
      if (live?.id !== a.id) return ['refunded'];
      if (member?.status === 'refunded')
        // Refunded less a lost dispute's part: the processor may count the charge as still standing.
        return lostDispute(a, c) ? ['refunded', 'succeeded'] : ['refunded'];
      return member?.status === 'paid' ? ['succeeded'] : [];
    case 'authorize': {
      // A superseded hold was released, or declined at capture (which lets it go).
      if (live?.id !== a.id) return ['released'];
      const byStatus: Partial<Record<MemberStatus, ProcessorState>> = {
        authorized: 'authorized',
        paid: 'captured',
        released: 'released',
        refunded: 'refunded',
        pending: 'released',
      };
      const s = member && byStatus[member.status];
      if (s === 'refunded' && lostDispute(a, c)) return ['refunded', 'captured'];
      return s ? [s] : [];
    }
    // The processor may answer the capture or release itself, or the hold it acted on.
    case 'capture':
      return member?.status === 'refunded' ? ['succeeded', 'refunded'] : ['succeeded', 'captured'];
    case 'release':
      return ['succeeded', 'released'];
    case 'refund':
    case 'transfer':
      return ['succeeded'];
  }
}
