import type { Kysely } from 'kysely';

// processor_pending: 1 while a refund the processor took is not finished at its end (Stripe's `pending`:
// the money is on its way back to the card), 0 otherwise. Refunds recorded before it were counted done: 0.
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not follow the live schema type
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('attempts')
    .addColumn('processor_pending', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}
