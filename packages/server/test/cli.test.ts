// The group-checkout CLI, run as an operator runs it: a child process on a real database. Its answer goes
// to stdout (one JSON object with --json), an error is one line on stderr and a non-zero exit.
import assert from 'node:assert/strict';
import { type AddressInfo, createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { signCart } from '@group-checkout/node';
import { PRODUCTION_STRIPE, startTestApp, TEST_SECRETS_KEY, type TestApp } from './helpers/app.ts';
import { assertOneLineError, cli, parseOnlyJson, type Run } from './helpers/cli.ts';
import { DIALECTS, sqliteCase, type TestDatabase } from './helpers/databases.ts';
import { assertError } from './helpers/errors.ts';
import { sampleCart } from './helpers/sessions.ts';

for (const dialect of DIALECTS) {
  describe(`group-checkout CLI on ${dialect.name}`, { skip: dialect.skip }, () => {
    let database: TestDatabase;
    let t: TestApp;
    let env: Record<string, string>;
    before(async () => {
      database = await dialect.create();
      env = { DATABASE_URL: database.url };
    });
    after(async () => {
      await t?.close();
      await database?.drop();
    });

    /** The server on the same database, opened once the CLI has made the schema. */
    const app = async () => {
      t ??= await startTestApp(dialect, { database });
      return t;
    };

    test('migrate applies the migrations, and a second run has nothing to do', async () => {
      const first = await cli(['migrate'], env);
      assert.equal(first.code, 0, first.stderr);
      assert.match(first.stdout, /^applied: \d{4}_\d\d_\d\d_\d{4}_\w+/);
      assert.equal(first.stderr, '');
      const second = await cli(['migrate'], env);
      assert.equal(second.code, 0, second.stderr);
      assert.equal(second.stdout, 'database is up to date\n');
    });

    test('merchant create --json prints exactly one JSON object with the merchant and its secrets', async () => {
      const created = parseOnlyJson(await cli(['merchant', 'create', '--name', 'CLI Shop', '--json'], env));
      assert.deepEqual(Object.keys(created).sort(), [
        'environment',
        'merchant_id',
        'publishable_key',
        'secret_key',
        'session_webhook_secret',
        'signing_secret',
      ]);
      assert.match(created.merchant_id as string, /^svc_merch_[0-9A-Za-z]+$/);
      assert.match(created.publishable_key as string, /^svc_pk_test_[0-9A-Za-z]+$/);
      assert.match(created.secret_key as string, /^svc_sk_test_[0-9A-Za-z]+$/);
      assert.match(created.signing_secret as string, /^svc_sig_test_[0-9A-Za-z]+$/);
      assert.match(created.session_webhook_secret as string, /^whsec_[A-Za-z0-9+/]+=*$/);
      assert.equal(created.environment, 'sandbox');

      const server = await app();
      const me = await server.request('GET', '/v1/merchants/me', { key: created.secret_key });
      assert.equal(me.status, 200, me.text);
      assert.equal(me.body.id, created.merchant_id);
      assert.equal(me.body.name, 'CLI Shop');
      assert.equal(me.body.headless_api_enabled, false);
      assert.deepEqual(me.body.payout_currency, { mode: 'checkout', currency: null });
      assert.deepEqual(me.body.allowed_origins, []);
    });

    test('--headless, --payout-currency and --allowed-origin are reflected in the profile', async () => {
      const created = parseOnlyJson(
        await cli(
          [
            'merchant',
            'create',
            '--name',
            'Euro Shop',
            '--headless',
            '--payout-currency',
            'EUR',
            '--allowed-origin',
            'https://shop.example',
            '--allowed-origin',
            'https://www.shop.example/checkout',
            '--json',
          ],
          env,
        ),
      );
      const server = await app();
      const me = await server.request('GET', '/v1/merchants/me', { key: created.secret_key });
      assert.equal(me.status, 200, me.text);
      assert.equal(me.body.name, 'Euro Shop');
      assert.equal(me.body.headless_api_enabled, true);
      assert.deepEqual(me.body.payout_currency, { mode: 'preferred', currency: 'eur' });
      assert.deepEqual(me.body.allowed_origins, ['https://shop.example', 'https://www.shop.example']);
    });

    test('without --json the answer is for a person, and names the secret key once', async () => {
      const run = await cli(['merchant', 'create', '--name', 'Plain Shop'], env);
      assert.equal(run.code, 0, run.stderr);
      assert.throws(() => JSON.parse(run.stdout));
      const key = /svc_sk_test_[0-9A-Za-z]+/.exec(run.stdout)?.[0];
      assert.ok(key);
      const server = await app();
      assert.equal((await server.request('GET', '/v1/merchants/me', { key })).status, 200);
    });

    test('merchant keys roll: the old secret key stops working, the new one works', async () => {
      const created = parseOnlyJson(await cli(['merchant', 'create', '--name', 'Rolling', '--json'], env));
      const server = await app();
      assert.equal(
        (await server.request('GET', '/v1/merchants/me', { key: created.secret_key })).status,
        200,
      );
      const rolled = parseOnlyJson(
        await cli(['merchant', 'keys', 'roll', '--merchant', created.merchant_id as string, '--json'], env),
      );
      assert.deepEqual(Object.keys(rolled).sort(), ['merchant_id', 'secret_key']);
      assert.equal(rolled.merchant_id, created.merchant_id);
      assert.match(rolled.secret_key as string, /^svc_sk_test_/);
      assert.notEqual(rolled.secret_key, created.secret_key);
      const old = await server.request('GET', '/v1/merchants/me', { key: created.secret_key });
      assertError(old, 401, 'invalid_api_key');
      const fresh = await server.request('GET', '/v1/merchants/me', { key: rolled.secret_key });
      assert.equal(fresh.status, 200);
      assert.equal(fresh.body.id, created.merchant_id);
      // The publishable key is untouched.
      const pk = await server.request('GET', '/v1/sessions/gs_none', { key: created.publishable_key });
      assertError(pk, 404, 'session_not_found');
    });

    test('SERVICE_ENV=production makes live keys', async () => {
      // Its own database: production seals the secrets with SECRETS_KEY, which the sandbox suite does not set.
      const live = await dialect.create();
      try {
        const created = parseOnlyJson(
          await cli(['merchant', 'create', '--name', 'Live Shop', '--json'], {
            DATABASE_URL: live.url,
            SERVICE_ENV: 'production',
            ...PRODUCTION_STRIPE,
            SECRETS_KEY: TEST_SECRETS_KEY,
          }),
        );
        assert.equal(created.environment, 'production');
        assert.match(created.secret_key as string, /^svc_sk_live_/);
        assert.match(created.publishable_key as string, /^svc_pk_live_/);
        assert.match(created.signing_secret as string, /^svc_sig_live_/);
        // A sandbox server refuses them.
        const server = await startTestApp(dialect, {
          database: live,
          env: { SECRETS_KEY: TEST_SECRETS_KEY },
        });
        try {
          const res = await server.request('GET', '/v1/merchants/me', { key: created.secret_key });
          assertError(res, 403, 'key_environment_mismatch');
        } finally {
          await server.close();
        }
      } finally {
        await live.drop();
      }
    });

    test('an unknown merchant is one line on stderr and a non-zero exit', async () => {
      const run = await cli(['merchant', 'keys', 'roll', '--merchant', 'svc_merch_doesnotexist'], env);
      assertOneLineError(run, /no merchant svc_merch_doesnotexist/);
      const update = ['merchant', 'update', '--merchant', 'svc_merch_doesnotexist'];
      const updated = await cli([...update, '--processor-account', 'acct_1NoSuchMerchant0'], env);
      assertOneLineError(updated, /no merchant svc_merch_doesnotexist/);
    });

    test('merchant update --processor-account connects the merchant to its Stripe account', async () => {
      const created = parseOnlyJson(await cli(['merchant', 'create', '--name', 'Connected', '--json'], env));
      const server = await app();
      const before = await server.request('GET', '/v1/merchants/me', { key: created.secret_key });
      assert.equal(before.body.processor_connected, false);

      const merchant = ['merchant', 'update', '--merchant', created.merchant_id as string];
      const set = parseOnlyJson(
        await cli([...merchant, '--processor-account', 'acct_1Nv0FGQ9RKHgCVdK', '--json'], env),
      );
      assert.deepEqual(set, {
        merchant_id: created.merchant_id,
        processor_account_id: 'acct_1Nv0FGQ9RKHgCVdK',
      });
      const after = await server.request('GET', '/v1/merchants/me', { key: created.secret_key });
      assert.equal(after.status, 200, after.text);
      assert.equal(after.body.processor_connected, true);

      const plain = await cli([...merchant, '--processor-account', 'acct_1OtherAccount00'], env);
      assert.equal(plain.code, 0, plain.stderr);
      assert.equal(plain.stdout, `processor account for ${created.merchant_id}: acct_1OtherAccount00\n`);
      const other = parseOnlyJson(await cli(['merchant', 'create', '--name', 'Unconnected', '--json'], env));
      const untouched = await server.request('GET', '/v1/merchants/me', { key: other.secret_key });
      assert.equal(untouched.body.processor_connected, false, 'only the merchant named is changed');
    });

    test('merchant update --allowed-origin registers origins the running server takes at once; merchant origins lists them', async () => {
      const created = parseOnlyJson(await cli(['merchant', 'create', '--name', 'Origins', '--json'], env));
      const id = created.merchant_id as string;
      const server = await app();
      const cart = sampleCart();
      const createFrom = (origin: string) =>
        server.request('POST', '/v1/sessions', {
          key: created.publishable_key,
          headers: { origin },
          body: { cart, signature: signCart(cart, created.signing_secret as string) },
        });
      // None registered: the sandbox takes any web origin.
      assert.equal((await createFrom('https://elsewhere.example')).status, 200);

      const added = parseOnlyJson(
        await cli(
          [
            'merchant',
            'update',
            '--merchant',
            id,
            // A page's address is taken as its origin; case and a unicode host are made canonical.
            '--allowed-origin',
            'https://Shop.example/checkout?step=1',
            '--allowed-origin',
            'https://bücher.example',
            '--allowed-origin',
            'http://localhost:4100',
            '--json',
          ],
          env,
        ),
      );
      const three = ['https://shop.example', 'https://xn--bcher-kva.example', 'http://localhost:4100'];
      assert.deepEqual(added, { merchant_id: id, allowed_origins: three });
      assert.deepEqual(parseOnlyJson(await cli(['merchant', 'origins', '--merchant', id, '--json'], env)), {
        merchant_id: id,
        allowed_origins: three,
      });
      assert.equal((await createFrom('https://shop.example')).status, 200);
      assertError(await createFrom('https://elsewhere.example'), 403, 'origin_not_allowed');

      const removed = await cli(
        ['merchant', 'update', '--merchant', id, '--remove-allowed-origin', 'https://shop.example/'],
        env,
      );
      assert.equal(removed.code, 0, removed.stderr);
      assert.equal(
        removed.stdout,
        `allowed origins for ${id}: https://xn--bcher-kva.example http://localhost:4100\n`,
      );
      assertError(await createFrom('https://shop.example'), 403, 'origin_not_allowed');
      const listed = await cli(['merchant', 'origins', '--merchant', id], env);
      assert.equal(
        listed.stdout,
        `allowed origins for ${id}:\n  https://xn--bcher-kva.example\n  http://localhost:4100\n`,
      );
      // An origin that is not registered is named, as the dashboard names it, and nothing changes: not
      // even the one beside it that is registered.
      assertOneLineError(
        await cli(
          [
            'merchant',
            'update',
            '--merchant',
            id,
            '--remove-allowed-origin',
            'http://localhost:4100',
            '--remove-allowed-origin',
            'https://nothere.example',
          ],
          env,
        ),
        /https:\/\/nothere\.example is not registered for \S+, so nothing was changed; registered: https:\/\/xn--bcher-kva\.example http:\/\/localhost:4100/,
      );
      const me = await server.request('GET', '/v1/merchants/me', { key: created.secret_key });
      assert.deepEqual(me.body.allowed_origins, ['https://xn--bcher-kva.example', 'http://localhost:4100']);
      assertOneLineError(
        await cli(['merchant', 'origins', '--merchant', 'svc_merch_doesnotexist'], env),
        /no merchant svc_merch_doesnotexist/,
      );
    });
  });
}

describe('group-checkout serve where it cannot listen', () => {
  test('a PORT in use, or a HOST that is no address, is one line naming the setting, exit 2', async () => {
    const database = await sqliteCase.create();
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as AddressInfo).port;
    const env = { DATABASE_URL: database.url, DEMO_SHOP: '0', LOG_LEVEL: 'warn' };
    try {
      const taken = await cli(['serve'], { ...env, PORT: String(port) });
      assert.equal(taken.code, 2, taken.stderr);
      assert.equal(
        taken.stderr,
        `group-checkout: PORT ${port} is already in use on 127.0.0.1: stop what listens there, or set PORT to another port\n`,
      );
      const nowhere = await cli(['serve'], { ...env, PORT: '0', HOST: 'not_a_host.invalid' });
      assert.equal(nowhere.code, 2, nowhere.stderr);
      assert.match(
        nowhere.stderr,
        /^group-checkout: HOST not_a_host\.invalid does not resolve to an address: [^\n]+\n$/,
      );
    } finally {
      busy.close();
      await database.drop();
    }
  });
});

describe('group-checkout CLI errors', () => {
  test('usage errors print one line to stderr and exit non-zero', async () => {
    // Checked before the database is opened, so one run (on SQLite) covers both dialects.
    const database = await sqliteCase.create();
    const env = { DATABASE_URL: database.url };
    try {
      const cases: [string[], RegExp][] = [
        [['merchant', 'create'], /--name/],
        [['merchant', 'create', '--name', '   '], /--name/],
        [['merchant', 'create', '--name'], /--name/],
        [['merchant', 'create', '--name', 'Camp\r\nBcc: x@evil.example'], /--name.*control characters/],
        [['merchant', 'create', '--name', 'Camp \u202eylppuS'], /--name.*bidirectional overrides/],
        [['merchant', 'create', '--name', 'X', '--payout-currency', 'xyz'], /--payout-currency.*xyz/],
        [['merchant', 'create', '--name', 'X', '--payout-currency', 'euro'], /--payout-currency/],
        [['merchant', 'create', '--name', 'X', '--allowed-origin', 'not a url'], /--allowed-origin/],
        [['merchant', 'create', '--name', 'X', '--allowed-origin', 'ftp://shop.example'], /--allowed-origin/],
        [['merchant', 'create', '--name', 'X', '--allowed-origin', '*'], /--allowed-origin/],
        [
          [
            'merchant',
            'create',
            '--name',
            'X',
            '--allowed-origin',
            'https://x; report-uri https://evil.example/r',
          ],
          /--allowed-origin/,
        ],
        [['merchant', 'create', '--name', 'X', '--allowed-origin', 'http://shop.example'], /https/],
        [['merchant', 'update', '--merchant', 'm', '--allowed-origin', '*'], /--allowed-origin/],
        [['merchant', 'create', '--name', 'X', '--bogus'], /bogus/],
        [['merchant', 'keys', 'roll'], /--merchant/],
        [['merchant', 'keys', 'roll', '--merchant', 'm', '--webhook-secret', '--publishable'], /one of/],
        [['merchant', 'keys', 'roll', '--merchant', 'm', '--secret'], /secret/],
        [['merchant', 'update', '--processor-account', 'acct_1Nv0FGQ9RKHgCVdK'], /--merchant/],
        [['merchant', 'update', '--merchant', 'm'], /--processor-account/],
        [['merchant', 'update', '--merchant', 'm', '--processor-account', 'ca_1Nv0FGQ9RKHgCVdK'], /acct_/],
        [['merchant', 'update', '--merchant', 'm', '--processor-account', 'acct_'], /acct_/],
        [['merchant', 'update', '--merchant', 'm', '--processor-account', 'acct_1Nv0'], /acct_/],
        [
          ['merchant', 'update', '--merchant', 'm', '--processor-account', `acct_${'1'.repeat(300)}`],
          /acct_/,
        ],
        [['merchant', 'update', '--merchant', 'm', '--processor-account', 'acct_1Nv0 FGQ9RKHgCVdK'], /acct_/],
        [
          ['merchant', 'update', '--merchant', 'm', '--processor-account', 'acct_1Nv0\nFGQ9RKHgCVdK'],
          /acct_/,
        ],
        [['frobnicate'], /unknown command "frobnicate"/],
        [['merchant', 'delete', '--name', 'X'], /unknown command/],
        [[], /no command/],
      ];
      const runs = await Promise.all(cases.map(([args]) => cli(args, env)));
      cases.forEach(([args, message], i) => {
        assert.doesNotThrow(
          () => assertOneLineError(runs[i] as Run, message),
          `group-checkout ${args.join(' ')}`,
        );
      });
    } finally {
      await database.drop();
    }
  });

  test('a bad DATABASE_URL or SERVICE_ENV is one line on stderr and a non-zero exit', async () => {
    const cases: [Record<string, string>, string[], RegExp][] = [
      [{ DATABASE_URL: 'mysql://root@localhost/shop' }, ['migrate'], /DATABASE_URL/],
      [{ DATABASE_URL: 'postgres://user:hunter2@[bad' }, ['migrate'], /DATABASE_URL/],
      [{ DATABASE_URL: 'sqlite:/tmp', SERVICE_ENV: 'staging' }, ['migrate'], /SERVICE_ENV/],
      [{ DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' }, ['migrate'], /ECONNREFUSED|connect/],
      [
        { DATABASE_URL: 'sqlite:/etc/hostname/sub/gc.db' },
        ['merchant', 'create', '--name', 'X'],
        /failed.*ENOTDIR/,
      ],
    ];
    const runs = await Promise.all(cases.map(([env, args]) => cli(args, env)));
    cases.forEach(([, , message], i) => {
      const run = runs[i] as Run;
      assertOneLineError(run, message);
      assert.ok(!run.stderr.includes('hunter2'), 'a password in the URL is not printed');
    });
  });

  test('--help prints the usage and exits 0', async () => {
    const run = await cli(['--help'], {});
    assert.equal(run.code, 0);
    assert.match(run.stdout, /merchant create --name NAME/);
    assert.match(
      run.stdout,
      /merchant keys roll --merchant ID \[--signing-secret \| --webhook-secret \| --publishable\]/,
    );
    assert.match(
      run.stdout,
      /merchant update --merchant ID \[--processor-account acct_…\] \[--allowed-origin ORIGIN\]… \[--remove-allowed-origin ORIGIN\]… \[--json\]/,
    );
    assert.match(run.stdout, /merchant origins --merchant ID \[--json\]/);
    assert.match(run.stdout, /secrets rotate/);
  });

  test('an SQLite file is created where DATABASE_URL says', async () => {
    const database = await sqliteCase.create();
    try {
      const run = await cli(['migrate'], { DATABASE_URL: database.url });
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /^applied: /);
    } finally {
      await database.drop();
    }
  });
});

describe('production fails closed at start (docs/operations.md#going-to-production)', () => {
  test('serve without Stripe keys, or on http:// public URLs, refuses with one line and exit 2', async () => {
    // Refused before the database is opened: one run covers both dialects.
    const database = await sqliteCase.create();
    try {
      const base = {
        DATABASE_URL: database.url,
        SERVICE_ENV: 'production',
        SECRETS_KEY: TEST_SECRETS_KEY,
        PORT: '0',
      };
      const cases: [Record<string, string>, RegExp][] = [
        [base, /STRIPE_SECRET_KEY is required when SERVICE_ENV=production/],
        [
          { ...base, STRIPE_SECRET_KEY: PRODUCTION_STRIPE.STRIPE_SECRET_KEY },
          /STRIPE_WEBHOOK_SECRET is required/,
        ],
        [
          { ...base, ...PRODUCTION_STRIPE, PUBLIC_PAY_URL: 'http://pay.example.com' },
          /PUBLIC_PAY_URL must be https:\/\/ when SERVICE_ENV=production/,
        ],
      ];
      const runs = await Promise.all(cases.map(([env]) => cli(['serve'], env)));
      runs.forEach((run, i) => {
        assertOneLineError(run, (cases[i] as [unknown, RegExp])[1]);
        assert.equal(run.code, 2);
      });
    } finally {
      await database.drop();
    }
  });
});
