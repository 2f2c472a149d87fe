import type { Kysely } from 'kysely';

// The language a session's pages and mail speak (POST /sessions locale): one of en es fr de it pt nl ja,
// or auto (the reader's Accept-Language on pages). Sessions made before it follow their readers: auto.
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not follow the live schema type
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('sessions')
    .addColumn('locale', 'text', (c) => c.notNull().defaultTo('auto'))
    .execute();
}
