import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not follow the live schema type
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('cart', 'text', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('total_cents', 'integer', (c) => c.notNull())
    .addColumn('order_ref', 'text')
    .addColumn('group_id', 'text', (c) => c.notNull())
    .addColumn('group_mode', 'text', (c) => c.notNull())
    .addColumn('group_config', 'text', (c) => c.notNull())
    .addColumn('group_set_up_at', 'bigint')
    .addColumn('customer', 'text')
    .addColumn('success_url', 'text')
    .addColumn('cancel_url', 'text')
    .addColumn('webhook_url', 'text')
    .addColumn('embed_origins', 'text', (c) => c.notNull())
    .addColumn('organizer_token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('group_token', 'text', (c) => c.notNull().unique())
    .addColumn('merchant_fee_ppm', 'integer', (c) => c.notNull())
    .addColumn('consumer_fee_ppm', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('closed_at', 'bigint')
    .execute();
  // Unique per merchant: the list cursor is a creation time in milliseconds, so no two sessions of
  // one merchant share one (see docs/decisions.md, "Session list paging").
  await db.schema
    .createIndex('sessions_merchant_created')
    .on('sessions')
    .columns(['merchant_id', 'created_at'])
    .unique()
    .execute();
  await db.schema
    .createIndex('sessions_pending_expiry')
    .on('sessions')
    .columns(['status', 'expires_at'])
    .execute();

  await db.schema
    .createTable('members')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('session_id', 'text', (c) => c.notNull().references('sessions.id'))
    .addColumn('merchant_id', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('email', 'text')
    .addColumn('amount_cents', 'integer', (c) => c.notNull())
    .addColumn('basis_points', 'integer')
    .addColumn('items', 'text')
    .addColumn('share_id', 'text', (c) => c.notNull().unique())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('is_organizer', 'integer', (c) => c.notNull())
    .addColumn('last_reminded_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('members_session').on('members').columns(['session_id', 'position']).execute();

  await db.schema
    .createTable('events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('merchant_id', 'text', (c) => c.notNull())
    .addColumn('session_id', 'text')
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  // The outbox order of a session's events (events/outbox.ts). Delivery adds the index it reads by in its
  // own migration: every index is one more page written per commit on the session-create path.
  await db.schema.createIndex('events_session').on('events').columns(['session_id', 'created_at']).execute();
}
