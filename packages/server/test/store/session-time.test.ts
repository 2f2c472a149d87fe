// A create's created_at on PostgreSQL (docs/decisions.md#session-list-paging): one update of the merchant's
// row locks it and answers the next free millisecond. Creates that wait for the lock must each see the
// time the one before committed, with no retry: that is what the update gives and a read would not.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { takeSessionCreatedAt } from '../../src/store/merchants.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { postgresCase } from '../helpers/databases.ts';
import { createSession } from '../helpers/sessions.ts';

describe("a create's created_at on PostgreSQL", { skip: postgresCase.skip }, () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(postgresCase);
  });
  after(() => t?.close());

  test('creates waiting on one merchant each take the millisecond after the one before', async () => {
    const merchantId = t.merchant.merchant.id;
    const now = Date.now() + 86_400_000;
    const taken = await Promise.all(
      Array.from({ length: 8 }, () =>
        t.deps.db.kysely.transaction().execute(async (trx) => {
          const at = await takeSessionCreatedAt(trx, merchantId, now);
          // Held a moment, as a create holds it over its inserts: the others wait for the commit.
          await new Promise((resolve) => setTimeout(resolve, 10));
          return at;
        }),
      ),
    );
    assert.deepEqual(
      taken.sort((a, b) => a - b),
      Array.from({ length: 8 }, (_, i) => now + i),
    );
  });

  test('a merchant whose row has no time yet follows its newest session; a rollback takes nothing', async () => {
    const merchantId = t.merchant.merchant.id;
    const created = await createSession(t, { via: 'secret' });
    const row = await t.deps.db.kysely
      .selectFrom('sessions')
      .select('created_at')
      .where('id', '=', created.session_id)
      .executeTakeFirstOrThrow();
    const newest = Number(row.created_at);
    // As before the migration's first create: no time on the row.
    await t.deps.db.kysely
      .updateTable('merchants')
      .set({ last_session_at: null })
      .where('id', '=', merchantId)
      .execute();
    const rolledBack = t.deps.db.kysely.transaction().execute(async (trx) => {
      assert.equal(await takeSessionCreatedAt(trx, merchantId, newest - 60_000), newest + 1);
      throw new Error('rolled back');
    });
    await assert.rejects(rolledBack, /rolled back/);
    // The rolled back take left nothing behind: the next is the same millisecond.
    assert.equal(
      await t.deps.db.kysely
        .transaction()
        .execute((trx) => takeSessionCreatedAt(trx, merchantId, newest - 60_000)),
      newest + 1,
    );
  });
});
