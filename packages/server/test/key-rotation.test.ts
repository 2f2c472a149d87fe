// Rolling a merchant's credentials from the CLI (docs/operations.md#keys): `merchant keys roll
// --signing-secret | --webhook-secret | --publishable` issues a new one and the old one works on for the
// grace period (24 hours), to the millisecond, over HTTP. The server runs on a clock the test moves to the
// end of the grace period; the CLI rolls at the real time and says when the old one ends.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Cart, signCart } from '@group-checkout/node';
import { ROTATION_GRACE_MS, secretsInForce } from '../src/domain/rotation.ts';
import { findMerchantById } from '../src/store/merchants.ts';
import { PRODUCTION_STRIPE, startTestApp, TEST_SECRETS_KEY, type TestApp } from './helpers/app.ts';
import { assertOneLineError, cli, parseOnlyJson } from './helpers/cli.ts';
import { type ManualClock, manualClock } from './helpers/clock.ts';
import { DIALECTS, sqliteCase, type TestDatabase } from './helpers/databases.ts';
import { SESSION_ENV, sampleCart } from './helpers/sessions.ts';

for (const dialect of DIALECTS) {
  describe(`merchant keys roll with a grace period on ${dialect.name}`, { skip: dialect.skip }, () => {
    let database: TestDatabase;
    let t: TestApp;
    let clock: ManualClock;
    let env: Record<string, string>;
    before(async () => {
      database = await dialect.create();
      clock = manualClock(Date.now());
      t = await startTestApp(dialect, { database, clock, env: SESSION_ENV });
      env = { DATABASE_URL: database.url };
    });
    after(async () => {
      await t?.close();
      await database?.drop();
    });

    const newMerchant = async () =>
      parseOnlyJson(await cli(['merchant', 'create', '--name', 'Rolling Shop', '--json'], env));

    const roll = async (merchantId: string, flag: string) => {
      const rolledAt = Date.now();
      const rolled = parseOnlyJson(
        await cli(['merchant', 'keys', 'roll', '--merchant', merchantId, flag, '--json'], env),
      );
      const until = Date.parse(rolled.previous_valid_until as string);
      assert.ok(
        until >= rolledAt + ROTATION_GRACE_MS && until <= Date.now() + ROTATION_GRACE_MS,
        'about 24 hours on',
      );
      return { rolled, until };
    };

    /** POST /v1/sessions with the publishable key and a signature made with `secret`: the status. */
    const createSigned = async (publishableKey: string, secret: string, cart: Cart = sampleCart()) => {
      const res = await t.request('POST', '/v1/sessions', {
        key: publishableKey,
        headers: { origin: 'https://shop.example' },
        body: { cart, signature: signCart(cart, secret) },
      });
      return { status: res.status, code: res.body?.code as string | undefined, text: res.text };
    };

    /** Whether the publishable key authenticates (a session it cannot see is 404; a dead key 401). */
    const publishableWorks = async (key: string) => {
      const res = await t.request('GET', '/v1/sessions/gs_none', { key });
      assert.ok(res.status === 404 || res.status === 401, res.text);
      return res.status === 404;
    };

    test('--publishable: the old key authenticates until the grace period ends, then never', async () => {
      clock.set(Date.now());
      const m = await newMerchant();
      const oldKey = m.publishable_key as string;
      assert.equal(await publishableWorks(oldKey), true);
      const { rolled, until } = await roll(m.merchant_id as string, '--publishable');
      assert.deepEqual(Object.keys(rolled).sort(), [
        'merchant_id',
        'previous_valid_until',
        'publishable_key',
      ]);
      assert.match(rolled.publishable_key as string, /^svc_pk_test_/);
      assert.notEqual(rolled.publishable_key, oldKey);
      assert.equal(await publishableWorks(rolled.publishable_key as string), true);
      assert.equal(await publishableWorks(oldKey), true);
      clock.set(until - 1);
      // Twice: on SQLite the second answer comes from the read cache, which nothing has emptied since.
      assert.equal(await publishableWorks(oldKey), true);
      assert.equal(await publishableWorks(oldKey), true);
      clock.set(until);
      assert.equal(await publishableWorks(oldKey), false, 'ends at the moment, not when a cache clears');
      const dead = await t.request('GET', '/v1/sessions/gs_none', { key: oldKey });
      assert.equal(dead.body.code, 'invalid_api_key');
      assert.equal(await publishableWorks(rolled.publishable_key as string), true);
      // The secret key was not touched.
      assert.equal((await t.request('GET', '/v1/merchants/me', { key: m.secret_key })).status, 200);
    });

    test('--signing-secret: carts signed with the old secret open sessions until the grace period ends', async () => {
      clock.set(Date.now());
      const m = await newMerchant();
      const pk = m.publishable_key as string;
      const oldSecret = m.signing_secret as string;
      assert.equal((await createSigned(pk, oldSecret)).status, 200);
      const { rolled, until } = await roll(m.merchant_id as string, '--signing-secret');
      assert.deepEqual(Object.keys(rolled).sort(), ['merchant_id', 'previous_valid_until', 'signing_secret']);
      const newSecret = rolled.signing_secret as string;
      assert.match(newSecret, /^svc_sig_test_/);
      assert.notEqual(newSecret, oldSecret);
      assert.equal((await createSigned(pk, newSecret)).status, 200);
      assert.equal((await createSigned(pk, oldSecret)).status, 200);
      clock.set(until - 1);
      assert.equal((await createSigned(pk, oldSecret)).status, 200);
      clock.set(until);
      const late = await createSigned(pk, oldSecret);
      assert.equal(late.status, 400, late.text);
      assert.equal(late.code, 'invalid_signature');
      assert.equal((await createSigned(pk, newSecret)).status, 200);
    });

    test('--signing-secret twice within the grace period: the older secret ends at once', async () => {
      clock.set(Date.now());
      const m = await newMerchant();
      const pk = m.publishable_key as string;
      const first = await roll(m.merchant_id as string, '--signing-secret');
      const second = await roll(m.merchant_id as string, '--signing-secret');
      assert.equal((await createSigned(pk, m.signing_secret as string)).code, 'invalid_signature');
      assert.equal((await createSigned(pk, first.rolled.signing_secret as string)).status, 200);
      assert.equal((await createSigned(pk, second.rolled.signing_secret as string)).status, 200);
    });

    test('--webhook-secret: the old secret is kept, with its end, for deliveries to sign with both', async () => {
      const m = await newMerchant();
      const oldSecret = m.session_webhook_secret as string;
      const { rolled, until } = await roll(m.merchant_id as string, '--webhook-secret');
      assert.deepEqual(Object.keys(rolled).sort(), [
        'merchant_id',
        'previous_valid_until',
        'session_webhook_secret',
      ]);
      const newSecret = rolled.session_webhook_secret as string;
      assert.match(newSecret, /^whsec_[A-Za-z0-9+/]+=*$/);
      assert.notEqual(newSecret, oldSecret);
      const merchant = await findMerchantById(t.deps.db.kysely, t.deps.db.secrets, m.merchant_id as string);
      assert.ok(merchant);
      assert.equal(merchant.sessionWebhookSecret, newSecret);
      assert.deepEqual(merchant.previousSessionWebhookSecret, { secret: oldSecret, expiresAt: until });
      assert.deepEqual(secretsInForce(newSecret, merchant.previousSessionWebhookSecret, until - 1), [
        newSecret,
        oldSecret,
      ]);
      assert.deepEqual(secretsInForce(newSecret, merchant.previousSessionWebhookSecret, until), [newSecret]);
      // The signing secret and the keys were not touched.
      assert.equal(merchant.signingSecret, m.signing_secret);
      assert.equal(merchant.previousSigningSecret, null);
      assert.equal(await publishableWorks(m.publishable_key as string), true);
    });

    test('without a flag the secret key rolls as before: the old one ends at once', async () => {
      const m = await newMerchant();
      const rolled = parseOnlyJson(
        await cli(['merchant', 'keys', 'roll', '--merchant', m.merchant_id as string, '--json'], env),
      );
      assert.deepEqual(Object.keys(rolled).sort(), ['merchant_id', 'secret_key']);
      assert.equal((await t.request('GET', '/v1/merchants/me', { key: m.secret_key })).status, 401);
      assert.equal((await t.request('GET', '/v1/merchants/me', { key: rolled.secret_key })).status, 200);
    });
  });
}

describe('merchant keys roll in production', () => {
  let database: TestDatabase;
  let t: TestApp;
  before(async () => {
    database = await sqliteCase.create();
    t = await startTestApp(sqliteCase, {
      database,
      env: { ...SESSION_ENV, SERVICE_ENV: 'production', ...PRODUCTION_STRIPE },
    });
  });
  after(async () => {
    await t?.close();
    await database?.drop();
  });

  test('the previous secrets are stored encrypted too, and still work', async () => {
    const env = {
      DATABASE_URL: database.url,
      SERVICE_ENV: 'production',
      ...PRODUCTION_STRIPE,
      SECRETS_KEY: TEST_SECRETS_KEY,
    };
    const m = t.merchant;
    const id = m.merchant.id;
    for (const flag of ['--signing-secret', '--webhook-secret']) {
      const run = await cli(['merchant', 'keys', 'roll', '--merchant', id, flag], env);
      assert.equal(run.code, 0, run.stderr);
      assert.match(
        run.stdout,
        /^new (cart signing|session webhook) secret for svc_merch_\w+: \S+\nthe old one .* until \d{4}-/,
      );
    }
    const raw = await t.deps.db.kysely
      .selectFrom('merchants')
      .select(['previous_signing_secret', 'previous_session_webhook_secret'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    assert.match(raw.previous_signing_secret ?? '', /^enc:v1:/);
    assert.match(raw.previous_session_webhook_secret ?? '', /^enc:v1:/);
    assert.ok(!raw.previous_signing_secret?.includes(m.merchant.signingSecret));
    assert.ok(!raw.previous_session_webhook_secret?.includes(m.merchant.sessionWebhookSecret));
    const cart = sampleCart();
    const res = await t.request('POST', '/v1/sessions', {
      key: m.publishableKey,
      headers: { origin: 'https://shop.example' },
      body: { cart, signature: signCart(cart, m.merchant.signingSecret) },
    });
    assert.equal(res.status, 200, res.text);
  });

  test('one flag at a time', async () => {
    const run = await cli(
      ['merchant', 'keys', 'roll', '--merchant', t.merchant.merchant.id, '--publishable', '--signing-secret'],
      {
        DATABASE_URL: database.url,
        SERVICE_ENV: 'production',
        ...PRODUCTION_STRIPE,
        SECRETS_KEY: TEST_SECRETS_KEY,
      },
    );
    assertOneLineError(run, /takes one of --signing-secret, --webhook-secret, --publishable/);
  });
});
