import type { Kysely } from 'kysely';

// Reconcile of the sessions changed since its last run (docs/decisions.md#ledger-and-reconciliation): an
// index to read sessions in the order they last changed (every transaction that changes a session or its
// money locks its row first, which writes updated_at), how far the last run read, and the sessions whose
// mismatches are still open, which each run checks again until they are clean.
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not follow the live schema type
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('sessions_changed').on('sessions').columns(['updated_at', 'id']).execute();
  await db.schema
    .createTable('reconcile_marks')
    .addColumn('name', 'text', (c) => c.primaryKey())
    // Every session at or before (changed_at, session_id), in that order, was checked.
    .addColumn('changed_at', 'bigint', (c) => c.notNull())
    .addColumn('session_id', 'text', (c) => c.notNull())
    .addColumn('ran_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('reconcile_findings')
    .addColumn('session_id', 'text', (c) => c.primaryKey())
    .addColumn('found_at', 'bigint', (c) => c.notNull())
    .execute();
}
