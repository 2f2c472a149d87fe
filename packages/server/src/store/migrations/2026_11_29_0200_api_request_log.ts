import type { Kysely } from 'kysely';

// The API request log the dashboard's developers page shows (docs/dashboard.md#api-request-log): one row
// per answered merchant API request that carried a working key — its request id, method, route pattern,
// status, duration and the key's prefix; never a body, a header, a token or a card number. Kept 7 days:
// the housekeeping loop deletes older rows, merchant by merchant.
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not follow the live schema type
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('api_requests')
    // The request id every answer carries (req_…): what a merchant quotes to look one request up. Not a
    // key of its own: ids are random, and an index on them makes every write a random btree insert (6 times
    // the cost of the whole row, measured on SQLite); a lookup reads the merchant's 7 days in the index below.
    .addColumn('id', 'text', (c) => c.notNull())
    // No foreign key: a log row is written apart from any request's transaction, and checking the
    // merchant again on every write would cost the hot paths for nothing.
    .addColumn('merchant_id', 'text', (c) => c.notNull())
    .addColumn('method', 'text', (c) => c.notNull())
    // The route as registered (/v1/sessions/:sessionId), never the URL.
    .addColumn('route', 'text', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('duration_us', 'integer', (c) => c.notNull())
    // The first 16 characters of the key used, as the developers page lists keys.
    .addColumn('key_prefix', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  // The one index, appended to in time order: the page lists a merchant's requests newest first by
  // cursor, a lookup by request id reads the merchant's range (the index holds the id), and the retention
  // sweep deletes each merchant's oldest. An index on created_at alone for the sweep cost a third of a
  // row's write (measured on SQLite), on every request, to save a seek per merchant every 10 minutes.
  await db.schema
    .createIndex('api_requests_merchant_created')
    .on('api_requests')
    .columns(['merchant_id', 'created_at', 'id'])
    .execute();
}
