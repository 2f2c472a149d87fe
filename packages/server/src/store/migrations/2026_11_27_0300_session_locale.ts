import type { Kysely } from 'kysely';

// The language a session's pages and mail speak (POST /sessions locale): one of en es fr de it pt nl ja,
// or auto (the reader's Accept-Language on pages). Sessions made before it follow their readers: auto.
// mail_locale: the language of its mail, fixed at create (the locale, or with auto the creator's
// Accept-Language); English for sessions made before it.
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not follow the live schema type
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('sessions')
    .addColumn('locale', 'text', (c) => c.notNull().defaultTo('auto'))
    .execute();
  await db.schema
    .alterTable('sessions')
    .addColumn('mail_locale', 'text', (c) => c.notNull().defaultTo('en'))
    .execute();
}
