// Configuration (README.md#configuration): the defaults, and a bad value stops start-up with one line naming the
// variable.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, DEFAULT_RATE_LIMITS, loadConfig } from '../src/config.ts';

// 32 random bytes, as `openssl rand -hex 32` and `openssl rand -base64 32` write them.
const GOOD_KEY = Buffer.from('c4f1a9e27b3d5086f2ae4c19d07b6e35a8912fcd4e60b7d3195a2cf0e8b4d671', 'hex');
const GOOD_KEY_HEX = GOOD_KEY.toString('hex');
/** What production needs besides: Stripe, and its webhooks' secret (docs/operations.md#going-to-production). */
const PRODUCTION = {
  SERVICE_ENV: 'production',
  SECRETS_KEY: GOOD_KEY_HEX,
  STRIPE_SECRET_KEY: 'sk_live_123',
  STRIPE_WEBHOOK_SECRET: 'whsec_0123456789abcdef',
  PUBLIC_BASE_URL: 'https://api.example.com/v1',
  PUBLIC_PAY_URL: 'https://pay.example.com',
};

describe('loadConfig', () => {
  test('defaults are README.md#configuration’s', () => {
    const config = loadConfig({});
    assert.equal(config.port, 4000);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.databaseUrl, 'sqlite:./data/group-checkout.db');
    assert.equal(config.serviceEnv, 'sandbox');
    assert.equal(config.publicBaseUrl, 'http://localhost:4000/v1');
    assert.equal(config.publicPayUrl, 'http://localhost:4000');
    assert.equal(config.apiPrefix, '/v1');
    assert.equal(config.payPrefix, '');
    assert.equal(config.smtpUrl, undefined);
    assert.equal(config.redisUrl, undefined);
    assert.equal(config.redisKeyPrefix, 'gc:');
    assert.equal(config.trustProxy, false);
    assert.equal(config.ipBlocklistText, '');
    assert.equal(config.ipBlocklist.check('127.0.0.1'), false);
    assert.equal(config.stripeSecretKey, undefined);
    assert.equal(config.logLevel, 'info');
  });

  test('rate limits default to docs/api.md#rate-limits and docs/api.md#authentication', () => {
    const { rateLimits } = loadConfig({});
    assert.equal(rateLimits.SESSIONS_CREATE, 60);
    assert.equal(rateLimits.SESSIONS_LIST, 60);
    assert.equal(rateLimits.SESSIONS_GET, 120);
    assert.equal(rateLimits.SESSIONS_CANCEL, 30);
    assert.equal(rateLimits.SESSIONS_REMIND, 20);
    assert.equal(rateLimits.AUTH_FAILURES_IP, 120);
    assert.equal(rateLimits.AUTH_FAILURES_KEY, 40);
    assert.deepEqual(rateLimits, { ...DEFAULT_RATE_LIMITS });
  });

  test('good values are taken', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      SERVICE_ENV: 'production',
      DATABASE_URL: 'postgres://gc:secret@db.internal:5432/gc',
      PUBLIC_BASE_URL: 'https://api.example.com/v1/',
      PUBLIC_PAY_URL: 'https://pay.example.com',
      REDIS_URL: 'rediss://cache.internal:6380',
      REDIS_KEY_PREFIX: 'gc-eu:',
      TRUST_PROXY: 'true',
      IP_BLOCKLIST: '10.0.0.0/8, 192.0.2.1, 2001:db8::/32',
      RATE_LIMIT_SESSIONS_CREATE: '600',
      SMTP_URL: 'smtp://mail.internal:587',
      STRIPE_SECRET_KEY: 'sk_test_123',
      STRIPE_WEBHOOK_SECRET: 'whsec_0123456789abcdef',
      LOG_LEVEL: 'warn',
      SECRETS_KEY: GOOD_KEY_HEX,
    });
    assert.equal(config.port, 8080);
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.serviceEnv, 'production');
    assert.equal(config.databaseUrl, 'postgres://gc:secret@db.internal:5432/gc');
    assert.equal(config.publicBaseUrl, 'https://api.example.com/v1', 'trailing slash dropped');
    assert.equal(config.apiPrefix, '/v1');
    assert.equal(config.redisUrl, 'rediss://cache.internal:6380');
    assert.equal(config.redisKeyPrefix, 'gc-eu:');
    assert.equal(config.trustProxy, true);
    assert.equal(config.ipBlocklist.check('10.20.30.40'), true);
    assert.equal(config.ipBlocklist.check('192.0.2.1'), true);
    assert.equal(config.ipBlocklist.check('192.0.2.2'), false);
    assert.equal(config.ipBlocklist.check('2001:db8::5', 'ipv6'), true);
    assert.equal(config.rateLimits.SESSIONS_CREATE, 600);
    assert.equal(config.rateLimits.SESSIONS_LIST, 60);
    assert.equal(config.logLevel, 'warn');
  });

  test('TRUST_PROXY takes the usual spellings of true and false', () => {
    for (const value of ['1', 'true', 'TRUE', 'yes'])
      assert.equal(loadConfig({ TRUST_PROXY: value }).trustProxy, true);
    for (const value of ['', '0', 'false', 'no'])
      assert.equal(loadConfig({ TRUST_PROXY: value }).trustProxy, false);
  });

  const BAD: [string, string][] = [
    ['PORT', 'abc'],
    ['PORT', '-1'],
    ['PORT', '65536'],
    ['PORT', '80.5'],
    ['SERVICE_ENV', 'staging'],
    ['SERVICE_ENV', 'Production'],
    ['DATABASE_URL', 'mysql://root@localhost/shop'],
    ['DATABASE_URL', './data/gc.db'],
    ['DATABASE_URL', 'postgres://[broken'],
    ['IP_BLOCKLIST', 'not-an-ip'],
    ['IP_BLOCKLIST', '10.0.0.0/33'],
    ['IP_BLOCKLIST', '10.0.0.0/8/1'],
    ['IP_BLOCKLIST', '10.0.0.0/'],
    ['IP_BLOCKLIST', '2001:db8::/129'],
    ['IP_BLOCKLIST', '10.0.0.0/8, 300.1.1.1'],
    ['RATE_LIMIT_SESSIONS_CREATE', '0'],
    ['RATE_LIMIT_SESSIONS_CREATE', 'lots'],
    ['RATE_LIMIT_SESSIONS_CREATE', '1.5'],
    ['RATE_LIMIT_AUTH_FAILURES_IP', '-5'],
    ['RATE_LIMIT_SESSION_CREATE', '10'],
    ['REDIS_URL', 'http://cache.internal:6379'],
    ['REDIS_URL', 'not a url'],
    ['REDIS_KEY_PREFIX', 'has space'],
    ['TRUST_PROXY', 'maybe'],
    ['TRUST_PROXY', 'on'],
    ['PUBLIC_BASE_URL', 'https://api.example.com'],
    ['PUBLIC_BASE_URL', 'ftp://api.example.com/v1'],
    ['PUBLIC_PAY_URL', 'pay.example.com'],
    ['SMTP_URL', 'http://mail.internal'],
    ['STRIPE_SECRET_KEY', 'pk_test_123'],
    ['LOG_LEVEL', 'verbose'],
    ['SWEEP_INTERVAL_MS', '5'],
    ['SANDBOX_CRASH_AT', 'bogus-point'],
  ];

  for (const [name, value] of BAD) {
    test(`${name}=${JSON.stringify(value)} throws a ConfigError naming ${name}`, () => {
      assert.throws(
        () => loadConfig({ [name]: value }),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError, String(error));
          assert.ok(error.message.includes(name), error.message);
          assert.ok(!error.message.includes('\n'), 'one line');
          return true;
        },
      );
    });
  }

  test('a password in a bad URL is not repeated in the error', () => {
    for (const [name, value] of [
      ['DATABASE_URL', 'mysql://root:hunter2@localhost/shop'],
      ['REDIS_URL', 'http://:hunter2@cache.internal:6379'],
    ] as const) {
      assert.throws(
        () => loadConfig({ [name]: value }),
        (error: Error) => error.message.includes(name) && !error.message.includes('hunter2'),
      );
    }
  });

  describe('SECRETS_KEY (docs/operations.md#secrets-at-rest)', () => {
    const refused = (env: Record<string, string>, message: RegExp) =>
      assert.throws(
        () => loadConfig(env),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError, String(error));
          assert.match(error.message, message);
          assert.ok(!error.message.includes('\n'), 'one line');
          for (const value of Object.values(env)) {
            if (value.length >= 32) assert.ok(!error.message.includes(value), 'the key is never printed');
          }
          return true;
        },
      );

    test('is required in production, optional in the sandbox', () => {
      refused({ SERVICE_ENV: 'production' }, /^SECRETS_KEY is required when SERVICE_ENV=production/);
      refused({ SERVICE_ENV: 'production', SECRETS_KEY: '' }, /^SECRETS_KEY is required/);
      assert.equal(loadConfig({}).secretsKey, undefined);
      assert.equal(loadConfig({ ...PRODUCTION, SECRETS_KEY: GOOD_KEY_HEX }).serviceEnv, 'production');
    });

    test('is taken as 64 hex characters or base64 of 32 bytes, padded, unpadded or URL-safe', () => {
      for (const written of [
        GOOD_KEY_HEX,
        GOOD_KEY_HEX.toUpperCase(),
        GOOD_KEY.toString('base64'),
        GOOD_KEY.toString('base64').replace(/=$/, ''),
        GOOD_KEY.toString('base64url'),
      ]) {
        const config = loadConfig({ ...PRODUCTION, SECRETS_KEY: written });
        assert.ok(config.secretsKey?.equals(GOOD_KEY), written);
      }
      const previous = Buffer.from(GOOD_KEY).reverse();
      const both = loadConfig({ SECRETS_KEY: GOOD_KEY_HEX, SECRETS_KEY_PREVIOUS: previous.toString('hex') });
      assert.ok(both.secretsKeyPrevious?.equals(previous));
    });

    test('a key of another length or form is refused', () => {
      for (const value of [
        GOOD_KEY_HEX.slice(0, 62),
        `${GOOD_KEY_HEX}ab`,
        GOOD_KEY.subarray(0, 16).toString('hex'),
        GOOD_KEY.subarray(0, 31).toString('base64'),
        Buffer.concat([GOOD_KEY, GOOD_KEY.subarray(0, 1)]).toString('base64'),
        `${GOOD_KEY_HEX.slice(0, 63)}g`,
        ` ${GOOD_KEY_HEX}`,
        'correct horse battery staple',
      ]) {
        refused(
          { SECRETS_KEY: value },
          /^SECRETS_KEY must be 32 random bytes written as 64 hex characters or in base64/,
        );
      }
    });

    test('a key that is not random is refused as weak', () => {
      const phrase = Buffer.from('my very own secret passphrase!!!');
      assert.equal(phrase.length, 32);
      for (const value of [
        'a'.repeat(64),
        '0'.repeat(64),
        '0123456789abcdef'.repeat(4),
        'deadbeef'.repeat(8),
        Buffer.alloc(32, 7).toString('base64'),
        phrase.toString('base64'),
        phrase.toString('hex'),
      ]) {
        refused({ SECRETS_KEY: value }, /^SECRETS_KEY is too weak/);
        refused(
          { SECRETS_KEY: GOOD_KEY_HEX, SECRETS_KEY_PREVIOUS: value },
          /^SECRETS_KEY_PREVIOUS is too weak/,
        );
      }
    });

    test('SECRETS_KEY_PREVIOUS needs SECRETS_KEY, and another key', () => {
      refused({ SECRETS_KEY_PREVIOUS: GOOD_KEY_HEX }, /^SECRETS_KEY_PREVIOUS is set without SECRETS_KEY/);
      refused(
        { SECRETS_KEY: GOOD_KEY_HEX, SECRETS_KEY_PREVIOUS: GOOD_KEY.toString('base64') },
        /^SECRETS_KEY_PREVIOUS is the same key as SECRETS_KEY/,
      );
    });
  });
});

describe('production fails closed (docs/operations.md#going-to-production)', () => {
  const refused = (env: Record<string, string>, message: RegExp) =>
    assert.throws(
      () => loadConfig(env),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError, String(error));
        assert.match(error.message, message);
        assert.ok(!error.message.includes('\n'), 'one line');
        return true;
      },
    );
  const without = (name: keyof typeof PRODUCTION) => {
    const { [name]: _left, ...rest } = PRODUCTION;
    return rest;
  };

  test('all of it set: it starts', () => {
    const config = loadConfig(PRODUCTION);
    assert.equal(config.serviceEnv, 'production');
    assert.equal(config.stripeWebhookSecret, PRODUCTION.STRIPE_WEBHOOK_SECRET);
  });

  test('without STRIPE_SECRET_KEY or STRIPE_WEBHOOK_SECRET it refuses, naming the variable', () => {
    refused(without('STRIPE_SECRET_KEY'), /^STRIPE_SECRET_KEY is required when SERVICE_ENV=production/);
    refused({ ...PRODUCTION, STRIPE_SECRET_KEY: '' }, /^STRIPE_SECRET_KEY is required/);
    refused(
      without('STRIPE_WEBHOOK_SECRET'),
      /^STRIPE_WEBHOOK_SECRET is required when SERVICE_ENV=production/,
    );
    // The sandbox needs neither: it has its own processor.
    assert.equal(loadConfig({}).stripeWebhookSecret, undefined);
  });

  test('a live Stripe key in the sandbox is refused, naming SERVICE_ENV; a test key in the sandbox is fine', () => {
    for (const key of ['sk_live_123', 'rk_live_123'])
      refused(
        { STRIPE_SECRET_KEY: key },
        /^STRIPE_SECRET_KEY is a live key \([rs]k_live_…\), but SERVICE_ENV is the sandbox: real money is taken only with SERVICE_ENV=production/,
      );
    assert.equal(loadConfig({ STRIPE_SECRET_KEY: 'sk_test_123' }).stripeSecretKey, 'sk_test_123');
  });

  test('http:// public URLs are refused off loopback, and allowed on it', () => {
    refused(
      { ...PRODUCTION, PUBLIC_PAY_URL: 'http://pay.example.com' },
      /^PUBLIC_PAY_URL must be https:\/\//,
    );
    refused(
      { ...PRODUCTION, PUBLIC_BASE_URL: 'http://api.example.com/v1' },
      /^PUBLIC_BASE_URL must be https:\/\//,
    );
    refused({ ...PRODUCTION, PUBLIC_PAY_URL: 'http://10.0.0.5:4000' }, /^PUBLIC_PAY_URL must be https/);
    for (const local of ['http://localhost:4000', 'http://127.0.0.1:4000', 'http://[::1]:4000']) {
      assert.equal(loadConfig({ ...PRODUCTION, PUBLIC_PAY_URL: local }).publicPayUrl, local);
    }
    // The sandbox serves http anywhere.
    assert.equal(
      loadConfig({ PUBLIC_PAY_URL: 'http://pay.example.com' }).publicPayUrl,
      'http://pay.example.com',
    );
  });

  test('STRIPE_WEBHOOK_SECRET, STRIPE_API_URL, PAYMENT_AUTH_TIMEOUT_MS and APPLE_PAY_DOMAIN_ASSOCIATION are checked', () => {
    refused(
      { STRIPE_WEBHOOK_SECRET: 'sk_test_wrong_thing' },
      /^STRIPE_WEBHOOK_SECRET must be the signing secret/,
    );
    assert.deepEqual(loadConfig({ STRIPE_API_URL: 'http://localhost:12111' }).stripeApiUrl, {
      host: 'localhost',
      port: 12111,
      protocol: 'http',
    });
    assert.deepEqual(loadConfig({ STRIPE_API_URL: 'https://stripe-proxy.internal' }).stripeApiUrl, {
      host: 'stripe-proxy.internal',
      port: 443,
      protocol: 'https',
    });
    refused({ STRIPE_API_URL: 'ftp://x' }, /^STRIPE_API_URL must start with http:\/\/ or https:\/\//);
    refused(
      { STRIPE_API_URL: 'http://localhost:12111/v1' },
      /^STRIPE_API_URL must be scheme:\/\/host\[:port\] only/,
    );
    assert.equal(loadConfig({}).paymentAuthTimeoutMs, 900_000);
    assert.equal(loadConfig({ PAYMENT_AUTH_TIMEOUT_MS: '60000' }).paymentAuthTimeoutMs, 60_000);
    refused({ PAYMENT_AUTH_TIMEOUT_MS: '10' }, /^PAYMENT_AUTH_TIMEOUT_MS must be a whole number from 1000/);
    refused(
      { APPLE_PAY_DOMAIN_ASSOCIATION: '/nonexistent/apple-file' },
      /^APPLE_PAY_DOMAIN_ASSOCIATION must name a readable file.*ENOENT/,
    );
  });
});

describe('a misspelt variable name stops start-up (README.md#configuration)', () => {
  const refusedAs = (name: string, meant: string) =>
    assert.throws(
      () => loadConfig({ [name]: '5' }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError, String(error));
        assert.equal(
          error.message,
          `${name} is not a variable Group Checkout knows: did you mean ${meant}? (README.md#configuration lists them)`,
        );
        return true;
      },
    );

  test('a missing underscore, a letter off, a letter left out', () => {
    refusedAs('SWEEP_INTERVALMS', 'SWEEP_INTERVAL_MS');
    refusedAs('WEBHOOK_TIMOUT_MS', 'WEBHOOK_TIMEOUT_MS');
    refusedAs('stripe_secret_key', 'STRIPE_SECRET_KEY');
    refusedAs('DATABASE_URI', 'DATABASE_URL');
    refusedAs('SETTLE_INTERVAL', 'SETTLE_INTERVAL_MS');
  });

  test('a misspelt rate limit is named with the limit it was probably meant to be', () => {
    for (const [name, meant] of [
      ['RATE_LIMIT_SESIONS_LIST', 'RATE_LIMIT_SESSIONS_LIST'],
      ['RATE_LIMIT_SESSION_CREATE', 'RATE_LIMIT_SESSIONS_CREATE'],
    ] as const) {
      assert.throws(
        () => loadConfig({ [name]: '5' }),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError, String(error));
          assert.equal(error.message, `${name} is not a known rate limit: did you mean ${meant}?`);
          return true;
        },
      );
    }
    // Nothing like any limit: the list of those there are.
    assert.throws(
      () => loadConfig({ RATE_LIMIT_EVERYTHING: '5' }),
      /not a known rate limit; known: RATE_LIMIT_/,
    );
  });

  test("other programs' variables are left alone", () => {
    const config = loadConfig({
      PATH: '/usr/bin',
      HOME: '/root',
      NODE_ENV: 'test',
      TEST_DATABASE_URL: 'postgres://x@127.0.0.1/test',
      TEST_REDIS_URL: 'redis://127.0.0.1:6379',
      GROUP_CHECKOUT_API_KEY: 'svc_sk_test_x',
      npm_config_user_agent: 'npm/11',
      HOSTNAME: 'box',
    });
    assert.equal(config.sweepIntervalMs, 2000);
    // This very process's environment starts.
    loadConfig({ ...process.env, SERVICE_ENV: 'sandbox' });
  });
});
