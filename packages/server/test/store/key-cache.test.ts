// The in-process key cache on SQLite: exact for this process's writes, and another process's writes
// are seen within the data_version period (100 ms).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type CreatedMerchant, createMerchant, rollSecretKey } from '../../src/flows/merchants.ts';
import { sha256 } from '../../src/ids.ts';
import { type Db, openDb } from '../../src/store/db.ts';
import { findActiveKeyByHash } from '../../src/store/merchants.ts';
import { migrateToLatest } from '../../src/store/migrations/index.ts';

let dir: string;
let server: Db;
let other: Db;
let m: CreatedMerchant;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gc-keycache-'));
  server = openDb(`sqlite:${join(dir, 'k.db')}`);
  await migrateToLatest(server);
  // A second connection to the same file stands for another process (the CLI).
  other = openDb(`sqlite:${join(dir, 'k.db')}`);
  m = await createMerchant(
    server,
    {
      name: 'Cache',
      environment: 'test',
      headlessApiEnabled: false,
      payoutCurrency: null,
      allowedOrigins: [],
    },
    Date.now(),
  );
});

after(async () => {
  await server.close();
  await other.close();
  rmSync(dir, { recursive: true, force: true });
});

test('a key rolled by this process stops working at once', async () => {
  const key = m.secretKey;
  assert.ok(await findActiveKeyByHash(server, sha256(key)), 'first read');
  assert.ok(await findActiveKeyByHash(server, sha256(key)), 'cached read');
  const rolled = await rollSecretKey(server, m.merchant.id, Date.now());
  assert.ok(rolled);
  assert.equal(await findActiveKeyByHash(server, sha256(key)), undefined);
  assert.equal((await findActiveKeyByHash(server, sha256(rolled.secretKey)))?.merchant.id, m.merchant.id);
  m = { ...m, secretKey: rolled.secretKey };
});

test('a key rolled by another process stops working within 100 ms', async () => {
  const key = m.secretKey;
  assert.ok(await findActiveKeyByHash(server, sha256(key)));
  const rolled = await rollSecretKey(other, m.merchant.id, Date.now());
  assert.ok(rolled);
  await sleep(150);
  assert.equal(await findActiveKeyByHash(server, sha256(key)), undefined);
  assert.ok(await findActiveKeyByHash(server, sha256(rolled.secretKey)));
});

test('an unknown key is never cached: a key created a moment later works at once', async () => {
  const created = await createMerchant(
    other,
    {
      name: 'Later',
      environment: 'test',
      headlessApiEnabled: false,
      payoutCurrency: null,
      allowedOrigins: [],
    },
    Date.now(),
  );
  assert.equal(
    (await findActiveKeyByHash(server, sha256(created.secretKey)))?.merchant.id,
    created.merchant.id,
  );
});
