// What the read caches hear of a write (store/read-cache.ts): the table, and the session it names when it
// names exactly one — read off builder queries, statements built once (with the call's values) and raw
// statements. Anything it cannot tell must come out as "no session" (or "no table"), which drops caches.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { prepared } from '../../src/store/prepared.ts';
import { QueryCounter, type Write } from '../../src/store/read-cache.ts';
import type { Database } from '../../src/store/schema.ts';

function harness() {
  const heard: Write[] = [];
  const counter = new QueryCounter((write) => heard.push(write));
  const database = new SQLite(':memory:');
  database.exec(`create table members (id text, session_id text, name text);
    create table sessions (id text, status text); create table mails (id text, holder text);
    create table attempts (id text, session_id text)`);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }), plugins: [counter] });
  /** What `run` was heard as (each write is told twice: as it is sent, and once it has run). */
  const heardOf = async (run: () => Promise<unknown>) => {
    heard.length = 0;
    await run();
    const [sent, ran, ...more] = heard;
    assert.deepEqual(sent, ran, 'told twice, the same');
    assert.deepEqual(more, []);
    return sent;
  };
  return { db, heardOf, heard };
}

test('builder writes name their session, or none when they cannot be sure of one', async () => {
  const { db, heardOf } = harness();
  const members = db.updateTable('members');
  assert.deepEqual(
    await heardOf(() =>
      db.updateTable('sessions').set({ status: 'funded' }).where('id', '=', 'ses_1').execute(),
    ),
    { table: 'sessions', sessions: ['ses_1'] },
  );
  assert.deepEqual(
    await heardOf(() =>
      members.set({ name: 'A' }).where('session_id', '=', 'ses_2').where('id', '=', 'mem_1').execute(),
    ),
    { table: 'members', sessions: ['ses_2'] },
  );
  assert.deepEqual(
    await heardOf(() => members.set({ name: 'A' }).where('members.session_id', '=', 'ses_3').execute()),
    { table: 'members', sessions: ['ses_3'] },
    'qualified by its own table',
  );
  assert.deepEqual(await heardOf(() => members.set({ name: 'A' }).where('id', '=', 'mem_1').execute()), {
    table: 'members',
    sessions: undefined,
  });
  assert.deepEqual(
    await heardOf(() =>
      members
        .set({ name: 'A' })
        .where((eb) => eb.or([eb('session_id', '=', 'a'), eb('id', '=', 'b')]))
        .execute(),
    ),
    { table: 'members', sessions: undefined },
    'an OR names no session',
  );
  assert.deepEqual(
    await heardOf(() => members.set({ session_id: 'ses_9' }).where('session_id', '=', 'ses_4').execute()),
    { table: 'members', sessions: undefined },
    'moving rows to another session names none',
  );
  assert.deepEqual(
    await heardOf(() =>
      db
        .insertInto('members')
        .values([
          { id: 'm1', session_id: 'ses_5', name: 'A' },
          { id: 'm2', session_id: 'ses_6', name: 'B' },
        ] as never)
        .execute(),
    ),
    { table: 'members', sessions: ['ses_5', 'ses_6'] },
  );
  assert.deepEqual(
    await heardOf(() => db.deleteFrom('attempts').where('session_id', '=', 'ses_7').execute()),
    { table: 'attempts', sessions: ['ses_7'] },
  );
});

test("a statement built once is heard with the call's values", async () => {
  const { db, heardOf } = harness();
  const rename = prepared((d, p: { sessionId: string; name: string }) =>
    d.updateTable('members').set({ name: p.name }).where('session_id', '=', p.sessionId),
  );
  assert.deepEqual(await heardOf(() => rename.execute(db, { sessionId: 'ses_a', name: 'X' })), {
    table: 'members',
    sessions: ['ses_a'],
  });
  assert.deepEqual(await heardOf(() => rename.execute(db, { sessionId: 'ses_b', name: 'Y' })), {
    table: 'members',
    sessions: ['ses_b'],
  });
});

test('raw statements: a SELECT is no write; a write names its table when it plainly starts with it', async () => {
  const { db, heardOf, heard } = harness();
  heard.length = 0;
  await sql`select ${1} as one`.execute(db);
  assert.deepEqual(heard, [], 'a raw SELECT is a read');
  assert.deepEqual(await heardOf(() => sql`update mails set holder = ${'h'}`.execute(db)), {
    table: 'mails',
    sessions: undefined,
  });
  assert.deepEqual(await heardOf(() => sql`update or ignore members set name = ${'n'}`.execute(db)), {
    table: undefined,
    sessions: undefined,
  });
  assert.deepEqual(await heardOf(() => sql`insert into main.members (id) values (${'x'})`.execute(db)), {
    table: undefined,
    sessions: undefined,
  });
});
