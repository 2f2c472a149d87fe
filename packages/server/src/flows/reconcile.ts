// Reconcile (docs/decisions.md#ledger-and-reconciliation, docs/operations.md#when-reconcile-reports-a-mismatch):
// reads every session with its members, attempts and ledger lines, and the processor's own records, and
// names each place where they disagree. It only reads: an operator decides what to do about a mismatch.
import type { Config } from '../config.ts';
import type { Deps } from '../deps.ts';
import { merchantFees } from '../domain/fees.ts';
import { balances } from '../domain/ledger.ts';
import { paymentOf } from '../domain/settling.ts';
import { type Attempt, listSessionAttempts } from '../store/attempts.ts';
import { listSessionLedgerLines, listUnbalancedEntries, sumLedgerByCurrency } from '../store/ledger.ts';
import { listMembers, type Member } from '../store/members.ts';
import { findMerchantById, type Merchant } from '../store/merchants.ts';
import { findSessionByIdUnscoped, listSessionIdsAfter, type Session } from '../store/sessions.ts';

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

/** @internal Exported for the tests, which read the mismatches. */
export interface Mismatch {
  kind: MismatchKind;
  session_id?: string;
  detail: string;
}

export interface ReconcileReport {
  ok: boolean;
  checked: {
    sessions: number;
    members: number;
    attempts: number;
    ledger_lines: number;
    processor_objects: number;
  };
  mismatches: Mismatch[];
}

export type ReconcileDeps = Pick<Deps, 'db' | 'processor' | 'clock'> & {
  config?: Pick<Config, 'paymentRecoveryAfterMs'>;
};

type ProcessorRecord = NonNullable<Awaited<ReturnType<Deps['processor']['lookup']>>>;

/** Used when deps carry no config: twice PAYMENT_RECOVERY_AFTER_MS's default, so a call in flight is not named. */
const DEFAULT_RECOVERY_AFTER_MS = 10 * 60_000;
const PAGE = 200;

/** An amount as an operator reads it next to the rows: integer minor units and the currency. */
const money = (cents: number, currency: string) => `${cents} ${currency.toUpperCase()} minor units`;

/**
 * Checks the whole database against itself and against the processor. Safe to run while the service
 * runs; a call in flight at that moment may show as a passing mismatch, which a second run clears.
 */
export async function reconcile(deps: ReconcileDeps): Promise<ReconcileReport> {
  const db = deps.db.kysely;
  const mismatches: Mismatch[] = [];
  const checked = { sessions: 0, members: 0, attempts: 0, ledger_lines: 0, processor_objects: 0 };
  const now = deps.clock.now();
  const recoveryAfterMs = deps.config?.paymentRecoveryAfterMs ?? DEFAULT_RECOVERY_AFTER_MS;

  for (const c of await sumLedgerByCurrency(db)) {
    checked.ledger_lines += c.lines;
    if (c.sum !== 0)
      mismatches.push({
        kind: 'ledger_unbalanced',
        detail: `The ledger's ${c.lines} lines in ${c.currency.toUpperCase()} add up to ${money(c.sum, c.currency)}, not 0.`,
      });
  }
  for (const e of await listUnbalancedEntries(db)) {
    mismatches.push({
      kind: 'entry_unbalanced',
      session_id: e.sessionId,
      detail: `Ledger entry ${e.entryId} of session ${e.sessionId} adds up to ${e.sum} minor units, not 0.`,
    });
  }

  const merchants = new Map<string, Merchant | undefined>();
  const known = new Set<string>();
  const looked = new Set<string>();
  let inFlight = 0;
  let after = '';
  for (;;) {
    const page = await listSessionIdsAfter(db, after, PAGE);
    if (page.length === 0) break;
    after = page[page.length - 1] as string;
    for (const id of page) {
      const session = await findSessionByIdUnscoped(db, id);
      if (!session) continue;
      const members = await listMembers(db, id);
      const attempts = await listSessionAttempts(db, id);
      const lines = await listSessionLedgerLines(db, id);
      if (!merchants.has(session.merchantId))
        merchants.set(session.merchantId, await findMerchantById(db, deps.db.secrets, session.merchantId));
      checked.sessions++;
      checked.members += members.length;
      checked.attempts += attempts.length;
      for (const a of attempts) {
        if (a.processorId !== null) known.add(a.processorId);
        if (a.state === 'started') {
          if (now - a.createdAt > recoveryAfterMs)
            mismatches.push({
              kind: 'attempt_unsettled',
              session_id: id,
              detail: `The ${a.kind} attempt ${a.id} of ${money(a.amountCents, a.currency)}${a.memberId ? ` for member ${a.memberId}` : ''} has been started since ${new Date(a.createdAt).toISOString()}, longer than the recovery delay of ${recoveryAfterMs} ms: the settling worker should have asked the processor what became of it.`,
            });
          else inFlight++;
        }
      }
      const check = { session, members, attempts, merchant: merchants.get(session.merchantId) };
      mismatches.push(...checkLedger(check, lines), ...checkStatuses(check));
      mismatches.push(...(await checkProcessor(deps, check, looked)));
    }
  }

  if (deps.processor.listRecords) {
    let records: ProcessorRecord[] = [];
    try {
      records = await deps.processor.listRecords();
    } catch (error) {
      mismatches.push({
        kind: 'processor_mismatch',
        detail: `Could not list the processor's objects: ${error instanceof Error ? error.message : String(error)}.`,
      });
    }
    for (const r of records) {
      looked.add(r.processorId);
      if (known.has(r.processorId)) continue;
      const taken = r.kind === 'charge' || r.kind === 'authorize';
      mismatches.push({
        kind: 'processor_unknown_object',
        detail:
          `The processor holds ${r.kind} ${r.processorId} of ${money(r.amountCents, r.currency)} (${r.state}) that no attempt of ours names` +
          (taken && r.state !== 'refunded' && r.state !== 'released'
            ? ': money taken without a record.'
            : '.') +
          (inFlight > 0
            ? ` ${inFlight} processor calls were in flight: run reconcile again if it persists.`
            : ''),
      });
    }
  }
  checked.processor_objects = looked.size;
  return { ok: mismatches.length === 0, checked, mismatches };
}

interface SessionCheck {
  session: Session;
  members: Member[];
  attempts: Attempt[];
  merchant: Merchant | undefined;
}

/** The merchant and FX fees of a funded session, as the funding computed them. */
function feesOf(c: SessionCheck) {
  return merchantFees({
    total: c.session.totalCents,
    merchantFeePpm: c.session.merchantFeePpm,
    fxFeePpm: c.merchant?.fxFeePpm,
    payoutMode: c.merchant?.payoutMode ?? 'checkout',
    payoutCurrency: c.merchant?.payoutCurrency ?? null,
    checkoutCurrency: c.session.currency,
  });
}

const succeededTransfers = (attempts: readonly Attempt[]) =>
  attempts.filter((a) => a.kind === 'transfer' && a.state === 'succeeded');

/** The session's ledger lines against its members' statuses and payments. */
function checkLedger(c: SessionCheck, lines: Awaited<ReturnType<typeof listSessionLedgerLines>>): Mismatch[] {
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
    if (paid) shares += a - f;
    if (authorized) held += a;
    const want = {
      payer_cards: paid ? -a : 0,
      consumer_fees: paid ? f : 0,
      holds: authorized ? a : 0,
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
  const fees = funded ? feesOf(c) : { merchantFee: 0, fxFee: 0, transfer: 0 };
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
function checkStatuses(c: SessionCheck): Mismatch[] {
  const { session, members, attempts } = c;
  const out: Mismatch[] = [];
  const sid = session.id;
  const cur = session.currency;
  const bad = (detail: string) => out.push({ kind: 'status_mismatch', session_id: sid, detail });
  const succeeded = (kind: Attempt['kind'], memberId: string, targetId: string | null) =>
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
    if (session.status === 'cancelled' || session.status === 'expired') {
      const holding = members.filter((m) => m.status === 'paid' || m.status === 'authorized');
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
    const due = feesOf(c).transfer;
    for (const t of transfers)
      if (t.amountCents !== due)
        bad(
          `Transfer ${t.id} of session ${sid} is ${money(t.amountCents, cur)}; the total less fees is ${due}.`,
        );
  }
  return out;
}

/** What the processor's record of attempt `a` should say, given its member; a list of acceptable states. */
function expectedStates(a: Attempt, c: SessionCheck): ProcessorRecord['state'][] {
  const member = c.members.find((m) => m.id === a.memberId);
  const live = member ? paymentOf(c.attempts, member.id) : undefined;
  switch (a.kind) {
    case 'charge':
      if (live?.id !== a.id) return ['refunded'];
      return member?.status === 'refunded' ? ['refunded'] : member?.status === 'paid' ? ['succeeded'] : [];
    case 'authorize': {
      // A superseded hold was released, or declined at capture (which lets it go).
      if (live?.id !== a.id) return ['released'];
      const byStatus: Partial<Record<Member['status'], ProcessorRecord['state']>> = {
        authorized: 'authorized',
        paid: 'captured',
        released: 'released',
        refunded: 'refunded',
        pending: 'released',
      };
      const s = member && byStatus[member.status];
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

/** Every succeeded attempt of the session against the processor's own record of it. */
async function checkProcessor(
  deps: ReconcileDeps,
  c: SessionCheck,
  looked: Set<string>,
): Promise<Mismatch[]> {
  const out: Mismatch[] = [];
  const sid = c.session.id;
  for (const a of c.attempts) {
    if (a.state !== 'succeeded' || a.processorId === null) continue;
    looked.add(a.processorId);
    const what = `${a.kind} ${a.processorId} (attempt ${a.id}${a.memberId ? `, member ${a.memberId}` : ''})`;
    let record: ProcessorRecord | undefined;
    try {
      record = await deps.processor.lookup(a.kind, a.processorId);
    } catch (error) {
      out.push({
        kind: 'processor_mismatch',
        session_id: sid,
        detail: `Could not look up ${what} at the processor: ${error instanceof Error ? error.message : String(error)}.`,
      });
      continue;
    }
    if (!record) {
      out.push({
        kind: 'processor_mismatch',
        session_id: sid,
        detail: `Our ${what} succeeded for ${money(a.amountCents, a.currency)}, but the processor has no such object.`,
      });
      continue;
    }
    if (record.amountCents !== a.amountCents || record.currency.toLowerCase() !== a.currency.toLowerCase())
      out.push({
        kind: 'processor_mismatch',
        session_id: sid,
        detail: `Our ${what} is ${money(a.amountCents, a.currency)}; the processor's is ${money(record.amountCents, record.currency)}.`,
      });
    const states = expectedStates(a, c);
    if (!states.includes(record.state)) {
      const member = c.members.find((m) => m.id === a.memberId);
      out.push({
        kind: 'processor_mismatch',
        session_id: sid,
        detail: `The processor says ${what} is ${record.state}${member ? `, but member ${member.id} is ${member.status}` : ''}${states.length ? ` (expected ${states.join(' or ')})` : ''}.`,
      });
    }
  }
  return out;
}
