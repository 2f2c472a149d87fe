// SQLite rows are read as arrays and made objects by a function built per statement (store/db.ts,
// docs/decisions.md "Rows are read as arrays"): what a query answers must be what better-sqlite3 itself
// answers, on a real file, in a transaction or not, for every kind of value and column name.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { type Db, openDb } from '../../src/store/db.ts';

describe('SQLite rows', () => {
  let dir: string;
  let file: string;
  let db: Db;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gc-rows-'));
    file = join(dir, 'rows.db');
    db = openDb(`sqlite:${file}`);
    await sql`create table things (id text primary key, n integer, price real, data blob, note text)`.execute(
      db.kysely,
    );
    await sql`insert into things values ('a', 1, 1.5, x'00ff', null), ('b', 9007199254740991, -2.25, null, 'two words')`.execute(
      db.kysely,
    );
  });
  after(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** What better-sqlite3 answers for `text` on its own connection to the same file. */
  const driverRows = (text: string) => {
    const direct = new SQLite(file, { readonly: true });
    try {
      return direct.prepare(text).all();
    } finally {
      direct.close();
    }
  };

  const queries = [
    'select * from things order by id',
    'select id, n as count, note from things where n > 5',
    // A name given twice: the last value stands, as in the driver's objects.
    'select id as x, note as x from things order by id',
    'select count(*) as total, sum(n) as sum from things',
    "select id from things where id = 'none'",
  ];

  for (const text of queries) {
    test(`${text}: the same rows as the driver's, outside and inside a transaction`, async () => {
      const expected = driverRows(text);
      const outside = await sql.raw(text).execute(db.kysely);
      assert.deepStrictEqual(outside.rows, expected);
      const inside = await db.kysely.transaction().execute((trx) => sql.raw(text).execute(trx));
      assert.deepStrictEqual(inside.rows, expected);
      // Every row an object with its own keys in the statement's order.
      for (const row of outside.rows as Record<string, unknown>[])
        assert.deepEqual(Object.keys(row), Object.keys(expected[0] as object));
    });
  }

  test('a column named __proto__ is read as the driver reads it', async () => {
    const text = 'select id as "__proto__", n from things order by id';
    const rows = (await sql.raw(text).execute(db.kysely)).rows;
    assert.deepStrictEqual(rows, driverRows(text));
    assert.equal(rows.length, 2);
  });

  test('a write with returning answers its rows; a write without answers how many it changed', async () => {
    const returned = await sql`update things set note = 'changed' where id = 'a' returning id, note`.execute(
      db.kysely,
    );
    assert.deepStrictEqual(returned.rows, [{ id: 'a', note: 'changed' }]);
    const changed = await sql`update things set note = 'again' where n > 0`.execute(db.kysely);
    assert.equal(changed.numAffectedRows, 2n);
  });
});
