import type { Kysely } from 'kysely';

// server_leases: which server process runs on a SQLite file (docs/operations.md#one-server-per-sqlite-file).
// One row per lease name; the holder writes heartbeat_at every few seconds while it runs.
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not follow the live schema type
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('server_leases')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('holder', 'text', (c) => c.notNull())
    .addColumn('host', 'text', (c) => c.notNull())
    .addColumn('pid', 'integer', (c) => c.notNull())
    .addColumn('heartbeat_at', 'bigint', (c) => c.notNull())
    .execute();
}
