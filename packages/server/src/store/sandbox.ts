// The sandbox processor's own records (processor/sandbox.ts): what a real processor would keep on its
// side, kept in our database so that they survive restarts and reconcile can compare them with ours.
import type { Selectable, Transaction } from 'kysely';
import { prepared } from './prepared.ts';
import type { Database, Executor, SandboxOperationsTable } from './schema.ts';

export interface SandboxRecord {
  key: string;
  /** The object's id (ch_…, re_…, tr_…; for a capture or release the charge's); null when nothing was made. */
  id: string | null;
  kind: string;
  targetId: string | null;
  amountCents: number;
  currency: string;
  /** ch_: succeeded | authorized | captured | released | refunded; re_, tr_: succeeded; others: done. */
  state: string;
  /** The answer given for this key, as JSON: the same key answers it again. */
  outcome: string;
  /** A payment waiting on the payer's authentication: the secret their page hands back. */
  clientSecret: string | null;
  createdAt: number;
  updatedAt: number;
}

const toRecord = (row: Selectable<SandboxOperationsTable>): SandboxRecord => ({
  key: row.idempotency_key,
  id: row.id,
  kind: row.kind,
  targetId: row.target_id,
  amountCents: row.amount_cents,
  currency: row.currency,
  state: row.state,
  outcome: row.outcome,
  clientSecret: row.client_secret,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

const byKey = prepared((db, p: { key: string }) =>
  db.selectFrom('sandbox_operations').selectAll().where('idempotency_key', '=', p.key),
);

export async function findSandboxRecordByKey(db: Executor, key: string): Promise<SandboxRecord | undefined> {
  const row = await byKey.first(db, { key });
  return row && toRecord(row);
}

/** The record that made object `id` (a charge or hold, a refund, a transfer). */
export async function findSandboxObject(db: Executor, id: string): Promise<SandboxRecord | undefined> {
  const row = await db
    .selectFrom('sandbox_operations')
    .selectAll()
    .where('id', '=', id)
    .where('kind', 'in', ['charge', 'authorize', 'refund', 'transfer'])
    .executeTakeFirst();
  return row && toRecord(row);
}

const insertQuery = prepared((db, r: SandboxRecord) =>
  db
    .insertInto('sandbox_operations')
    .values({
      idempotency_key: r.key,
      id: r.id,
      kind: r.kind,
      target_id: r.targetId,
      amount_cents: r.amountCents,
      currency: r.currency,
      state: r.state,
      outcome: r.outcome,
      client_secret: r.clientSecret,
      created_at: r.createdAt,
      updated_at: r.updatedAt,
    })
    .onConflict((oc) => oc.column('idempotency_key').doNothing())
    .returning('idempotency_key'),
);

/**
 * Writes the record answering its key, unless the key has one already: false then, and nothing written
 * (one statement, where a read by key before the insert was two). Two writers racing with one key on
 * PostgreSQL: the second waits for the first's transaction and writes nothing once it commits.
 */
export async function insertSandboxRecord(db: Executor, r: SandboxRecord): Promise<boolean> {
  return (await insertQuery.all(db, r)).length === 1;
}

/** Moves object `id` from state `from` to `to`; false when it was not in `from`. */
export async function moveSandboxObject(
  trx: Transaction<Database>,
  id: string,
  from: string[],
  to: string,
  now: number,
): Promise<boolean> {
  const result = await trx
    .updateTable('sandbox_operations')
    .set({ state: to, updated_at: now })
    .where('id', '=', id)
    .where('kind', 'in', ['charge', 'authorize'])
    .where('state', 'in', from)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** The payment waiting on the authentication that `clientSecret` names. */
export async function findSandboxRecordByClientSecret(
  db: Executor,
  clientSecret: string,
): Promise<SandboxRecord | undefined> {
  const row = await db
    .selectFrom('sandbox_operations')
    .selectAll()
    .where('client_secret', '=', clientSecret)
    .executeTakeFirst();
  return row && toRecord(row);
}

/** The sandbox's record of dispute `id`. */
export async function findSandboxDispute(db: Executor, id: string): Promise<SandboxRecord | undefined> {
  const row = await db
    .selectFrom('sandbox_operations')
    .selectAll()
    .where('id', '=', id)
    .where('kind', '=', 'dispute')
    .executeTakeFirst();
  return row && toRecord(row);
}

/**
 * Moves the record answering `key` from one of `from` to `state`, and with it the answer the key gives
 * from now on; false when it was not in `from`.
 */
export async function rewriteSandboxRecord(
  db: Executor,
  key: string,
  from: string[],
  state: string,
  outcome: string,
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('sandbox_operations')
    .set({ state, outcome, updated_at: now })
    .where('idempotency_key', '=', key)
    .where('state', 'in', from)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Every object the sandbox made (charges, holds, refunds, transfers), for reconcile. */
export async function listSandboxObjects(db: Executor): Promise<SandboxRecord[]> {
  const rows = await db
    .selectFrom('sandbox_operations')
    .selectAll()
    .where('id', 'is not', null)
    .where('kind', 'in', ['charge', 'authorize', 'refund', 'transfer'])
    .orderBy('created_at')
    .execute();
  return rows.map(toRecord);
}
