import type { Kysely } from 'kysely';

// Money movement (docs/decisions.md#payments): one attempt row per processor call, committed before the
// call; the sandbox processor's own records; the append-only ledger; and on sessions and members what
// the settling worker needs to find its work without scanning every row.
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not follow the live schema type
export async function up(db: Kysely<any>): Promise<void> {
  for (const [column, type] of [
    ['funded_at', 'bigint'],
    // When the money work a funded or closed session still owes (transfer; refunds or releases and the
    // closing event) was all done; null until then.
    ['settled_at', 'bigint'],
    // When the settling worker should next look at the session; null while it owes nothing.
    ['settle_after', 'bigint'],
  ] as const) {
    await db.schema.alterTable('sessions').addColumn(column, type).execute();
  }
  await db.schema.createIndex('sessions_settle_after').on('sessions').column('settle_after').execute();

  // The attempt in flight for a member's share (its share cannot change meanwhile), and why the last
  // payment or capture of it failed, for the payer's page.
  await db.schema.alterTable('members').addColumn('paying_attempt_id', 'text').execute();
  await db.schema.alterTable('members').addColumn('failure', 'text').execute();

  await db.schema
    .createTable('attempts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('idempotency_key', 'text', (c) => c.notNull().unique())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('merchant_id', 'text', (c) => c.notNull())
    .addColumn('session_id', 'text', (c) => c.notNull().references('sessions.id'))
    .addColumn('member_id', 'text')
    .addColumn('target_id', 'text')
    .addColumn('amount_cents', 'integer', (c) => c.notNull())
    .addColumn('fee_cents', 'integer', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('payment_method', 'text')
    .addColumn('destination', 'text')
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('processor_id', 'text')
    .addColumn('card_brand', 'text')
    .addColumn('card_last4', 'text')
    .addColumn('decline_code', 'text')
    .addColumn('error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('attempts_session')
    .on('attempts')
    .columns(['session_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('sandbox_operations')
    .addColumn('idempotency_key', 'text', (c) => c.primaryKey())
    .addColumn('id', 'text')
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('target_id', 'text')
    .addColumn('amount_cents', 'integer', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sandbox_operations_id').on('sandbox_operations').column('id').execute();

  await db.schema
    .createTable('ledger_lines')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('entry_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('account', 'text', (c) => c.notNull())
    .addColumn('amount_cents', 'integer', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('merchant_id', 'text', (c) => c.notNull())
    .addColumn('session_id', 'text', (c) => c.notNull())
    .addColumn('member_id', 'text')
    .addColumn('attempt_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('ledger_lines_session').on('ledger_lines').column('session_id').execute();
}
