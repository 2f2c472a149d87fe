// The SQLite database holds merchants' secrets: a new file is readable by its owner only (0600), in a
// directory only its owner may enter (0700), and the -wal and -shm files SQLite makes beside it inherit
// the file's mode (docs/operations.md#database). The usual umask (022) is set, as a shell would have it,
// so that the test shows what the code asks for rather than what a strict umask hides.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { createMerchant } from '../../src/flows/merchants.ts';
import { openDb } from '../../src/store/db.ts';
import { migrateToLatest } from '../../src/store/migrations/index.ts';

let root: string;
let umask: number;
before(() => {
  root = mkdtempSync(join(tmpdir(), 'gc-modes-'));
  umask = process.umask(0o022);
});
after(() => {
  process.umask(umask);
  rmSync(root, { recursive: true, force: true });
});

const modeOf = (path: string) => statSync(path).mode & 0o777;

test('a new database is 0600 in a new 0700 directory, and so are its -wal and -shm files', async () => {
  const dir = join(root, 'data', 'nested');
  const file = join(dir, 'gc.db');
  const db = openDb(`sqlite:${file}`);
  try {
    await migrateToLatest(db);
    await createMerchant(
      db,
      {
        name: 'Modes',
        environment: 'test',
        headlessApiEnabled: false,
        payoutCurrency: null,
        allowedOrigins: [],
      },
      Date.now(),
    );
    assert.equal(modeOf(file).toString(8), '600');
    assert.equal(modeOf(`${file}-wal`).toString(8), '600');
    assert.equal(modeOf(`${file}-shm`).toString(8), '600');
    assert.equal(modeOf(dir).toString(8), '700');
    assert.equal(modeOf(join(root, 'data')).toString(8), '700');
  } finally {
    await db.close();
  }
});

test('an existing file and directory keep their modes, and the data in the file is kept', async () => {
  const dir = join(root, 'existing');
  mkdirSync(dir, { mode: 0o750 });
  chmodSync(dir, 0o750);
  const file = join(dir, 'gc.db');
  const first = openDb(`sqlite:${file}`);
  await migrateToLatest(first);
  await first.close();
  chmodSync(file, 0o640);
  const again = openDb(`sqlite:${file}`);
  try {
    assert.deepEqual(await migrateToLatest(again), [], 'the same database, already migrated');
    assert.equal(modeOf(file).toString(8), '640');
    assert.equal(modeOf(dir).toString(8), '750');
  } finally {
    await again.close();
  }
});

test('an empty file made beforehand is opened as the database', async () => {
  const file = join(root, 'empty.db');
  writeFileSync(file, '', { mode: 0o600 });
  const db = openDb(`sqlite:${file}`);
  try {
    assert.ok((await migrateToLatest(db)).length > 0);
  } finally {
    await db.close();
  }
});
