import type { Kysely } from 'kysely';

// Real money (docs/decisions.md#real-money): payments that wait for the payer's authentication (3-D
// Secure), the processor's own events (Stripe's webhooks, the sandbox's equivalents) taken once each,
// and disputes (chargebacks) on members' payments.
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not follow the live schema type
export async function up(db: Kysely<any>): Promise<void> {
  // A payment the processor answered "authenticate first": the secret the payer's page hands to the
  // processor's script (Stripe.js handleNextAction, or the sandbox's own step). Set only while the
  // attempt is open and waiting on the payer; the processor's id of the payment is in processor_id.
  await db.schema.alterTable('attempts').addColumn('client_secret', 'text').execute();
  // The processor's events name its objects (a PaymentIntent, a refund): found by processor_id.
  await db.schema.createIndex('attempts_processor').on('attempts').column('processor_id').execute();

  // The sandbox's payments awaiting authentication are found by their client secret.
  await db.schema.alterTable('sandbox_operations').addColumn('client_secret', 'text').execute();
  await db.schema
    .createIndex('sandbox_operations_client_secret')
    .on('sandbox_operations')
    .column('client_secret')
    .execute();

  // Every processor event we took, by the processor's id: acted on once however often it arrives. The
  // sandbox writes its own (a dispute a few seconds after a charge) with due_at in the future.
  await db.schema
    .createTable('processor_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('received_at', 'bigint', (c) => c.notNull())
    .addColumn('due_at', 'bigint', (c) => c.notNull())
    .addColumn('claimed_until', 'bigint')
    .addColumn('processed_at', 'bigint')
    .addColumn('tries', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('error', 'text')
    .execute();
  await db.schema
    .createIndex('processor_events_due')
    .on('processor_events')
    .columns(['processed_at', 'due_at'])
    .execute();

  // A dispute (chargeback) on one member's payment, as the processor reported it.
  await db.schema
    .createTable('disputes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('merchant_id', 'text', (c) => c.notNull())
    .addColumn('session_id', 'text', (c) => c.notNull().references('sessions.id'))
    .addColumn('member_id', 'text', (c) => c.notNull())
    .addColumn('attempt_id', 'text', (c) => c.notNull())
    .addColumn('amount_cents', 'integer', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('closed_at', 'bigint')
    .execute();
  await db.schema.createIndex('disputes_session').on('disputes').column('session_id').execute();
}
