import type { Kysely } from 'kysely';

// api_keys.shown: a publishable key in the clear, so the dashboard can show it whole (it is public: it is
// written into merchants' pages). Null for secret keys, which are only ever kept as a hash, and for
// publishable keys made before this column: those are shown by prefix until the next roll.
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not follow the live schema type
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('api_keys').addColumn('shown', 'text').execute();
}
