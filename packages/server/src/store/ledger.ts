// The ledger (docs/decisions.md#ledger-and-reconciliation): append-only double-entry lines, written in the
// transaction of the change they reflect. This file only inserts and reads; nothing updates or deletes a
// line.
import type { Selectable, Transaction } from 'kysely';
import type { LedgerAccount, LedgerLine } from '../domain/ledger.ts';
import { fieldsOf, preparedBy } from './prepared.ts';
import type { Database, Executor, LedgerLinesTable } from './schema.ts';

export interface StoredLedgerLine extends LedgerLine {
  id: string;
  entryId: string;
  merchantId: string;
  sessionId: string;
  attemptId: string | null;
  createdAt: number;
}

const toLine = (row: Selectable<LedgerLinesTable>): StoredLedgerLine => ({
  id: row.id,
  entryId: row.entry_id,
  kind: row.kind as LedgerLine['kind'],
  account: row.account as LedgerLine['account'],
  amountCents: row.amount_cents,
  currency: row.currency,
  merchantId: row.merchant_id,
  sessionId: row.session_id,
  memberId: row.member_id,
  attemptId: row.attempt_id,
  createdAt: row.created_at,
});

export async function insertLedgerLines(
  trx: Transaction<Database>,
  lines: StoredLedgerLine[],
): Promise<void> {
  if (lines.length === 0) return;
  await insertQuery(lines.length).execute(trx, { lines });
}

/** An entry's lines in one insert, shaped by how many there are (an entry has two to four). */
const insertQuery = preparedBy((db, p: { lines: StoredLedgerLine[] }, count: number) => {
  return db.insertInto('ledger_lines').values(
    Array.from({ length: count }, (_, i) => {
      const at = fieldsOf<StoredLedgerLine>(p, `lines.${i}`);
      return {
        id: at('id'),
        entry_id: at('entryId'),
        kind: at('kind'),
        account: at('account'),
        amount_cents: at('amountCents'),
        currency: at('currency'),
        merchant_id: at('merchantId'),
        session_id: at('sessionId'),
        member_id: at('memberId'),
        attempt_id: at('attemptId'),
        created_at: at('createdAt'),
      };
    }),
  );
});

export async function listSessionLedgerLines(db: Executor, sessionId: string): Promise<StoredLedgerLine[]> {
  const rows = await db
    .selectFrom('ledger_lines')
    .selectAll()
    .where('session_id', '=', sessionId)
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .execute();
  return rows.map(toLine);
}

/** The balance of `accounts` together in one session's lines (0 when it has none). */
export async function sumSessionAccounts(
  db: Executor,
  sessionId: string,
  accounts: readonly LedgerAccount[],
): Promise<number> {
  const row = await db
    .selectFrom('ledger_lines')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('amount_cents'), eb.lit(0)).as('sum'))
    .where('session_id', '=', sessionId)
    .where('account', 'in', accounts)
    .executeTakeFirstOrThrow();
  return Number(row.sum);
}

/** The sum of every line per currency: zero in each when the books balance. */
export async function sumLedgerByCurrency(
  db: Executor,
): Promise<{ currency: string; sum: number; lines: number }[]> {
  const rows = await db
    .selectFrom('ledger_lines')
    .select((eb) => [
      'currency',
      eb.fn.sum<number>('amount_cents').as('sum'),
      eb.fn.countAll<number>().as('lines'),
    ])
    .groupBy('currency')
    .orderBy('currency')
    .execute();
  return rows.map((r) => ({ currency: r.currency, sum: Number(r.sum), lines: Number(r.lines) }));
}

/** Entries whose lines do not add up to zero: each must, on its own. */
export async function listUnbalancedEntries(
  db: Executor,
): Promise<{ entryId: string; sessionId: string; sum: number }[]> {
  const rows = await db
    .selectFrom('ledger_lines')
    .select((eb) => [
      'entry_id',
      eb.fn.max('session_id').as('session_id'),
      eb.fn.sum<number>('amount_cents').as('sum'),
    ])
    .groupBy('entry_id')
    .having((eb) => eb.fn.sum('amount_cents'), '<>', 0)
    .execute();
  return rows.map((r) => ({ entryId: r.entry_id, sessionId: String(r.session_id), sum: Number(r.sum) }));
}
