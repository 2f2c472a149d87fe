// The delivery-order migration on a database from before it: existing events and deliveries are numbered
// in the order they were made, numbers given afterwards come after them, and every URL with pending
// deliveries gets its queue row, due when its oldest pending delivery is.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type Migration, Migrator, sql } from 'kysely';
import { createMerchant } from '../../src/flows/merchants.ts';
import { openDb } from '../../src/store/db.ts';
import { insertEvent } from '../../src/store/events.ts';
import { migrateToLatest } from '../../src/store/migrations/index.ts';
import { DIALECTS, type TestDatabase } from '../helpers/databases.ts';

const DIR = fileURLToPath(new URL('../../src/store/migrations/', import.meta.url));

async function provider() {
  const migrations: Record<string, Migration> = {};
  // The migrations as this file runs: compiled (scripts/test.mjs) or from the sources.
  const ext = import.meta.url.endsWith('.js') ? '.js' : '.ts';
  for (const file of readdirSync(DIR).filter((f) => f.endsWith(ext) && f !== `index${ext}`))
    migrations[file.slice(0, -ext.length)] = (await import(DIR + file)) as Migration;
  return { getMigrations: async () => migrations };
}

for (const dialect of DIALECTS) {
  describe(`migration 2026_11_27_0200_delivery_order on ${dialect.name}`, { skip: dialect.skip }, () => {
    let database: TestDatabase | undefined;
    after(() => database?.drop());

    test('numbers what exists in the order it was made, and queues the pending deliveries per URL', async () => {
      database = await dialect.create();
      const db = openDb(database.url);
      try {
        const migrator = new Migrator({ db: db.kysely, provider: await provider() });
        assert.equal((await migrator.migrateTo('2026_11_27_0100_browser_trust')).error, undefined);
        // Today's createMerchant writes api_keys.shown, which a later migration adds: the column is lent
        // for the call, so that the merchant is made as it was then.
        await db.kysely.schema.alterTable('api_keys').addColumn('shown', 'text').execute();
        const { merchant } = await createMerchant(
          db,
          {
            name: 'Old',
            environment: 'test',
            headlessApiEnabled: true,
            payoutCurrency: null,
            allowedOrigins: [],
          },
          Date.now(),
        );
        await db.kysely.schema.alterTable('api_keys').dropColumn('shown').execute();
        // Three events made at 3000, 1000 and 2000 (inserted out of that order), each delivered to two URLs.
        for (const [id, at] of [
          ['evt_c', 3000],
          ['evt_a', 1000],
          ['evt_b', 2000],
        ] as const) {
          await sql`insert into events (id, merchant_id, session_id, type, payload, created_at)
            values (${id}, ${merchant.id}, null, 'group.created', '{}', ${at})`.execute(db.kysely);
          for (const url of ['https://one.example/h', 'https://two.example/h']) {
            const state = url.startsWith('https://one') && id === 'evt_a' ? 'delivered' : 'pending';
            await sql`insert into deliveries (id, event_id, merchant_id, webhook_id, url, state, attempt_count,
                next_attempt_at, claim, claimed_until, created_at, updated_at)
              values (${`dlv_${id}_${url.slice(8, 11)}`}, ${id}, ${merchant.id}, null, ${url}, ${state}, 0,
                ${state === 'pending' ? at + 5 : null}, null, null, ${at}, ${at})`.execute(db.kysely);
          }
        }
        assert.ok((await migrateToLatest(db)).includes('2026_11_27_0200_delivery_order'));

        const events = await db.kysely.selectFrom('events').select(['id', 'seq']).orderBy('seq').execute();
        assert.deepEqual(
          events.map((e) => e.id),
          ['evt_a', 'evt_b', 'evt_c'],
        );
        const deliveries = await db.kysely.selectFrom('deliveries').select(['id']).orderBy('seq').execute();
        assert.deepEqual(
          deliveries.map((d) => d.id.slice(0, 9)),
          ['dlv_evt_a', 'dlv_evt_a', 'dlv_evt_b', 'dlv_evt_b', 'dlv_evt_c', 'dlv_evt_c'],
        );
        const urls = await db.kysely.selectFrom('delivery_urls').selectAll().orderBy('url').execute();
        assert.deepEqual(
          urls.map((u) => [u.url, Number(u.due_at), u.holder]),
          [
            ['https://one.example/h', 2005, null],
            ['https://two.example/h', 1005, null],
          ],
        );
        // A new event is numbered after them.
        await db.kysely.transaction().execute((trx) =>
          insertEvent(trx, {
            id: 'evt_new',
            merchantId: merchant.id,
            sessionId: null,
            type: 'group.created',
            payload: '{}',
            createdAt: 500,
          }),
        );
        const last = await db.kysely
          .selectFrom('events')
          .select('id')
          .orderBy('seq', 'desc')
          .executeTakeFirstOrThrow();
        assert.equal(last.id, 'evt_new');
      } finally {
        await db.close();
      }
    });
  });
}
