// Reconcile (docs/decisions.md#ledger-and-reconciliation, docs/operations.md#when-reconcile-reports-a-mismatch):
// reads sessions with their members, attempts and ledger lines, and the processor's own records, and names
// each place where they disagree. An operator decides what to do about a mismatch. Two scopes: the whole
// database (`group-checkout reconcile`, the default), or the sessions changed since the last such run, a bounded
// number at a time (the CLI's default), which is all it writes: how far it read, and which sessions still
// have a mismatch open.
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
import { awaitsAuthentication, withDisputes } from '../domain/settling.ts';
import { type Attempt, findAttemptByKey, listSessionAttempts } from '../store/attempts.ts';
import { listSessionDisputes } from '../store/disputes.ts';
import { listSessionLedgerLines, listUnbalancedEntries, sumLedgerByCurrency } from '../store/ledger.ts';
import { listMembers } from '../store/members.ts';
import { findMerchantById, type Merchant } from '../store/merchants.ts';
import {
  advanceChangeMark,
  type ChangeMark,
  dropFinding,
  findChangeMark,
  keepFinding,
  listOpenFindings,
  listSessionsChangedAfter,
} from '../store/reconcile.ts';
import { findSessionByIdUnscoped, listSessionIdsAfter, listSessionsToSettle } from '../store/sessions.ts';

export interface ReconcileReport {
  ok: boolean;
  /**
   * 'full': every session, the whole ledger and the processor's list of its objects. 'changed': the
   * sessions changed since the last such run, those with a mismatch still open, and those whose settling
   * is overdue.
   */
  scope: 'full' | 'changed';
  /** 'changed': sessions changed after this time (ms) were read; null for the first run, and for 'full'. */
  since: number | null;
  /** 'changed': the limit stopped the run with changed sessions left to read: run it again. */
  more: boolean;
  checked: {
    sessions: number;
    members: number;
    attempts: number;
    ledger_lines: number;
    processor_objects: number;
  };
  mismatches: Mismatch[];
}

export interface ReconcileOptions {
  /**
   * Only the changed sessions (the scope 'changed'): at most `limit` of those that changed before the last
   * RECHECK_MS, and every one that changed since.
   */
  changed?: { limit: number };
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
 * A changed-only run leaves its mark no later than this long before it started, so sessions that changed
 * in the last 10 minutes are read again by the next run: a transaction stamps updated_at with its own
 * clock before it commits, so one that commits while a run reads, or a process whose clock is a little
 * behind, may write a time the run has already passed. Bounded by transactions being short and clocks
 * being set; 10 minutes is far beyond both.
 */
const RECHECK_MS = 10 * 60_000;

/**
 * Checks the database against itself and against the processor: all of it, or with `changed` the sessions
 * changed since the last changed-only run. Safe to run while the service runs; a call in flight at that
 * moment may show as a passing mismatch, which a second run clears.
 */
export async function reconcile(
  deps: ReconcileDeps,
  options: ReconcileOptions = {},
): Promise<ReconcileReport> {
  const db = deps.db.kysely;
  const mismatches: Mismatch[] = [];
  const checked = { sessions: 0, members: 0, attempts: 0, ledger_lines: 0, processor_objects: 0 };
  const now = deps.clock.now();
  const recoveryAfterMs = deps.config?.paymentRecoveryAfterMs ?? DEFAULT_RECOVERY_AFTER_MS;
  // A payment waiting on the payer's authentication is theirs until PAYMENT_AUTH_TIMEOUT_MS has passed.
  const authTimeoutMs = deps.config?.paymentAuthTimeoutMs ?? DEFAULT_AUTH_TIMEOUT_MS;
  const full = options.changed === undefined;

  if (full) {
    for (const c of await sumLedgerByCurrency(db)) {
      checked.ledger_lines += c.lines;
      if (c.sum !== 0)
        mismatches.push({
          kind: 'ledger_unbalanced',
          detail: `The ledger's ${c.lines} lines in ${c.currency.toUpperCase()} add up to ${money(c.sum, c.currency)}, not 0.`,
        });
    }
    for (const e of await listUnbalancedEntries(db)) mismatches.push(unbalancedEntry(e));
  }

  const merchants = new Map<string, Merchant | undefined>();
  /** Each processor id our attempts name: the last attempt read naming it, and whether any is live. */
  const known = new Map<string, { attempt: Attempt; live: boolean }>();
  const looked = new Set<string>();
  let inFlight = 0;

  /** Checks one session; answers its mismatches (also added to the report), or undefined when it is gone. */
  async function checkSession(id: string): Promise<Mismatch[] | undefined> {
    const session = await findSessionByIdUnscoped(db, id);
    if (!session) return undefined;
    const members = await listMembers(db, id);
    const attempts = await listSessionAttempts(db, id);
    const lines = await listSessionLedgerLines(db, id);
    const disputes = await listSessionDisputes(db, id);
    if (!merchants.has(session.merchantId))
      merchants.set(session.merchantId, await findMerchantById(db, deps.db.secrets, session.merchantId));
    checked.sessions++;
    checked.members += members.length;
    checked.attempts += attempts.length;
    const found: Mismatch[] = [];
    for (const a of attempts) {
      if (a.processorId !== null) {
        // Live: with the processor still, or recorded as done; a failed or declined try may name an id too
        // (a payment that asked for authentication has one before its outcome).
        const live = a.state === 'started' || a.state === 'succeeded';
        known.set(a.processorId, { attempt: a, live: live || (known.get(a.processorId)?.live ?? false) });
      }
      if (a.state === 'started') {
        const waits = awaitsAuthentication(a) ? authTimeoutMs + recoveryAfterMs : recoveryAfterMs;
        if (now - a.createdAt > waits)
          found.push({
            kind: 'attempt_unsettled',
            session_id: id,
            detail: `The ${a.kind} attempt ${a.id} of ${money(a.amountCents, a.currency)}${a.memberId ? ` for member ${a.memberId}` : ''} has been started since ${new Date(a.createdAt).toISOString()}, longer than the ${waits} ms it may take: the settling worker should have asked the processor what became of it.`,
          });
        else inFlight++;
      }
    }
    // The whole ledger's entries are summed at once in a full run; here, this session's.
    if (!full) {
      checked.ledger_lines += lines.length;
      const entries = new Map<string, number>();
      for (const l of lines) entries.set(l.entryId, (entries.get(l.entryId) ?? 0) + l.amountCents);
      for (const [entryId, sum] of entries)
        if (sum !== 0) found.push(unbalancedEntry({ entryId, sessionId: id, sum }));
    }
    const check = {
      session,
      members,
      // A closed session's disputed payments are not refunded (domain/settling.ts refundBlocked).
      attempts: withDisputes(attempts, disputes),
      disputes,
      merchant: merchants.get(session.merchantId),
    };
    found.push(...checkLedger(check, lines), ...checkStatuses(check));
    found.push(...(await checkProcessor(deps, check, looked)));
    mismatches.push(...found);
    return found;
  }

  let since: number | null = null;
  let more = false;
  if (options.changed) {
    const { limit } = options.changed;
    const mark = await findChangeMark(db);
    since = mark?.changedAt ?? null;
    const done = new Set<string>();
    const open = new Set(await listOpenFindings(db));
    // Only a change of a session's finding is written: a clean run writes nothing but its mark.
    const visit = async (id: string) => {
      if (done.has(id)) return;
      done.add(id);
      const found = await checkSession(id);
      const mismatched = found !== undefined && found.length > 0;
      if (mismatched && !open.has(id)) await keepFinding(db, id, now);
      if (!mismatched && open.has(id)) await dropFinding(db, id);
    };
    // Sessions whose mismatches were open at the last run, until they are clean; then those whose
    // settling is overdue (a call left started, a refund that keeps failing), which may not change again.
    for (const id of open) await visit(id);
    for (const id of await listSessionsToSettle(db, now - recoveryAfterMs, limit)) await visit(id);
    // The changed sessions, in the order they changed: at most `limit` of those that changed before the
    // last RECHECK_MS, then, when those are all read, every one since (read again by the next run too).
    const horizon = now - RECHECK_MS;
    let after: ChangeMark = mark ?? { changedAt: -1, sessionId: '' };
    let read = 0;
    for (;;) {
      const want = Math.min(PAGE, limit - read);
      if (want === 0) {
        more = (await listSessionsChangedAfter(db, after, 1, horizon)).length > 0;
        break;
      }
      const page = await listSessionsChangedAfter(db, after, want, horizon);
      for (const changed of page) {
        await visit(changed.sessionId);
        after = changed;
      }
      read += page.length;
      if (page.length < want) break;
    }
    if (!more) {
      for (;;) {
        const page = await listSessionsChangedAfter(db, after, PAGE);
        for (const changed of page) {
          await visit(changed.sessionId);
          after = changed;
        }
        if (page.length < PAGE) break;
      }
    }
    // No later than the horizon: what changed since is read again.
    const last = { changedAt: horizon, sessionId: '' };
    await advanceChangeMark(db, before(after, last) ? after : last, now);
  } else {
    let after = '';
    for (;;) {
      const page = await listSessionIdsAfter(db, after, PAGE);
      if (page.length === 0) break;
      after = page[page.length - 1] as string;
      for (const id of page) await checkSession(id);
    }
  }

  // The processor's list of its objects, against every attempt: a full run's, since it reads them all.
  if (full && deps.processor.listRecords) {
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
      const named = known.get(r.processorId);
      if (named?.live) continue;
      // Named above only by failed or declined tries, or not at all: the call's key may still find the
      // attempt that made it, still started (the processor answered, the record is on its way; one started
      // too long is attempt_unsettled once its session is read) or recorded since with this object.
      const maker = named?.attempt ?? (r.key === undefined ? undefined : await findAttemptByKey(db, r.key));
      if (maker) {
        const recorded =
          maker.state === 'started' || (maker.state === 'succeeded' && maker.processorId === r.processorId);
        // Every attempt naming it failed or was declined: only an object that took or moved money says
        // otherwise (a payment given up at the processor, a declined one, says the same as we do).
        if (recorded || !MONEY_MOVED.has(r.state)) continue;
        mismatches.push({
          kind: 'processor_mismatch',
          session_id: maker.sessionId,
          detail: `The processor holds ${r.kind} ${r.processorId} of ${money(r.amountCents, r.currency)} (${r.state}), made by attempt ${maker.id}, which is recorded as ${maker.state}${maker.processorId ? ` with ${maker.processorId}` : ''}.`,
        });
        continue;
      }
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
  return {
    ok: mismatches.length === 0,
    scope: full ? 'full' : 'changed',
    since,
    more,
    checked,
    mismatches,
  };
}

/** The states of a processor object that took, hold or moved money. */
const MONEY_MOVED: ReadonlySet<string> = new Set(['succeeded', 'authorized', 'captured']);

/** Whether `a` comes before `b` in the order sessions changed. */
const before = (a: ChangeMark, b: ChangeMark) =>
  a.changedAt < b.changedAt || (a.changedAt === b.changedAt && a.sessionId < b.sessionId);

const unbalancedEntry = (e: { entryId: string; sessionId: string; sum: number }): Mismatch => ({
  kind: 'entry_unbalanced',
  session_id: e.sessionId,
  detail: `Ledger entry ${e.entryId} of session ${e.sessionId} adds up to ${e.sum} minor units, not 0.`,
});

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
