import type { Kysely } from 'kysely';
import { sql } from 'kysely';

// Webhook delivery (docs/decisions.md#webhook-delivery): an event fans out into one delivery per target
// (the session's webhook_url, each subscribed endpoint), each delivery is claimed by one dispatcher at a
// time and every attempt of it is kept. Endpoints gain the moment a 410 disabled them and the secret a
// rotation replaced, which still signs until its grace period ends.
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not follow the live schema type
export async function up(db: Kysely<any>): Promise<void> {
  // When the dispatcher made the event's deliveries; null while it still has to. Events written before
  // delivery existed are delivered too: each was written to be.
  await db.schema.alterTable('events').addColumn('dispatched_at', 'bigint').execute();
  await db.schema
    .createIndex('events_undispatched')
    .on('events')
    .column('created_at')
    .where(sql.ref('dispatched_at'), 'is', null)
    .execute();
  // GET /events: a merchant's events, newest first.
  await db.schema
    .createIndex('events_merchant')
    .on('events')
    .columns(['merchant_id', 'created_at'])
    .execute();

  for (const [column, type] of [
    ['disabled_at', 'bigint'],
    ['previous_secret', 'text'],
    ['previous_secret_expires_at', 'bigint'],
  ] as const) {
    await db.schema.alterTable('webhook_endpoints').addColumn(column, type).execute();
  }

  await db.schema
    .createTable('deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('event_id', 'text', (c) => c.notNull().references('events.id'))
    .addColumn('merchant_id', 'text', (c) => c.notNull())
    // null: the session's webhook_url, signed with the merchant's session webhook secret.
    .addColumn('webhook_id', 'text')
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('attempt_count', 'integer', (c) => c.notNull())
    // When the next attempt is due; null once delivered or failed for good.
    .addColumn('next_attempt_at', 'bigint')
    // The dispatcher that holds the delivery, and until when: a crashed one's claim runs out.
    .addColumn('claim', 'text')
    .addColumn('claimed_until', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('deliveries_event')
    .on('deliveries')
    .columns(['event_id', 'created_at'])
    .execute();
  await db.schema
    .createIndex('deliveries_due')
    .on('deliveries')
    .column('next_attempt_at')
    .where(sql.ref('state'), '=', 'pending')
    .execute();
  // A chain going on with its own URL's next due deliveries.
  await db.schema
    .createIndex('deliveries_url_due')
    .on('deliveries')
    .columns(['url', 'next_attempt_at'])
    .where(sql.ref('state'), '=', 'pending')
    .execute();
  // The targets some dispatcher is delivering to right now, which a claim passes over.
  await db.schema
    .createIndex('deliveries_claimed')
    .on('deliveries')
    .columns(['claimed_until', 'url'])
    .where(sql.ref('claim'), 'is not', null)
    .execute();

  await db.schema
    .createTable('delivery_attempts')
    .addColumn('delivery_id', 'text', (c) => c.notNull().references('deliveries.id'))
    .addColumn('number', 'integer', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('latency_ms', 'integer', (c) => c.notNull())
    .addColumn('error', 'text')
    .addPrimaryKeyConstraint('delivery_attempts_pk', ['delivery_id', 'number'])
    .execute();
}
