import type { Kysely } from 'kysely';

// A rolled cart signing secret, session webhook secret or publishable key keeps working for a grace
// period (docs/decisions.md#rotation-grace-period): the merchant row keeps the previous secrets and when
// they end; an API key gets the moment it stops working (expires_at; revoked_at still ends it at once).
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not follow the live schema type
export async function up(db: Kysely<any>): Promise<void> {
  // One column per statement: SQLite adds one column per ALTER TABLE.
  for (const [column, type] of [
    ['previous_signing_secret', 'text'],
    ['previous_signing_secret_expires_at', 'bigint'],
    ['previous_session_webhook_secret', 'text'],
    ['previous_session_webhook_secret_expires_at', 'bigint'],
  ] as const) {
    await db.schema.alterTable('merchants').addColumn(column, type).execute();
  }
  await db.schema.alterTable('api_keys').addColumn('expires_at', 'bigint').execute();
}
