// Reconcile (docs/decisions.md#ledger-and-reconciliation, docs/operations.md#when-reconcile-reports-a-mismatch):
// reads every session with its members, attempts and ledger lines, and the processor's own records, and
// names each place where they disagree. It only reads: an operator decides what to do about a mismatch.
import type { Config } from '../config.ts';
import type { Deps } from '../deps.ts';
import {
  checkLedger,
  checkStatuses,
  expectedStates,
  type Mismatch,
  money,
  type SessionCheck,
} from '../domain/reconciliation.ts';
import { awaitsAuthentication } from '../domain/settling.ts';
import { listSessionAttempts } from '../store/attempts.ts';
import { listSessionDisputes } from '../store/disputes.ts';
import { listSessionLedgerLines, listUnbalancedEntries, sumLedgerByCurrency } from '../store/ledger.ts';
import { listMembers } from '../store/members.ts';
import { findMerchantById, type Merchant } from '../store/merchants.ts';
import { findSessionByIdUnscoped, listSessionIdsAfter } from '../store/sessions.ts';

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
  config?: Pick<Config, 'paymentRecoveryAfterMs' | 'paymentAuthTimeoutMs'>;
};

type ProcessorRecord = NonNullable<Awaited<ReturnType<Deps['processor']['lookup']>>>;

/** Used when deps carry no config: twice PAYMENT_RECOVERY_AFTER_MS's default, so a call in flight is not named. */
const DEFAULT_RECOVERY_AFTER_MS = 10 * 60_000;
/** Used when deps carry no config: PAYMENT_AUTH_TIMEOUT_MS's default. */
const DEFAULT_AUTH_TIMEOUT_MS = 15 * 60_000;
const PAGE = 200;

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
  // A payment waiting on the payer's authentication is theirs until PAYMENT_AUTH_TIMEOUT_MS has passed.
  const authTimeoutMs = deps.config?.paymentAuthTimeoutMs ?? DEFAULT_AUTH_TIMEOUT_MS;

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
      const disputes = await listSessionDisputes(db, id);
      if (!merchants.has(session.merchantId))
        merchants.set(session.merchantId, await findMerchantById(db, deps.db.secrets, session.merchantId));
      checked.sessions++;
      checked.members += members.length;
      checked.attempts += attempts.length;
      for (const a of attempts) {
        if (a.processorId !== null) known.add(a.processorId);
        if (a.state === 'started') {
          const waits = awaitsAuthentication(a) ? authTimeoutMs + recoveryAfterMs : recoveryAfterMs;
          if (now - a.createdAt > waits)
            mismatches.push({
              kind: 'attempt_unsettled',
              session_id: id,
              detail: `The ${a.kind} attempt ${a.id} of ${money(a.amountCents, a.currency)}${a.memberId ? ` for member ${a.memberId}` : ''} has been started since ${new Date(a.createdAt).toISOString()}, longer than the ${waits} ms it may take: the settling worker should have asked the processor what became of it.`,
            });
          else inFlight++;
        }
      }
      const check = { session, members, attempts, disputes, merchant: merchants.get(session.merchantId) };
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
