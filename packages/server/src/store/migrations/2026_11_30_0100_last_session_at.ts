import type { Kysely } from 'kysely';

// The created_at of a merchant's newest session, on its row (docs/decisions.md#session-list-paging): on
// PostgreSQL a create takes its created_at with one update of the merchant's row, which locks the row
// (creates for one merchant take turns) and answers the next free millisecond in the same statement,
// where a lock and a read of the newest session were two. Null until the merchant's first create after
// this migration (the update reads the newest session itself too), and always on SQLite, whose creates
// read the newest session (an update of merchants there would drop the read caches on every create).
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not follow the live schema type
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('merchants').addColumn('last_session_at', 'bigint').execute();
}
