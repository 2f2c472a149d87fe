// The in-process key cache on SQLite: exact for this process's writes, another process's writes are seen
// within the data_version period (100 ms), and a key in a roll's grace period ends at its moment.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import { ROTATION_GRACE_MS } from '../../src/domain/rotation.ts';
import {
  type CreatedMerchant,
  createMerchant,
  rollPublishableKey,
  rollSecretKey,
} from '../../src/flows/merchants.ts';
import { ids, KEY_PREFIX_LENGTH, sha256 } from '../../src/ids.ts';
import { type Db, openDb } from '../../src/store/db.ts';
import { findActiveKeyByHash } from '../../src/store/merchants.ts';
import { migrateToLatest } from '../../src/store/migrations/index.ts';
import type { Database } from '../../src/store/schema.ts';

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

test('an unknown key is never cached: a key looked up before it existed is found once it exists', async () => {
  // Inside the data_version period this process does not see another process's commits, and the cache
  // answers from memory: the one time a cached miss would show. Each attempt checks afterwards that it
  // ran inside that period: a key the other connection revoked meanwhile is still answered from the
  // cache. Only then does finding the new key prove that the earlier miss was not kept.
  for (let attempt = 1; attempt <= 10; attempt++) {
    const known = ids.secretKey('test');
    await insertKey(other.kysely, m.merchant.id, known);
    const unknown = ids.secretKey('test');
    // Let the period run out, so that the first lookup below starts a new one.
    await sleep(110);
    assert.ok(await findActiveKeyByHash(server, sha256(known), Date.now()), 'the known key is found');
    assert.equal(await findActiveKeyByHash(server, sha256(unknown), Date.now()), undefined, 'not there yet');
    await other.kysely.transaction().execute(async (trx) => {
      await trx
        .updateTable('api_keys')
        .set({ revoked_at: Date.now() })
        .where('key_hash', '=', sha256(known))
        .execute();
      await insertKey(trx, m.merchant.id, unknown);
    });
    const found = await findActiveKeyByHash(server, sha256(unknown), Date.now());
    // Still served from the cache, so the lookup just before was too; else this attempt shows nothing.
    const fromCache = await findActiveKeyByHash(server, sha256(known), Date.now());
    if (fromCache === undefined) continue;
    assert.equal(
      found?.merchant.id,
      m.merchant.id,
      'a key unknown a moment ago is found as soon as it exists',
    );
    return;
  }
  assert.fail('no attempt looked the keys up twice within the 100 ms data_version period');
});

/** An API key row written straight into the database, as another process would. */
async function insertKey(db: Kysely<Database>, merchantId: string, key: string) {
  await db
    .insertInto('api_keys')
    .values({
      id: ids.apiKey(),
      merchant_id: merchantId,
      kind: 'secret',
      environment: 'test',
      prefix: key.slice(0, KEY_PREFIX_LENGTH),
      key_hash: sha256(key),
      created_at: Date.now(),
      revoked_at: null,
    })
    .execute();
}
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
