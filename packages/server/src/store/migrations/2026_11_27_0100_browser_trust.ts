import type { Kysely } from 'kysely';

// Trust at the browser boundary (docs/decisions.md#origins, #reminder-limits). Origins stored before they
// were parsed are brought to their canonical spelling, and any value that is not a web origin is dropped
// (a session created with `Origin: *` recorded "*"). Reminders get their own record, keyed by address: the
// rounds a session sent and every mail, so that limits survive a re-saved group.
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not follow the live schema type
export async function up(db: Kysely<any>): Promise<void> {
  for (const [table, column] of [
    ['merchants', 'allowed_origins'],
    ['sessions', 'embed_origins'],
  ] as const) {
    const rows: { id: string; value: string }[] = await db
      .selectFrom(table)
      .select(['id', `${column} as value`])
      .where(column, '!=', '[]')
      .execute();
    for (const row of rows) {
      const next = JSON.stringify(canonical(row.value));
      if (next !== row.value)
        await db
          .updateTable(table)
          .set({ [column]: next })
          .where('id', '=', row.id)
          .execute();
    }
  }

  // One row per round of reminders a session sent (at most 3).
  await db.schema
    .createTable('reminder_rounds')
    .addColumn('session_id', 'text', (c) => c.notNull().references('sessions.id'))
    .addColumn('round', 'integer', (c) => c.notNull())
    .addColumn('merchant_id', 'text', (c) => c.notNull())
    .addColumn('sent_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('reminder_rounds_pk', ['session_id', 'round'])
    .execute();
  // One row per reminder mail, by the recipient's address (lowercased): written before the mail is sent
  // (the claim), deleted if the mail server refuses it.
  await db.schema
    .createTable('reminder_mails')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('merchant_id', 'text', (c) => c.notNull())
    .addColumn('session_id', 'text', (c) => c.notNull().references('sessions.id'))
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('sent_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('reminder_mails_address')
    .on('reminder_mails')
    .columns(['merchant_id', 'address', 'sent_at'])
    .execute();
  await db.schema
    .createIndex('reminder_mails_session')
    .on('reminder_mails')
    .columns(['session_id', 'address'])
    .execute();
}

/** The origins of a stored JSON array that are already scheme://host[:port], in canonical spelling. */
function canonical(stored: string): string[] {
  let values: unknown;
  try {
    values = JSON.parse(stored);
  } catch {
    return [];
  }
  if (!Array.isArray(values)) return [];
  const out: string[] = [];
  for (const value of values) {
    if (typeof value !== 'string' || !/^https?:\/\/[A-Za-z0-9.\-[\]:]+$/.test(value)) continue;
    let origin: string;
    try {
      origin = new URL(value).origin;
    } catch {
      continue;
    }
    if (origin === value.toLowerCase() && !out.includes(origin)) out.push(origin);
  }
  return out;
}
