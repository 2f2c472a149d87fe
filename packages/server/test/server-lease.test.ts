// One server per SQLite file (docs/operations.md#one-server-per-sqlite-file): a second server started on a
// file that a running server uses is refused with a sentence saying why, and the first keeps serving; a
// server that was killed leaves no lease behind that stops the next from starting.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { crashFixture, type CrashFixture, freePort, ServerProcess } from './helpers/server-process.ts';
import { sqliteCase } from './helpers/databases.ts';

let f: CrashFixture;
let second: ServerProcess;
before(async () => {
  f = await crashFixture(sqliteCase, {});
  const port = await freePort();
  second = new ServerProcess({ ...f.server.env, PORT: String(port) }, `http://127.0.0.1:${port}`);
});
after(async () => {
  await second?.stop();
  await f?.close();
});

test('a second server on the same SQLite file is refused, and the first keeps serving', async () => {
  await f.server.start();
  await assert.rejects(second.start(), /server exited at start/);
  assert.match(second.output, /is in use by another server \(process \d+ on /);
  assert.match(second.output, /One server process runs on a SQLite file/);
  assert.equal(second.child?.exitCode, 2);
  assert.equal((await fetch(`${f.server.baseUrl}/healthz`)).status, 200);
});

test('a killed server’s lease does not hold back the next server on the file', async () => {
  await f.server.stop();
  await second.start();
  assert.equal((await fetch(`${second.baseUrl}/healthz`)).status, 200);
});
