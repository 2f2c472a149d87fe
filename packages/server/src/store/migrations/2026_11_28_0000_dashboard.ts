import type { Kysely } from 'kysely';

// The merchant dashboard (docs/dashboard.md): the people who sign in to it, their one-time sign-in
// links and their cookie sessions. Links and session cookies are stored as SHA-256 hashes only.
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not follow the live schema type
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('dashboard_users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
    // Lowercased: an address is one user per merchant whatever its case.
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('dashboard_users_merchant_email')
    .on('dashboard_users')
    .columns(['merchant_id', 'email'])
    .unique()
    .execute();
  // A sign-in request names an address, not a merchant.
  await db.schema.createIndex('dashboard_users_email').on('dashboard_users').column('email').execute();

  await db.schema
    .createTable('dashboard_links')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .execute();

  await db.schema
    .createTable('dashboard_sessions')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('csrf_token', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
    .addColumn('ended_at', 'bigint')
    .execute();
  await db.schema.createIndex('dashboard_sessions_user').on('dashboard_sessions').column('user_id').execute();

  // The sessions list filters by status and pages by creation time; search looks an order_ref up.
  await db.schema
    .createIndex('sessions_merchant_status_created')
    .on('sessions')
    .columns(['merchant_id', 'status', 'created_at'])
    .execute();
  await db.schema
    .createIndex('sessions_merchant_order_ref')
    .on('sessions')
    .columns(['merchant_id', 'order_ref'])
    .execute();
  // The webhooks page lists the merchant's latest deliveries.
  await db.schema
    .createIndex('deliveries_merchant_created')
    .on('deliveries')
    .columns(['merchant_id', 'created_at'])
    .execute();
  // The overview's 30 days, each read from an index alone (no table rows): sessions funded per day with
  // their currency, total and creation time (count, volume, time to fund), and closed per day with status.
  await db.schema
    .createIndex('sessions_merchant_funded')
    .on('sessions')
    .columns(['merchant_id', 'funded_at', 'currency', 'total_cents', 'created_at'])
    .execute();
  await db.schema
    .createIndex('sessions_merchant_closed')
    .on('sessions')
    .columns(['merchant_id', 'closed_at', 'status'])
    .execute();
}
