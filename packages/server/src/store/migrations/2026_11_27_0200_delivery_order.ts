import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Delivery in commit order with one sender per URL (docs/decisions.md#webhook-delivery):
// - events.seq and deliveries.seq, assigned by the database as each row is inserted (a sequence on
//   PostgreSQL, the next number under SQLite's single writer), inside the writing transaction. Existing
//   rows are numbered in the order they were made.
// - delivery_urls: one row per receiver URL, its queue's lease (holder, held_until) and when the
//   queue's head falls due. Taking a URL is an update of its row, so two processes cannot both hold it.
// - the sandbox's one-time set-up (the demo merchant) marked by a row of `singletons`.
// The per-delivery claim (claim, claimed_until) and the indexes that served it go.
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not follow the live schema type
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  for (const table of ['events', 'deliveries'] as const) {
    await db.schema.alterTable(table).addColumn('seq', 'bigint').execute();
    await sql`
      update ${sql.table(table)} set seq = numbered.n
      from (select id, row_number() over (order by created_at, id) as n from ${sql.table(table)}) as numbered
      where numbered.id = ${sql.table(table)}.id`.execute(db);
    if (postgres) {
      const sequence = sql.raw(`${table}_seq`);
      await sql`create sequence ${sequence}`.execute(db);
      await sql`select setval('${sequence}', (select coalesce(max(seq), 0) + 1 from ${sql.table(table)}), false)`.execute(
        db,
      );
      await sql`alter table ${sql.table(table)} alter column seq set default nextval('${sequence}')`.execute(
        db,
      );
    } else {
      // SQLite has one writer at a time: the next number, taken in the inserting statement, is commit order.
      await sql
        .raw(
          `create trigger ${table}_seq after insert on ${table} when new.seq is null begin ` +
            `update ${table} set seq = (select coalesce(max(seq), 0) + 1 from ${table}) where rowid = new.rowid; end`,
        )
        .execute(db);
    }
  }
  await db.schema.createIndex('events_by_seq').on('events').column('seq').unique().execute();
  // The fan-out takes events not fanned out yet in commit order.
  await db.schema
    .createIndex('events_undispatched_seq')
    .on('events')
    .column('seq')
    .where(sql.ref('dispatched_at'), 'is', null)
    .execute();
  await db.schema.dropIndex('events_undispatched').execute();
  await db.schema.createIndex('deliveries_by_seq').on('deliveries').column('seq').unique().execute();
  // A URL's queue: its pending deliveries in order.
  await db.schema
    .createIndex('deliveries_url_queue')
    .on('deliveries')
    .columns(['url', 'seq'])
    .where(sql.ref('state'), '=', 'pending')
    .execute();
  for (const index of ['deliveries_due', 'deliveries_url_due', 'deliveries_claimed']) {
    await db.schema.dropIndex(index).execute();
  }
  await db.schema.alterTable('deliveries').dropColumn('claim').execute();
  await db.schema.alterTable('deliveries').dropColumn('claimed_until').execute();

  await db.schema
    .createTable('delivery_urls')
    .addColumn('url', 'text', (c) => c.primaryKey())
    // When the queue's oldest pending delivery falls due; null when nothing waits. While the URL is
    // held it may be stale: the holder writes it afresh when it gives the URL back.
    .addColumn('due_at', 'bigint')
    // The dispatcher delivering to the URL, and until when; past it, another may take the URL.
    .addColumn('holder', 'text')
    .addColumn('held_until', 'bigint')
    .execute();
  await db.schema
    .createIndex('delivery_urls_due')
    .on('delivery_urls')
    .column('due_at')
    .where(sql.ref('due_at'), 'is not', null)
    .execute();
  await sql`
    insert into delivery_urls (url, due_at)
    select url, min(next_attempt_at) from deliveries where state = 'pending' group by url`.execute(db);

  await db.schema
    .createTable('singletons')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
}
