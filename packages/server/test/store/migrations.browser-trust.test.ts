// The browser-trust migration on a database from before it: origins stored as sent are brought to their
// canonical spelling, and a value that is not a web origin ("*", a policy directive) is dropped.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type Migration, Migrator } from 'kysely';
import { createMerchant } from '../../src/flows/merchants.ts';
import { openDb } from '../../src/store/db.ts';
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
  describe(`migration 2026_11_27_0100_browser_trust on ${dialect.name}`, { skip: dialect.skip }, () => {
    let database: TestDatabase | undefined;
    after(() => database?.drop());

    test('stored origins become canonical; anything else is dropped', async () => {
      database = await dialect.create();
      const db = openDb(database.url);
      try {
        const migrator = new Migrator({ db: db.kysely, provider: await provider() });
        const before = await migrator.migrateTo('2026_11_26_0000_real_money');
        assert.equal(before.error, undefined);
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
        const stored = ['*', 'https://Shop.example', 'https://x; report-uri https://evil.example/r', 'null'];
        await db.kysely
          .updateTable('merchants')
          .set({ allowed_origins: JSON.stringify(stored) })
          .where('id', '=', merchant.id)
          .execute();
        assert.ok((await migrateToLatest(db)).includes('2026_11_27_0100_browser_trust'));
        const row = await db.kysely
          .selectFrom('merchants')
          .select('allowed_origins')
          .where('id', '=', merchant.id)
          .executeTakeFirstOrThrow();
        assert.deepEqual(JSON.parse(row.allowed_origins), ['https://shop.example']);
      } finally {
        await db.close();
      }
    });
  });
}
