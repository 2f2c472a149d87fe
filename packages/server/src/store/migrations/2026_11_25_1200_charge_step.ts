import type { Kysely } from 'kysely';

// The step a session's currency is charged in (processor/currencies.ts), fixed when the session is made,
// like its fee rates. Sessions made before it were split and charged to the minor unit: 1 keeps them so.
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not follow the live schema type
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('sessions')
    .addColumn('charge_step', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
}
