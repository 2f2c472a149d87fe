// Secrets at rest (docs/operations.md#secrets-at-rest): in production the cart signing secret, the session
// webhook secret and every webhook endpoint secret are stored sealed with SECRETS_KEY; the API and the CLI
// still see them as they are. A key that does not open what is stored refuses start-up, and
// `group-checkout secrets rotate` reseals everything with a new key so that the old one can be dropped.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { signCart } from '@group-checkout/node';
import { type Db, openDb } from '../src/store/db.ts';
import { secretsKeyId } from '../src/store/secrets.ts';
import { PRODUCTION_STRIPE, startTestApp, TEST_SECRETS_KEY, type TestApp } from './helpers/app.ts';
import { assertOneLineError, cli, parseOnlyJson, type Run } from './helpers/cli.ts';
import { DIALECTS, type DialectCase, sqliteCase, type TestDatabase } from './helpers/databases.ts';
import { createSession, SESSION_ENV } from './helpers/sessions.ts';

const KEY_A = TEST_SECRETS_KEY;
const KEY_B = randomBytes(32).toString('hex');
const idOf = (hex: string) => secretsKeyId(Buffer.from(hex, 'hex'));
const ROOMY = { ...SESSION_ENV, RATE_LIMIT_WEBHOOKS_WRITE: '10000' };

interface RawSecrets {
  merchants: { id: string; signing_secret: string; session_webhook_secret: string }[];
  endpoints: { id: string; secret: string }[];
}

/** The secret columns as stored, read past the store's mapping. */
async function rawSecrets(url: string): Promise<RawSecrets> {
  const db: Db = openDb(url);
  try {
    return {
      merchants: await db.kysely
        .selectFrom('merchants')
        .select(['id', 'signing_secret', 'session_webhook_secret'])
        .execute(),
      endpoints: await db.kysely.selectFrom('webhook_endpoints').select(['id', 'secret']).execute(),
    };
  } finally {
    await db.close();
  }
}

const storedValues = (raw: RawSecrets) => [
  ...raw.merchants.flatMap((m) => [m.signing_secret, m.session_webhook_secret]),
  ...raw.endpoints.map((e) => e.secret),
];

/** Every stored secret is sealed with the key `hex`. */
function assertAllSealedWith(raw: RawSecrets, hex: string) {
  const values = storedValues(raw);
  assert.ok(values.length > 0);
  for (const value of values) assert.ok(value.startsWith(`enc:v1:${idOf(hex)}:`), value);
}

async function registerEndpoint(t: TestApp, secretKey: string): Promise<string> {
  const res = await t.request('POST', '/v1/webhooks', {
    key: secretKey,
    body: { url: 'https://93.184.216.34/hooks', events: ['*'] },
  });
  assert.equal(res.status, 200, res.text);
  assert.match(res.body.secret, /^whsec_/);
  return res.body.secret;
}

/** startTestApp on `database`, expected to refuse to start with a ConfigError matching `message`. */
async function assertRefusesToStart(
  dialect: DialectCase,
  database: TestDatabase,
  env: Record<string, string>,
  message: RegExp,
) {
  await assert.rejects(
    startTestApp(dialect, { database, env }),
    (error: Error) => error.constructor.name === 'ConfigError' && message.test(error.message),
  );
}

for (const dialect of DIALECTS) {
  describe(`secrets at rest on ${dialect.name}`, { skip: dialect.skip }, () => {
    describe('in production', () => {
      let database: TestDatabase;
      let t: TestApp;
      before(async () => {
        database = await dialect.create();
        t = await startTestApp(dialect, {
          database,
          env: { ...ROOMY, SERVICE_ENV: 'production', ...PRODUCTION_STRIPE },
        });
      });
      after(async () => {
        await t?.close();
        await database?.drop();
      });

      test('the stored columns hold no secret, and the API works with the secrets as they were given', async () => {
        const m = await t.createMerchant({ name: 'Sealed Shop' });
        const whsec = await registerEndpoint(t, m.secretKey);
        const raw = await rawSecrets(database.url);
        const row = raw.merchants.find((r) => r.id === m.merchant.id);
        assert.ok(row);
        assert.ok(!row.signing_secret.includes(m.merchant.signingSecret));
        assert.ok(!row.session_webhook_secret.includes(m.merchant.sessionWebhookSecret));
        const endpoint = raw.endpoints.find((e) => !e.secret.includes(whsec));
        assert.ok(endpoint && raw.endpoints.every((e) => !e.secret.includes(whsec)));
        assertAllSealedWith(raw, KEY_A);
        if (dialect.name === 'sqlite') {
          const file = database.url.slice('sqlite:'.length);
          const bytes = Buffer.concat([readFileSync(file), readFileSync(`${file}-wal`)]).toString('latin1');
          for (const secret of [m.merchant.signingSecret, m.merchant.sessionWebhookSecret, whsec]) {
            assert.ok(!bytes.includes(secret), 'nowhere in the database files');
          }
        }
        // A cart signed with the signing secret opens a session: the store opened the sealed secret.
        const created = await createSession(t, { merchant: m });
        assert.match(created.session_id, /^gs_/);
        const me = await t.request('GET', '/v1/merchants/me', { key: m.secretKey });
        assert.equal(me.status, 200, me.text);
      });

      test('the CLI makes merchants with sealed secrets that the server uses', async () => {
        const env = {
          DATABASE_URL: database.url,
          SERVICE_ENV: 'production',
          ...PRODUCTION_STRIPE,
          SECRETS_KEY: KEY_A,
        };
        const created = parseOnlyJson(
          // Production takes browser sessions only from a registered origin.
          await cli(
            [
              'merchant',
              'create',
              '--name',
              'CLI Sealed',
              '--allowed-origin',
              'https://shop.example',
              '--json',
            ],
            env,
          ),
        );
        assert.match(created.signing_secret as string, /^svc_sig_live_/);
        const row = (await rawSecrets(database.url)).merchants.find((r) => r.id === created.merchant_id);
        assert.ok(row);
        assert.ok(row.signing_secret.startsWith(`enc:v1:${idOf(KEY_A)}:`));
        assert.ok(!row.signing_secret.includes(created.signing_secret as string));
        const cart = {
          total: 500,
          currency: 'usd',
          items: [{ id: 'a', name: 'A', quantity: 1, unit_price: 500 }],
        };
        const res = await t.request('POST', '/v1/sessions', {
          key: created.publishable_key,
          headers: { origin: 'https://shop.example' },
          body: { cart, signature: signCart(cart, created.signing_secret as string) },
        });
        assert.equal(res.status, 200, res.text);
      });

      test('a wrong SECRETS_KEY refuses start-up, of the server and of the CLI', async () => {
        const wrong = {
          DATABASE_URL: database.url,
          SERVICE_ENV: 'production',
          ...PRODUCTION_STRIPE,
          SECRETS_KEY: KEY_B,
          PORT: '0',
        };
        const message = new RegExp(
          `SECRETS_KEY does not open the stored secrets: \\d+ are sealed with key ${idOf(KEY_A)}`,
        );
        const [serve, create] = await Promise.all([
          cli(['serve'], wrong),
          cli(['merchant', 'create', '--name', 'X'], wrong),
        ]);
        assertOneLineError(serve, message);
        assertOneLineError(create, message);
        await assertRefusesToStart(
          dialect,
          database,
          { SERVICE_ENV: 'production', ...PRODUCTION_STRIPE, SECRETS_KEY: KEY_B },
          message,
        );
        // A sandbox without any key cannot read them either.
        await assertRefusesToStart(
          dialect,
          database,
          {},
          /SECRETS_KEY is not set, but \d+ stored secrets are sealed/,
        );
      });
    });

    describe('in the sandbox', () => {
      test('without SECRETS_KEY secrets are stored as they are; with it, sealed', async () => {
        const plain = await startTestApp(dialect, { env: ROOMY });
        try {
          const whsec = await registerEndpoint(plain, plain.merchant.secretKey);
          const raw = await rawSecrets(plain.deps.config.databaseUrl);
          assert.deepEqual(raw.merchants, [
            {
              id: plain.merchant.merchant.id,
              signing_secret: plain.merchant.merchant.signingSecret,
              session_webhook_secret: plain.merchant.merchant.sessionWebhookSecret,
            },
          ]);
          assert.equal(raw.endpoints[0]?.secret, whsec);
        } finally {
          await plain.close();
        }
        const sealed = await startTestApp(dialect, { env: { ...ROOMY, SECRETS_KEY: KEY_B } });
        try {
          await registerEndpoint(sealed, sealed.merchant.secretKey);
          assertAllSealedWith(await rawSecrets(sealed.deps.config.databaseUrl), KEY_B);
          await createSession(sealed);
        } finally {
          await sealed.close();
        }
      });
    });

    describe('rotation', () => {
      test('secrets rotate reseals everything with the new key; then the old key can be dropped', async () => {
        const database = await dialect.create();
        try {
          const before = await startTestApp(dialect, {
            database,
            env: { ...ROOMY, SERVICE_ENV: 'production', ...PRODUCTION_STRIPE },
          });
          const m = await before.createMerchant({ name: 'Rotating Shop' });
          const whsec = await registerEndpoint(before, m.secretKey);
          await before.close();
          assertAllSealedWith(await rawSecrets(database.url), KEY_A);

          const prod = { DATABASE_URL: database.url, SERVICE_ENV: 'production', ...PRODUCTION_STRIPE };
          // Only the new key: refused until the secrets are resealed.
          assertOneLineError(
            await cli(['secrets', 'rotate'], { ...prod, SECRETS_KEY: KEY_B }),
            /does not open/,
          );
          const both = { ...prod, SECRETS_KEY: KEY_B, SECRETS_KEY_PREVIOUS: KEY_A };
          const rotated = parseOnlyJson(await cli(['secrets', 'rotate', '--json'], both));
          // Two merchants (startTestApp makes one) with two secrets each, and the endpoint's.
          assert.deepEqual(rotated, { resealed: 5, remaining: 0, key_id: idOf(KEY_B) });
          const raw = await rawSecrets(database.url);
          assertAllSealedWith(raw, KEY_B);
          assert.ok(
            storedValues(raw).every((v) => !v.includes(whsec) && !v.includes(m.merchant.signingSecret)),
          );
          const again = await cli(['secrets', 'rotate'], both);
          assert.equal(again.code, 0, again.stderr);
          assert.match(
            again.stdout,
            /^resealed 0 stored secrets .*\nevery stored secret is sealed with SECRETS_KEY/,
          );

          // The old key dropped: the server starts and the secrets are what they were.
          const after = await startTestApp(dialect, {
            database,
            env: { ...ROOMY, SERVICE_ENV: 'production', ...PRODUCTION_STRIPE, SECRETS_KEY: KEY_B },
          });
          try {
            await createSession(after, { merchant: m });
            assert.equal((await after.request('GET', '/v1/merchants/me', { key: m.secretKey })).status, 200);
          } finally {
            await after.close();
          }
          // And the old key alone no longer opens anything.
          await assertRefusesToStart(
            dialect,
            database,
            { SERVICE_ENV: 'production', ...PRODUCTION_STRIPE, SECRETS_KEY: KEY_A },
            /does not open/,
          );
        } finally {
          await database.drop();
        }
      });

      test('secrets stored before a key was set are sealed by secrets rotate', async () => {
        const database = await dialect.create();
        try {
          const sandbox = await startTestApp(dialect, { database, env: ROOMY });
          const m = sandbox.merchant;
          await sandbox.close();
          assert.equal(
            (await rawSecrets(database.url)).merchants[0]?.signing_secret,
            m.merchant.signingSecret,
          );

          const withKey = { DATABASE_URL: database.url, SECRETS_KEY: KEY_A };
          // Read as they are meanwhile, with a warning at start.
          const warned = await startTestApp(dialect, { database, env: { ...ROOMY, SECRETS_KEY: KEY_A } });
          try {
            assert.ok(warned.logLines.some((l) => l.includes('stored secrets not encrypted yet')));
            await createSession(warned, { merchant: m });
          } finally {
            await warned.close();
          }
          const rotated = parseOnlyJson(await cli(['secrets', 'rotate', '--json'], withKey));
          assert.equal(rotated.remaining, 0);
          assert.ok(Number(rotated.resealed) >= 2);
          assertAllSealedWith(await rawSecrets(database.url), KEY_A);
        } finally {
          await database.drop();
        }
      });
    });
  });
}

describe('SECRETS_KEY on the command line', () => {
  test('production without it, or with a weak one, and rotation without it are one line and exit 2', async () => {
    // Refused before the database is opened: one run covers both dialects.
    const database = await sqliteCase.create();
    try {
      const base = { DATABASE_URL: database.url };
      const cases: [string[], Record<string, string>, RegExp][] = [
        [
          ['serve'],
          { SERVICE_ENV: 'production', ...PRODUCTION_STRIPE },
          /SECRETS_KEY is required when SERVICE_ENV=production/,
        ],
        [['merchant', 'create', '--name', 'X'], { SECRETS_KEY: 'a'.repeat(64) }, /SECRETS_KEY is too weak/],
        [['secrets', 'rotate'], {}, /secrets rotate needs SECRETS_KEY/],
      ];
      const runs = await Promise.all(cases.map(([args, env]) => cli(args, { ...base, ...env })));
      cases.forEach(([, , message], i) => {
        const run = runs[i] as Run;
        assertOneLineError(run, message);
        assert.equal(run.code, 2);
      });
    } finally {
      await database.drop();
    }
  });
});
