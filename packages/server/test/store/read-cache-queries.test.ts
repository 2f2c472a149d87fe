// What the SQLite read cache costs, counted in queries through the Db handle that owns it: a hit costs
// none, another session's write costs none, a write to the session (or one that names no session) costs
// one fresh load that sees it, a read that overlaps a write is not kept, and what it hands out is
// frozen. On PostgreSQL there is no cache: every read goes to the database.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sha256 } from '../../src/ids.ts';
import { findActiveKeyByHash, findMerchantName } from '../../src/store/merchants.ts';
import { ReadCache } from '../../src/store/read-cache.ts';
import { closePendingSession, findSessionWithMembers } from '../../src/store/sessions.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { postgresCase, sqliteCase } from '../helpers/databases.ts';
import { equalGroup, payOk } from '../helpers/payments.ts';
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

  test("a session read again costs no query; another session's write leaves it; its own write is seen", async () => {
    const { session_id: id } = await createSession(t);
    const { session_id: other } = await createSession(t);
    const read = () => findSessionWithMembers(t.deps.db, t.merchant.merchant.id, id);
    const first = await queriesOf(t, read);
    assert.equal(first.queries, 2, 'the session and its members');
    const hit = await queriesOf(t, read);
    assert.equal(hit.queries, 0);
    assert.equal(hit.value, first.value, 'the same object');
    assert.ok(await closePendingSession(t.deps.db.kysely, other, 'cancelled', Date.now()));
    assert.equal((await queriesOf(t, read)).queries, 0, "another session's write costs no query");
    assert.ok(await closePendingSession(t.deps.db.kysely, id, 'cancelled', Date.now()));
    const afterWrite = await queriesOf(t, read);
    assert.equal(afterWrite.queries, 2, "the session's own write costs one fresh load");
    assert.equal(afterWrite.value?.session.status, 'cancelled');
    assert.equal((await queriesOf(t, read)).queries, 0);
  });

  test("through the API: another group's payment costs the poll nothing; its own payment is seen at once", async () => {
    const polled = await equalGroup(t, ['Ada', 'Ben']);
    const other = await equalGroup(t, ['Cy', 'Dee']);
    const poll = () =>
      t.request('GET', `/v1/sessions/${polled.created.session_id}`, { key: t.merchant.secretKey });
    assert.equal((await poll()).status, 200);
    const warm = await queriesOf(t, poll);
    assert.equal(warm.queries, 0, 'the key and the session come from the caches');
    await payOk(t, other.shares[0].shareId);
    await payOk(t, other.shares[1].shareId); // funds the other session: its events, ledger, transfer
    const untouched = await queriesOf(t, poll);
    assert.equal(untouched.queries, 0, "another session's payments cost the poll no query");
    assert.equal(untouched.value.body.group.paid_amount, 0);
    await payOk(t, polled.shares[0].shareId);
    const seen = await queriesOf(t, poll);
    assert.ok(seen.queries > 0, 'its own payment is read again');
    assert.equal(seen.value.body.group.paid_amount, polled.shares[0].amount);
    assert.equal(seen.value.body.group.members[0].status, 'paid');
  });

  test('a write that names no session clears every cached session', async () => {
    const { session_id: id } = await createSession(t);
    const read = () => findSessionWithMembers(t.deps.db, t.merchant.merchant.id, id);
    await read();
    assert.equal((await queriesOf(t, read)).queries, 0);
    // By member id alone: the cache cannot tell whose session it is, so it keeps none.
    const organizer = (await read())?.members[0]?.id as string;
    await t.deps.db.kysely
      .updateTable('members')
      .set({ name: 'Renamed' })
      .where('id', '=', organizer)
      .execute();
    const after = await queriesOf(t, read);
    assert.equal(after.queries, 2);
    assert.equal(after.value?.members[0]?.name, 'Renamed');
  });

  test("the API key and the merchant's name stay cached while sessions are written", async () => {
    const hash = sha256(t.merchant.secretKey);
    await findActiveKeyByHash(t.deps.db, hash, Date.now());
    await createSession(t);
    assert.equal((await queriesOf(t, () => findActiveKeyByHash(t.deps.db, hash, Date.now()))).queries, 0);
    const id = t.merchant.merchant.id;
    await findMerchantName(t.deps.db, id);
    await createSession(t);
    const name = await queriesOf(t, () => findMerchantName(t.deps.db, id));
    assert.equal(name.queries, 0);
    assert.equal(name.value, t.merchant.merchant.name);
  });

  test('an API key found once is found again without a query', async () => {
    const hash = sha256(t.merchant.secretKey);
    await findActiveKeyByHash(t.deps.db, hash, Date.now());
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
  const bySession = { tables: ['members'], bySession: true };

  test("a write to the session while its value loads keeps it out of the cache; another session's does not", async () => {
    const cache = new ReadCache<{ v: number }>(bySession, () => 1);
    let loads = 0;
    const load = (during?: string) => async () => {
      loads++;
      if (during) cache.written({ table: 'members', sessions: [during] }); // a write runs meanwhile
      return { v: loads };
    };
    assert.deepEqual(await cache.get('k', load('ses_a'), 'ses_a'), { v: 1 });
    assert.deepEqual(await cache.get('k', load(), 'ses_a'), { v: 2 }, 'the overlapped value was not kept');
    assert.deepEqual(await cache.get('k', load(), 'ses_a'), { v: 2 }, 'a clean load is kept');
    assert.deepEqual(await cache.get('j', load('ses_b'), 'ses_c'), { v: 3 });
    assert.deepEqual(
      await cache.get('j', load(), 'ses_c'),
      { v: 3 },
      "another session's write let it be kept",
    );
    assert.equal(loads, 3);
  });

  test('a write whose session or table cannot be told clears everything; other tables clear nothing', async () => {
    const cache = new ReadCache<{ v: number }>(bySession, () => 1);
    let loads = 0;
    const load = async () => ({ v: ++loads });
    await cache.get('k', load, 'ses_a');
    cache.written({ table: 'ledger_lines', sessions: undefined });
    await cache.get('k', load, 'ses_a');
    assert.equal(loads, 1, 'a table the cache does not read from');
    cache.written({ table: 'members', sessions: undefined });
    await cache.get('k', load, 'ses_a');
    assert.equal(loads, 2, 'a members write naming no session');
    cache.written({ table: undefined, sessions: undefined });
    await cache.get('k', load, 'ses_a');
    assert.equal(loads, 3, 'a raw statement');
  });

  test('another process committing (data_version) clears the cache', async () => {
    const clock = { version: 1 };
    const cache = new ReadCache<{ v: number }>({ tables: ['sessions'] }, () => clock.version);
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
    assert.equal(t.deps.db.readCache('anything', { tables: ['sessions'] }), undefined);
  });
});
