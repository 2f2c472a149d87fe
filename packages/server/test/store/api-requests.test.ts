// The API request log's rows (store/api-requests.ts), on SQLite and PostgreSQL: what is written reads back
// exactly (the batch statements: bound parameters on SQLite, one JSON parameter on PostgreSQL), and the
// housekeeping sweep deletes every row older than 7 days, however many and however many share a
// millisecond, merchant by merchant, keeping the newer rows; on SQLite a log write leaves the read cache
// as it was (no cache reads the log).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { API_REQUEST_RETENTION_MS, purgeOldApiRequests } from '../../src/flows/housekeeping.ts';
import { ids, sha256 } from '../../src/ids.ts';
import { type ApiRequestRecord, insertApiRequests, listApiRequests } from '../../src/store/api-requests.ts';
import { findActiveKeyByHash } from '../../src/store/merchants.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { manualClock } from '../helpers/clock.ts';
import { DIALECTS } from '../helpers/databases.ts';

const record = (
  merchantId: string,
  createdAt: number,
  o: Partial<ApiRequestRecord> = {},
): ApiRequestRecord => ({
  id: ids.request(),
  merchantId,
  method: 'POST',
  route: '/v1/sessions/:sessionId/cancel',
  status: 409,
  durationUs: 1234,
  keyPrefix: 'svc_sk_test_abcd',
  createdAt,
  ...o,
});

for (const dialect of DIALECTS) {
  describe(`API request log rows on ${dialect.name}`, { skip: dialect.skip }, () => {
    let t: TestApp;
    const clock = manualClock(Date.parse('2026-11-25T12:00:00.000Z'));
    before(async () => {
      t = await startTestApp(dialect, { clock });
    });
    after(() => t?.close());

    const count = async (merchantId: string) =>
      Number(
        (
          await t.deps.db.kysely
            .selectFrom('api_requests')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('merchant_id', '=', merchantId)
            .executeTakeFirstOrThrow()
        ).n,
      );

    test('rows read back as written, in batches of any size', async () => {
      const merchant = (await t.createMerchant({ name: 'Rows' })).merchant.id;
      const now = clock.now();
      // 1,000 rows: on SQLite, statements of 256, 256, 256, 128, 64, 32 and 8 rows.
      const rows = Array.from({ length: 1000 }, (_, i) =>
        record(merchant, now - i, {
          status: 200 + (i % 300),
          durationUs: i * 7,
          method: i % 2 ? 'GET' : 'POST',
        }),
      );
      // The longest a duration is kept as: 2^31 - 1 µs, about 36 minutes (the hook caps it there).
      rows.push(record(merchant, now + 1, { route: '/v1/quote\'s "route"', durationUs: 2 ** 31 - 1 }));
      await insertApiRequests(t.deps.db.kysely, t.deps.db.dialect, rows);
      await insertApiRequests(t.deps.db.kysely, t.deps.db.dialect, []);
      assert.equal(await count(merchant), 1001);
      const [newest] = await listApiRequests(t.deps.db.kysely, merchant, 1, { since: 0 });
      assert.deepEqual(newest, rows[1000]);
      const found = await listApiRequests(t.deps.db.kysely, merchant, 5, {
        since: 0,
        requestId: rows[517]?.id,
      });
      assert.deepEqual(found, [rows[517]]);
    });

    test('the sweep deletes every row older than 7 days, merchant by merchant, and keeps the rest', async () => {
      const a = (await t.createMerchant({ name: 'Old A' })).merchant.id;
      const b = (await t.createMerchant({ name: 'Old B' })).merchant.id;
      const now = clock.now();
      const cutoff = now - API_REQUEST_RETENTION_MS;
      // 12,000 old rows of A, 6,000 of them in one millisecond (more than a sweep batch of 5,000), 3 of B.
      const old = Array.from({ length: 12_000 }, (_, i) =>
        record(a, i < 6000 ? cutoff - 5000 : cutoff - 1 - (i % 4000)),
      );
      const kept = [record(a, cutoff), record(a, now), record(b, cutoff + 1)];
      await insertApiRequests(t.deps.db.kysely, t.deps.db.dialect, [
        ...old,
        ...kept,
        record(b, cutoff - 1),
        record(b, cutoff - 2),
        record(b, 0),
      ]);
      assert.ok((await purgeOldApiRequests(t.deps)) >= 12_003);
      assert.equal(await count(a), 2);
      assert.equal(await count(b), 1);
      const left = [
        ...(await listApiRequests(t.deps.db.kysely, a, 10, { since: 0 })),
        ...(await listApiRequests(t.deps.db.kysely, b, 10, { since: 0 })),
      ].map((r) => r.id);
      assert.deepEqual(left.sort(), kept.map((r) => r.id).sort());
      assert.equal(await purgeOldApiRequests(t.deps), 0, 'nothing left to delete');
    });

    if (dialect.name === 'sqlite') {
      test('a log write leaves the read cache as it was: an API key read again costs no query', async () => {
        const hash = sha256(t.merchant.secretKey);
        const read = () => findActiveKeyByHash(t.deps.db, hash, clock.now());
        assert.ok(await read());
        const before = t.deps.db.queryCount();
        await insertApiRequests(t.deps.db.kysely, 'sqlite', [record(t.merchant.merchant.id, clock.now())]);
        const written = t.deps.db.queryCount();
        assert.ok(await read());
        assert.equal(t.deps.db.queryCount(), written, 'the key came from the cache');
        assert.ok(written >= before);
      });
    }
  });
}
