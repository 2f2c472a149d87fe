import type { Kysely } from 'kysely';

// Mail that follows from a fact (docs/decisions.md#mail): a payer's receipt, their refund or released
// hold, the organizer told that the group is funded or that a share failed. One row per fact: `fact` is
// unique, so however many processes fan an event out, or record a decline, it is mailed once. A row is
// sent under a lease (holder, held_until) and retried on a schedule when the mail server is unreachable.
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not follow the live schema type
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('mails')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('fact', 'text', (c) => c.notNull().unique())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('merchant_id', 'text', (c) => c.notNull())
    .addColumn('session_id', 'text', (c) => c.notNull())
    .addColumn('member_id', 'text')
    .addColumn('event_id', 'text')
    .addColumn('attempt_id', 'text')
    .addColumn('address', 'text', (c) => c.notNull())
    // pending, sent, failed (the mail server refused it, or it kept failing), skipped (no longer true)
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('holder', 'text')
    .addColumn('held_until', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('sent_at', 'bigint')
    .execute();
  // The sender reads the pending rows that are due, oldest first.
  await db.schema.createIndex('mails_state_due').on('mails').columns(['state', 'next_attempt_at']).execute();
  await db.schema.createIndex('mails_session').on('mails').column('session_id').execute();
}
