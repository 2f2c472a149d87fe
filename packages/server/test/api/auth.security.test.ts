// Authentication and access (docs/api.md#authentication): who gets 401, who gets 403, what CORS allows,
// and the limits on failed authentications.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { rollSecretKey } from '../../src/flows/merchants.ts';
import { type StartOptions, startTestApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS, type DialectCase } from '../helpers/databases.ts';
import { assertError } from '../helpers/errors.ts';

const ORIGIN = 'https://shop.example';

/** A key of the right shape that no merchant has; `prefix` fixes its first characters. */
function unknownKey(prefix = 'svc_sk_test_'): string {
  return prefix + randomBytes(24).toString('hex').slice(0, 27);
}

/** Runs `use` against an app of its own (its own env and database), closed afterwards. */
async function withApp(dialect: DialectCase, options: StartOptions, use: (t: TestApp) => Promise<void>) {
  const t = await startTestApp(dialect, options);
  try {
    await use(t);
  } finally {
    await t.close();
  }
}

for (const dialect of DIALECTS) {
  describe(`authentication on ${dialect.name}`, { skip: dialect.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(dialect);
    });
    after(() => t?.close());

    describe('401', () => {
      test('without an Authorization header', async () => {
        const res = await t.request('GET', '/v1/merchants/me');
        assertError(res, 401, 'missing_api_key');
      });

      test('every 401 carries a Bearer challenge: invalid_token once a credential was refused', async () => {
        const plain = 'Bearer realm="Group Checkout"';
        const refused = 'Bearer realm="Group Checkout", error="invalid_token"';
        const unknownKey = `${t.merchant.secretKey.slice(0, -4)}zzzz`;
        for (const [headers, code, challenge] of [
          [{}, 'missing_api_key', plain],
          [{ authorization: 'Basic abc' }, 'invalid_api_key_format', refused],
          [{ authorization: `Bearer ${unknownKey}` }, 'invalid_api_key', refused],
        ] as const) {
          const res = await t.request('GET', '/v1/merchants/me', { headers });
          assertError(res, 401, code);
          assert.equal(res.headers.get('www-authenticate'), challenge, code);
        }
        const page = await t.request('GET', '/api/v1/session?access=at_unknown0000000000000000000');
        assertError(page, 401, 'invalid_access_token');
        assert.equal(page.headers.get('www-authenticate'), refused);
        // Anything else carries none.
        const ok = await t.request('GET', '/v1/merchants/me', { key: t.merchant.secretKey });
        assert.equal(ok.status, 200);
        assert.equal(ok.headers.get('www-authenticate'), null);
      });

      test('with a scheme other than Bearer, or none, the message asks for the Bearer scheme', async () => {
        const basic = Buffer.from(`${t.merchant.secretKey}:`).toString('base64');
        for (const authorization of [`Basic ${basic}`, 'hello']) {
          const res = await t.request('GET', '/v1/merchants/me', { headers: { authorization } });
          assertError(res, 401, 'invalid_api_key_format');
          assert.equal(
            res.body.error,
            'The Authorization header must use the Bearer scheme: send Authorization: Bearer svc_sk_test_… ' +
              '(secret key) or svc_pk_test_… (publishable key).',
          );
        }
      });

      test('a key sent without "Bearer " is told to put Bearer before it', async () => {
        for (const key of [t.merchant.secretKey, t.merchant.publishableKey]) {
          const res = await t.request('GET', '/v1/merchants/me', { headers: { authorization: key } });
          assertError(res, 401, 'invalid_api_key_format');
          assert.equal(
            res.body.error,
            'The Authorization header must be "Bearer " followed by the key, not the key alone: send ' +
              'Authorization: Bearer svc_sk_test_… (secret key) or svc_pk_test_… (publishable key).',
          );
        }
      });

      test('the cart signing secret is named as such, with or without Bearer', async () => {
        const secret = t.merchant.merchant.signingSecret;
        assert.match(secret, /^svc_sig_test_/);
        for (const authorization of [`Bearer ${secret}`, secret]) {
          const res = await t.request('GET', '/v1/merchants/me', { headers: { authorization } });
          assertError(res, 401, 'invalid_api_key_format');
          assert.equal(
            res.body.error,
            'This is the cart signing secret (svc_sig_…), which signs carts on your server and is never an ' +
              'API key: send Authorization: Bearer svc_sk_test_… (secret key) or svc_pk_test_… (publishable key).',
          );
        }
      });

      test('Bearer with no key, or with more than one word, asks for exactly one key', async () => {
        for (const authorization of ['Bearer', 'Bearer   ', `Bearer ${t.merchant.secretKey} extra`]) {
          const res = await t.request('GET', '/v1/merchants/me', { headers: { authorization } });
          assertError(res, 401, 'invalid_api_key_format');
          assert.match(res.body.error, /^Authorization: Bearer must be followed by exactly one API key: /);
        }
      });

      test('with a Bearer token that is not a key says "invalid API key format" and the four prefixes', async () => {
        for (const token of [
          'not-a-key',
          'hello',
          'svc_sk_test_',
          'svc_xx_test_abcdefghijklmnopqrstuvwxyz',
          'svc_sk_test_abc$%',
        ]) {
          const res = await t.request('GET', '/v1/merchants/me', { key: token });
          assertError(res, 401, 'invalid_api_key_format');
          assert.equal(
            res.body.error,
            'Invalid API key format: an API key is svc_pk_test_, svc_pk_live_, svc_sk_test_ or svc_sk_live_ ' +
              'followed by 16 to 128 letters and digits; send Authorization: Bearer svc_sk_test_… (secret key) ' +
              'or svc_pk_test_… (publishable key).',
          );
        }
      });

      test('with a well-formed key that no merchant has', async () => {
        const res = await t.request('GET', '/v1/merchants/me', { key: unknownKey() });
        assertError(res, 401, 'invalid_api_key');
      });

      test('with a key that differs from a real one in its last character', async () => {
        const real = t.merchant.secretKey;
        const altered = real.slice(0, -1) + (real.endsWith('a') ? 'b' : 'a');
        const res = await t.request('GET', '/v1/merchants/me', { key: altered });
        assertError(res, 401, 'invalid_api_key');
      });

      test('with a rolled (revoked) secret key, while the new key works', async () => {
        const m = await t.createMerchant({ name: 'Rolling Shop' });
        assert.equal((await t.request('GET', '/v1/merchants/me', { key: m.secretKey })).status, 200);
        const rolled = await rollSecretKey(t.deps.db, m.merchant.id, Date.now());
        assert.ok(rolled);
        assert.notEqual(rolled.secretKey, m.secretKey);
        assertError(await t.request('GET', '/v1/merchants/me', { key: m.secretKey }), 401, 'invalid_api_key');
        const fresh = await t.request('GET', '/v1/merchants/me', { key: rolled.secretKey });
        assert.equal(fresh.status, 200);
        assert.equal(fresh.body.id, m.merchant.id);
        // The publishable key is not rolled with it.
        const pk = await t.request('GET', '/v1/sessions/gs_doesnotexist', { key: m.publishableKey });
        assertError(pk, 404, 'session_not_found');
      });
    });

    describe('403', () => {
      test('a secret key sent with an Origin header (from a browser)', async () => {
        const res = await t.request('GET', '/v1/merchants/me', {
          key: t.merchant.secretKey,
          headers: { origin: ORIGIN },
        });
        assertError(res, 403, 'secret_key_from_browser');
        assert.equal(res.headers.get('access-control-allow-origin'), null);
      });

      test('a live key against the sandbox is a key/environment mismatch naming both environments', async () => {
        for (const [key, kind] of [
          [`svc_sk_live_${t.merchant.secretKey.slice('svc_sk_test_'.length)}`, 'sk'],
          [unknownKey('svc_pk_live_'), 'pk'],
        ]) {
          const res = await t.request('GET', '/v1/merchants/me', { key });
          assertError(res, 403, 'key_environment_mismatch');
          assert.equal(
            res.body.error,
            `This is a live key (svc_${kind}_live_…), but this deployment is the sandbox and accepts only ` +
              'test keys (svc_pk_test_…, svc_sk_test_…).',
          );
        }
      });

      test('a test key against production is a key/environment mismatch; live keys work there', async () => {
        await withApp(dialect, { env: { SERVICE_ENV: 'production' } }, async (prod) => {
          assert.match(prod.merchant.secretKey, /^svc_sk_live_/);
          const own = await prod.request('GET', '/v1/merchants/me', { key: prod.merchant.secretKey });
          assert.equal(own.status, 200);
          assert.equal(own.body.sandbox, false);
          const testKey = await prod.request('GET', '/v1/merchants/me', { key: t.merchant.secretKey });
          assertError(testKey, 403, 'key_environment_mismatch');
          assert.equal(
            testKey.body.error,
            'This is a test key (svc_sk_test_…), but this deployment is production and accepts only ' +
              'live keys (svc_pk_live_…, svc_sk_live_…).',
          );
          // In production the examples of what to send are live keys.
          const bare = await prod.request('GET', '/v1/merchants/me', { headers: { authorization: 'hello' } });
          assertError(bare, 401, 'invalid_api_key_format');
          assert.match(bare.body.error, /Bearer svc_sk_live_… \(secret key\) or svc_pk_live_… /);
        });
      });

      test('X-Merchant-ID that is not the key’s merchant', async () => {
        const other = await t.createMerchant({ name: 'Other Shop' });
        const wrong = await t.request('GET', '/v1/merchants/me', {
          key: t.merchant.secretKey,
          headers: { 'x-merchant-id': other.merchant.id },
        });
        assertError(wrong, 403, 'merchant_mismatch');
        const right = await t.request('GET', '/v1/merchants/me', {
          key: t.merchant.secretKey,
          headers: { 'x-merchant-id': t.merchant.merchant.id },
        });
        assert.equal(right.status, 200);
      });

      test('a publishable key on every route that needs the secret key', async () => {
        const routes: [string, string, unknown?][] = [
          ['GET', '/v1/merchants/me'],
          ['GET', '/v1/webhooks'],
          ['POST', '/v1/webhooks', { url: 'https://hooks.example/gc', events: ['*'] }],
          ['DELETE', '/v1/webhooks/we_doesnotexist'],
        ];
        for (const [method, path, body] of routes) {
          const res = await t.request(method, path, { key: t.merchant.publishableKey, body });
          assertError(res, 403, 'secret_key_required');
        }
        const list = await t.request('GET', '/v1/webhooks', { key: t.merchant.secretKey });
        assert.deepEqual(list.body.data, [], 'the refused POST created nothing');
      });

      test('a client IP in IP_BLOCKLIST, while /healthz still answers', async () => {
        await withApp(dialect, { env: { IP_BLOCKLIST: '10.0.0.0/8, 127.0.0.0/8' } }, async (blocked) => {
          const key = blocked.merchant.secretKey;
          assertError(await blocked.request('GET', '/v1/merchants/me', { key }), 403, 'ip_blocked');
          assertError(await blocked.request('GET', '/v1/merchants/me'), 403, 'ip_blocked');
          assertError(await blocked.request('GET', '/v1/no-such-route'), 403, 'ip_blocked');
          const health = await blocked.request('GET', '/healthz');
          assert.equal(health.status, 200);
          assert.equal(health.body.status, 'ok');
        });
      });

      test('an IPv6 blocklist entry does not block IPv4 callers', async () => {
        await withApp(dialect, { env: { IP_BLOCKLIST: '2001:db8::/32' } }, async (app) => {
          const res = await app.request('GET', '/v1/merchants/me', { key: app.merchant.secretKey });
          assert.equal(res.status, 200);
        });
      });

      test('with TRUST_PROXY the first X-Forwarded-For hop is the client IP', async () => {
        const env = { TRUST_PROXY: 'true', IP_BLOCKLIST: '203.0.113.0/24' };
        await withApp(dialect, { env }, async (app) => {
          const key = app.merchant.secretKey;
          const from = (xff: string) =>
            app.request('GET', '/v1/merchants/me', { key, headers: { 'x-forwarded-for': xff } });
          assertError(await from('203.0.113.9'), 403, 'ip_blocked');
          assertError(await from('203.0.113.9, 198.51.100.7'), 403, 'ip_blocked');
          assert.equal((await from('198.51.100.7, 203.0.113.9')).status, 200);
          assert.equal((await from('198.51.100.7')).status, 200);
          // Without the header, the socket's address (127.0.0.1) is the client.
          assert.equal((await app.request('GET', '/v1/merchants/me', { key })).status, 200);
        });
      });

      test('without TRUST_PROXY, X-Forwarded-For is ignored', async () => {
        await withApp(dialect, { env: { IP_BLOCKLIST: '203.0.113.0/24' } }, async (app) => {
          const res = await app.request('GET', '/v1/merchants/me', {
            key: app.merchant.secretKey,
            headers: { 'x-forwarded-for': '203.0.113.9' },
          });
          assert.equal(res.status, 200);
        });
      });
    });

    describe('CORS', () => {
      test('a publishable key with an Origin gets the origin echoed, errors included', async () => {
        const res = await t.request('GET', '/v1/sessions/gs_doesnotexist', {
          key: t.merchant.publishableKey,
          headers: { origin: ORIGIN },
        });
        assertError(res, 404, 'session_not_found');
        assert.equal(res.headers.get('access-control-allow-origin'), ORIGIN);
        assert.match(res.headers.get('vary') ?? '', /\bOrigin\b/i);
        const exposed = (res.headers.get('access-control-expose-headers') ?? '').toLowerCase();
        assert.match(exposed, /x-request-id/);

        const unknown = await t.request('GET', '/v1/sessions/gs_doesnotexist', {
          key: unknownKey('svc_pk_test_'),
          headers: { origin: 'https://other.example' },
        });
        assertError(unknown, 401, 'invalid_api_key');
        assert.equal(unknown.headers.get('access-control-allow-origin'), 'https://other.example');
      });

      test('routes that need the secret key never send a CORS allowance', async () => {
        const attempts = [
          { key: t.merchant.publishableKey, headers: { origin: ORIGIN } },
          { key: t.merchant.secretKey, headers: { origin: ORIGIN } },
          { key: t.merchant.secretKey },
        ];
        for (const path of ['/v1/merchants/me', '/v1/webhooks']) {
          for (const attempt of attempts) {
            const res = await t.request('GET', path, attempt);
            assert.equal(res.headers.get('access-control-allow-origin'), null, `${path} ${res.status}`);
          }
        }
      });

      test('a preflight answers 204 with the allowed headers', async () => {
        const res = await t.request('OPTIONS', '/v1/sessions', {
          headers: {
            origin: ORIGIN,
            'access-control-request-method': 'POST',
            'access-control-request-headers': 'authorization, content-type, idempotency-key',
          },
        });
        assert.equal(res.status, 204);
        assert.equal(res.headers.get('access-control-allow-origin'), ORIGIN);
        const allowed = (res.headers.get('access-control-allow-headers') ?? '')
          .split(',')
          .map((h) => h.trim().toLowerCase());
        for (const header of [
          'authorization',
          'content-type',
          'x-merchant-id',
          'x-service-signature',
          'idempotency-key',
        ]) {
          assert.ok(allowed.includes(header), `${header} in ${allowed.join(', ')}`);
        }
        const methods = res.headers.get('access-control-allow-methods') ?? '';
        assert.match(methods, /\bPOST\b/);
        assert.match(methods, /\bGET\b/);
        assert.match(res.headers.get('vary') ?? '', /\bOrigin\b/i);
        assert.match(res.headers.get('x-request-id') ?? '', /^req_/);
      });

      test('a preflight allows only the routes a publishable key may call', async () => {
        const preflight = (path: string, method: string) =>
          t.request('OPTIONS', path, {
            headers: { origin: ORIGIN, 'access-control-request-method': method },
          });
        const browserCalls: [string, string][] = [
          ['/v1/sessions', 'POST'],
          ['/v1/sessions/gs_any', 'GET'],
          ['/v1/sessions/gs_any/', 'GET'],
        ];
        for (const [path, method] of browserCalls) {
          const res = await preflight(path, method);
          assert.equal(res.status, 204);
          assert.equal(res.headers.get('access-control-allow-origin'), ORIGIN, `${method} ${path}`);
        }
        const secretCalls: [string, string][] = [
          ['/v1/sessions', 'GET'],
          ['/v1/sessions/gs_any/cancel', 'POST'],
          ['/v1/merchants/me', 'GET'],
          ['/v1/webhooks', 'GET'],
          ['/v1/webhooks', 'POST'],
          ['/v1/events', 'GET'],
          ['/v1/no-such-route', 'GET'],
        ];
        for (const [path, method] of secretCalls) {
          const res = await preflight(path, method);
          assert.equal(res.status, 204);
          assert.equal(res.headers.get('access-control-allow-origin'), null, `${method} ${path}`);
          assert.equal(res.headers.get('access-control-allow-headers'), null, `${method} ${path}`);
        }
        const noMethod = await t.request('OPTIONS', '/v1/sessions', { headers: { origin: ORIGIN } });
        assert.equal(noMethod.headers.get('access-control-allow-origin'), null, 'not a preflight');
      });
    });

    describe('failed-authentication limits', () => {
      test('past RATE_LIMIT_AUTH_FAILURES_IP failures from one IP, even the right key gets 429', async () => {
        const env = { RATE_LIMIT_AUTH_FAILURES_IP: '5', TRUST_PROXY: 'true' };
        await withApp(dialect, { env }, async (app) => {
          const key = app.merchant.secretKey;
          const attacker = { 'x-forwarded-for': '198.51.100.66' };
          assert.equal(
            (await app.request('GET', '/v1/merchants/me', { key, headers: attacker })).status,
            200,
          );
          for (let i = 0; i < 5; i++) {
            const res = await app.request('GET', '/v1/merchants/me', {
              key: unknownKey(),
              headers: attacker,
            });
            assertError(res, 401, 'invalid_api_key');
          }
          const blocked = await app.request('GET', '/v1/merchants/me', { key, headers: attacker });
          assertError(blocked, 429, 'too_many_failed_authentications');
          const retryAfter = Number(blocked.headers.get('retry-after'));
          assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `${retryAfter}`);
          // Another client IP is not affected.
          const other = await app.request('GET', '/v1/merchants/me', {
            key,
            headers: { 'x-forwarded-for': '198.51.100.67' },
          });
          assert.equal(other.status, 200);
        });
      });

      test('missing and malformed keys count as failures too', async () => {
        await withApp(dialect, { env: { RATE_LIMIT_AUTH_FAILURES_IP: '3' } }, async (app) => {
          assertError(await app.request('GET', '/v1/merchants/me'), 401, 'missing_api_key');
          assertError(
            await app.request('GET', '/v1/merchants/me', { key: 'junk' }),
            401,
            'invalid_api_key_format',
          );
          assertError(
            await app.request('GET', '/v1/webhooks', { key: unknownKey() }),
            401,
            'invalid_api_key',
          );
          const res = await app.request('GET', '/v1/merchants/me', { key: app.merchant.secretKey });
          assertError(res, 429, 'too_many_failed_authentications');
        });
      });

      test('past RATE_LIMIT_AUTH_FAILURES_KEY failures on a key prefix, that prefix is blocked, others not', async () => {
        await withApp(dialect, { env: { RATE_LIMIT_AUTH_FAILURES_KEY: '3' } }, async (app) => {
          const victim = app.merchant.secretKey;
          const bystander = await app.createMerchant({ name: 'Bystander' });
          assert.notEqual(bystander.secretKey.slice(0, 16), victim.slice(0, 16));
          for (let i = 0; i < 3; i++) {
            const guess = unknownKey(victim.slice(0, 16));
            assert.equal(guess.slice(0, 16), victim.slice(0, 16));
            assertError(await app.request('GET', '/v1/merchants/me', { key: guess }), 401, 'invalid_api_key');
          }
          const blocked = await app.request('GET', '/v1/merchants/me', { key: victim });
          assertError(blocked, 429, 'too_many_failed_authentications');
          assert.ok(Number(blocked.headers.get('retry-after')) >= 1);
          const ok = await app.request('GET', '/v1/merchants/me', { key: bystander.secretKey });
          assert.equal(ok.status, 200);
          assert.equal(ok.body.id, bystander.merchant.id);
        });
      });

      test('a burst of guesses sent at once gets no more 401s than the limits allow: the rest are 429', async () => {
        const env = {
          RATE_LIMIT_AUTH_FAILURES_KEY: '10',
          RATE_LIMIT_AUTH_FAILURES_IP: '25',
          TRUST_PROXY: 'true',
        };
        await withApp(dialect, { env }, async (app) => {
          const prefix = app.merchant.secretKey.slice(0, 16);
          // 30 guesses on one key prefix, each from its own address, all in flight together.
          const byPrefix = await Promise.all(
            Array.from({ length: 30 }, (_, i) =>
              app.request('GET', '/v1/merchants/me', {
                key: unknownKey(prefix),
                headers: { 'x-forwarded-for': `198.51.100.${i + 1}` },
              }),
            ),
          );
          const count = (answers: { status: number }[], status: number) =>
            answers.filter((r) => r.status === status).length;
          assert.equal(count(byPrefix, 401), 10, byPrefix.map((r) => r.status).join(','));
          assert.equal(count(byPrefix, 429), 20);
          // 40 guesses from one address, each on its own prefix, all in flight together.
          const byIp = await Promise.all(
            Array.from({ length: 40 }, () =>
              app.request('GET', '/v1/merchants/me', {
                key: unknownKey(),
                headers: { 'x-forwarded-for': '203.0.113.9' },
              }),
            ),
          );
          assert.equal(count(byIp, 401), 25, byIp.map((r) => r.status).join(','));
          assert.equal(count(byIp, 429), 15);
        });
      });

      test('IPv6 failures count against the whole /64, not each address', async () => {
        const env = { RATE_LIMIT_AUTH_FAILURES_IP: '3', TRUST_PROXY: 'true' };
        await withApp(dialect, { env }, async (app) => {
          const from = (ip: string, key: string) =>
            app.request('GET', '/v1/merchants/me', { key, headers: { 'x-forwarded-for': ip } });
          for (const ip of ['2001:db8:1:2::a', '2001:db8:1:2::b', '2001:db8:1:2:ffff:1:2:3']) {
            assertError(await from(ip, unknownKey()), 401, 'invalid_api_key');
          }
          const key = app.merchant.secretKey;
          assertError(await from('2001:db8:1:2::c', key), 429, 'too_many_failed_authentications');
          assert.equal((await from('2001:db8:1:3::a', key)).status, 200, 'the next /64 is another client');
        });
      });

      test('successful authentications are not counted as failures', async () => {
        await withApp(dialect, { env: { RATE_LIMIT_AUTH_FAILURES_IP: '2' } }, async (app) => {
          for (let i = 0; i < 5; i++) {
            const res = await app.request('GET', '/v1/merchants/me', { key: app.merchant.secretKey });
            assert.equal(res.status, 200);
          }
        });
      });
    });
  });
}
