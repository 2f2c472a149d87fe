// The in-process key cache on SQLite: exact for this process's writes, another process's writes are seen
// within the data_version period (100 ms), and a key in a roll's grace period ends at its moment.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ROTATION_GRACE_MS } from '../../src/domain/rotation.ts';
import {
  type CreatedMerchant,
  createMerchant,
  rollPublishableKey,
  rollSecretKey,
} from '../../src/flows/merchants.ts';
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
  assert.ok(await findActiveKeyByHash(server, sha256(key), Date.now()), 'first read');
  assert.ok(await findActiveKeyByHash(server, sha256(key), Date.now()), 'cached read');
  const rolled = await rollSecretKey(server, m.merchant.id, Date.now());
  assert.ok(rolled);
  assert.equal(await findActiveKeyByHash(server, sha256(key), Date.now()), undefined);
  assert.equal(
    (await findActiveKeyByHash(server, sha256(rolled.secretKey), Date.now()))?.merchant.id,
    m.merchant.id,
  );
  m = { ...m, secretKey: rolled.secretKey };
});

test('a key rolled by another process stops working within 100 ms', async () => {
  const key = m.secretKey;
  assert.ok(await findActiveKeyByHash(server, sha256(key), Date.now()));
  const rolled = await rollSecretKey(other, m.merchant.id, Date.now());
  assert.ok(rolled);
  await sleep(150);
  assert.equal(await findActiveKeyByHash(server, sha256(key), Date.now()), undefined);
  assert.ok(await findActiveKeyByHash(server, sha256(rolled.secretKey), Date.now()));
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
    (await findActiveKeyByHash(server, sha256(created.secretKey), Date.now()))?.merchant.id,
    created.merchant.id,
  );
});

test('a publishable key in its grace period works until that moment exactly, cached or not', async () => {
  const created = await createMerchant(
    server,
    {
      name: 'Grace',
      environment: 'test',
      headlessApiEnabled: false,
      payoutCurrency: null,
      allowedOrigins: [],
    },
    Date.now(),
  );
  const old = sha256(created.publishableKey);
  const rolledAt = Date.now();
  const rolled = await rollPublishableKey(server, created.merchant.id, rolledAt);
  assert.ok(rolled);
  const end = rolled.previousValidUntil;
  assert.equal(end, rolledAt + ROTATION_GRACE_MS);
  assert.equal((await findActiveKeyByHash(server, old, rolledAt))?.expiresAt, end, 'read');
  const before = server.queryCount();
  assert.ok(await findActiveKeyByHash(server, old, end - 1), 'cached, a millisecond before the end');
  // Nothing was written since: the cache still holds the key, and must not answer it from the end on.
  assert.equal(await findActiveKeyByHash(server, old, end), undefined);
  assert.equal(await findActiveKeyByHash(server, old, end + 1), undefined);
  assert.equal(server.queryCount(), before, 'all three from the cache');
  // A fresh read (another connection, nothing cached there) agrees.
  assert.ok(await findActiveKeyByHash(other, old, end - 1));
  assert.equal(await findActiveKeyByHash(other, old, end), undefined);
  assert.ok(await findActiveKeyByHash(server, sha256(rolled.value), end + 1), 'the new key has no end');
});
