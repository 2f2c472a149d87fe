// What the SQLite read cache costs, counted in queries through the Db handle that owns it: a hit costs
// none, a write in between costs one fresh load, a read that overlaps a write is not kept, and what it
// hands out is frozen. On PostgreSQL there is no cache: every read goes to the database.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sha256 } from '../../src/ids.ts';
import { findActiveKeyByHash } from '../../src/store/merchants.ts';
import { ReadCache } from '../../src/store/read-cache.ts';
import { closePendingSession, findSessionWithMembers } from '../../src/store/sessions.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { postgresCase, sqliteCase } from '../helpers/databases.ts';
import { createSession } from '../helpers/sessions.ts';

/** How many queries `read` sent through the app's Db handle. */
async function queriesOf<T>(t: TestApp, read: () => Promise<T>): Promise<{ value: T; queries: number }> {
  const before = t.deps.db.queryCount();
  const value = await read();
  return { value, queries: t.deps.db.queryCount() - before };
}

describe('read cache on sqlite, counted in queries', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(sqliteCase);
  });
  after(() => t?.close());

  test('a session read again costs no query; after a write it is read once more', async () => {
    const { session_id: id } = await createSession(t);
    const { session_id: other } = await createSession(t);
    const read = () => findSessionWithMembers(t.deps.db, t.merchant.merchant.id, id);
    const first = await queriesOf(t, read);
    assert.equal(first.queries, 2, 'the session and its members');
    const hit = await queriesOf(t, read);
    assert.equal(hit.queries, 0);
    assert.equal(hit.value, first.value, 'the same object');
    // Any write clears the cache, whatever it touched: here another session is cancelled.
    assert.ok(await closePendingSession(t.deps.db.kysely, other, 'cancelled', Date.now()));
    const afterWrite = await queriesOf(t, read);
    assert.equal(afterWrite.queries, 2);
    assert.equal((await queriesOf(t, read)).queries, 0);
  });

  test('an API key found once is found again without a query', async () => {
    const hash = sha256(t.merchant.secretKey);
    assert.equal((await queriesOf(t, () => findActiveKeyByHash(t.deps.db, hash, Date.now()))).queries, 1);
    const hit = await queriesOf(t, () => findActiveKeyByHash(t.deps.db, hash, Date.now()));
    assert.equal(hit.queries, 0);
    assert.equal(hit.value?.merchant.id, t.merchant.merchant.id);
  });

  test('an unknown key costs a query every time (misses are not kept)', async () => {
    const hash = sha256('svc_sk_test_0000000000000000unknown');
    assert.equal((await queriesOf(t, () => findActiveKeyByHash(t.deps.db, hash, Date.now()))).queries, 1);
    assert.equal((await queriesOf(t, () => findActiveKeyByHash(t.deps.db, hash, Date.now()))).queries, 1);
  });

  test('cached values are frozen: no caller can change what the next one reads', async () => {
    const { session_id: id } = await createSession(t);
    const found = await findSessionWithMembers(t.deps.db, t.merchant.merchant.id, id);
    assert.ok(found);
    assert.ok(Object.isFrozen(found.session.embedOrigins));
    assert.throws(() => (found.session.embedOrigins as string[]).push('https://evil.example'), TypeError);
    const key = await findActiveKeyByHash(t.deps.db, sha256(t.merchant.secretKey), Date.now());
    assert.ok(key);
    assert.throws(() => (key.merchant.allowedOrigins as string[]).push('https://evil.example'), TypeError);
  });
});

describe('a read that overlaps a write is not kept', () => {
  test('the write counter moving while the value loads keeps it out of the cache', async () => {
    const clock = { count: 0, writes: () => clock.count, dataVersion: () => 1 };
    const cache = new ReadCache<{ v: number }>(clock);
    let loads = 0;
    const load = async () => {
      loads++;
      if (loads === 1) clock.count++; // a write runs while the first load is in flight
      return { v: loads };
    };
    assert.deepEqual(await cache.get('k', load), { v: 1 });
    assert.deepEqual(await cache.get('k', load), { v: 2 }, 'the overlapped value was not kept');
    assert.deepEqual(await cache.get('k', load), { v: 2 }, 'a clean load is kept');
    assert.equal(loads, 2);
  });

  test('another process committing (data_version) clears the cache', async () => {
    const clock = { version: 1, writes: () => 0, dataVersion: () => clock.version };
    const cache = new ReadCache<{ v: number }>(clock);
    let loads = 0;
    const load = async () => ({ v: ++loads });
    await cache.get('k', load);
    await cache.get('k', load);
    assert.equal(loads, 1);
    clock.version++;
    await cache.get('k', load);
    assert.equal(loads, 2);
  });
});

describe('no read cache on postgres', { skip: postgresCase.skip }, () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(postgresCase);
  });
  after(() => t?.close());

  test('every read of a session goes to the database', async () => {
    const { session_id: id } = await createSession(t);
    const read = () => findSessionWithMembers(t.deps.db, t.merchant.merchant.id, id);
    assert.equal((await queriesOf(t, read)).queries, 2);
    assert.equal((await queriesOf(t, read)).queries, 2);
    assert.equal(t.deps.db.readCache('anything'), undefined);
  });
});
