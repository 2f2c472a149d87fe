// Route rate limits (docs/api.md#rate-limits, docs/api.md#errors): per route and client IP, IETF RateLimit-* headers, 429 with
// Retry-After in our error shape; shared between processes through Redis, and failing open without it.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { deleteRedisKeys, startTestApp, type TestApp, type TestResponse } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { assertError } from '../helpers/errors.ts';

const REDIS_URL = process.env.TEST_REDIS_URL;

function assertHeaders(res: TestResponse, limit: number, remaining: number) {
  assert.equal(res.headers.get('ratelimit-limit'), String(limit));
  assert.equal(res.headers.get('ratelimit-remaining'), String(remaining));
  const reset = Number(res.headers.get('ratelimit-reset'));
  assert.ok(Number.isInteger(reset) && reset >= 0 && reset <= 60, `RateLimit-Reset ${reset}`);
}

function assertLimited(res: TestResponse, limit: number) {
  assertError(res, 429, 'rate_limited');
  const retryAfter = Number(res.headers.get('retry-after'));
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
  assertHeaders(res, limit, 0);
}

for (const dialect of DIALECTS) {
  describe(`rate limits on ${dialect.name}`, { skip: dialect.skip }, () => {
    describe('in one process', () => {
      let t: TestApp;
      before(async () => {
        t = await startTestApp(dialect, { env: { RATE_LIMIT_MERCHANTS_ME: '3', TRUST_PROXY: 'true' } });
      });
      after(() => t?.close());

      const me = (ip: string, key = t.merchant.secretKey) =>
        t.request('GET', '/v1/merchants/me', { key, headers: { 'x-forwarded-for': ip } });

      test('the request past the limit is 429 with Retry-After and the RateLimit headers', async () => {
        for (let i = 0; i < 3; i++) {
          const res = await me('198.51.100.1');
          assert.equal(res.status, 200);
          assertHeaders(res, 3, 2 - i);
        }
        assertLimited(await me('198.51.100.1'), 3);
        assertLimited(await me('198.51.100.1'), 3);
      });

      test('the limit is per client IP, not per key', async () => {
        for (let i = 0; i < 3; i++) assert.equal((await me('198.51.100.2')).status, 200);
        const other = await t.createMerchant({ name: 'Same Office' });
        assertLimited(await me('198.51.100.2', other.secretKey), 3);
        const elsewhere = await me('198.51.100.3');
        assert.equal(elsewhere.status, 200);
        assertHeaders(elsewhere, 3, 2);
      });

      test('the limit is per route', async () => {
        for (let i = 0; i < 4; i++) await me('198.51.100.4');
        assertLimited(await me('198.51.100.4'), 3);
        const hooks = await t.request('GET', '/v1/webhooks', {
          key: t.merchant.secretKey,
          headers: { 'x-forwarded-for': '198.51.100.4' },
        });
        assert.equal(hooks.status, 200);
        assertHeaders(hooks, 60, 59);
      });

      test('HEAD counts against its GET: one budget, not two', async () => {
        const head = (ip: string) =>
          t.request('HEAD', '/v1/merchants/me', {
            key: t.merchant.secretKey,
            headers: { 'x-forwarded-for': ip },
          });
        assert.equal((await head('198.51.100.5')).status, 200);
        assert.equal((await me('198.51.100.5')).status, 200);
        const third = await head('198.51.100.5');
        assert.equal(third.status, 200);
        assertHeaders(third, 3, 0);
        assertLimited(await me('198.51.100.5'), 3);
        assert.equal((await head('198.51.100.5')).status, 429);
      });

      test('every limited route sends the headers, with docs/api.md#rate-limits’s limits by default', async () => {
        const key = t.merchant.secretKey;
        const ip = '198.51.100.5';
        const routes: [string, string, number, unknown?][] = [
          ['POST', '/v1/sessions', 60, {}],
          ['GET', '/v1/sessions', 60],
          ['GET', '/v1/sessions/gs_unknown', 120],
          ['POST', '/v1/sessions/gs_unknown/cancel', 30],
          ['POST', '/v1/sessions/gs_unknown/remind', 20],
          ['GET', '/v1/webhooks', 60],
          ['POST', '/v1/webhooks', 30, {}],
          ['DELETE', '/v1/webhooks/we_unknown', 30],
        ];
        for (const [method, path, limit, body] of routes) {
          const res = await t.request(method, path, { key, body, headers: { 'x-forwarded-for': ip } });
          assert.equal(res.headers.get('ratelimit-limit'), String(limit), `${method} ${path} ${res.status}`);
          assert.equal(res.headers.get('ratelimit-remaining'), String(limit - 1), `${method} ${path}`);
        }
      });
    });

    test('a limit set in the environment applies', async () => {
      const t = await startTestApp(dialect, { env: { RATE_LIMIT_WEBHOOKS_READ: '2' } });
      try {
        const list = () => t.request('GET', '/v1/webhooks', { key: t.merchant.secretKey });
        assertHeaders(await list(), 2, 1);
        assertHeaders(await list(), 2, 0);
        assertLimited(await list(), 2);
      } finally {
        await t.close();
      }
    });

    test('with Redis unreachable, limits fail open and the API answers', async () => {
      const t = await startTestApp(dialect, {
        env: {
          REDIS_URL: 'redis://127.0.0.1:1',
          RATE_LIMIT_MERCHANTS_ME: '1',
          RATE_LIMIT_AUTH_FAILURES_IP: '1',
        },
      });
      try {
        for (let i = 0; i < 3; i++) {
          assertError(
            await t.request('GET', '/v1/merchants/me', { key: 'svc_sk_test_wrongwrongwrongwrong' }),
            401,
            'invalid_api_key',
          );
          const res = await t.request('GET', '/v1/merchants/me', { key: t.merchant.secretKey });
          assert.equal(res.status, 200, res.text);
        }
        assert.ok(
          t.logLines.some((line) => line.includes('redis')),
          'the outage is logged',
        );
      } finally {
        await t.close();
      }
    });

    describe('shared through Redis', { skip: REDIS_URL ? false : 'TEST_REDIS_URL is not set' }, () => {
      let a: TestApp;
      let b: TestApp;
      let database: Awaited<ReturnType<typeof dialect.create>>;
      // Both processes share one prefix, unlike any other test file's.
      const prefix = `gc-test:rate-limit:${randomBytes(6).toString('hex')}:`;
      before(async () => {
        database = await dialect.create();
        const env = {
          REDIS_URL: REDIS_URL as string,
          REDIS_KEY_PREFIX: prefix,
          RATE_LIMIT_MERCHANTS_ME: '3',
          RATE_LIMIT_AUTH_FAILURES_IP: '3',
          TRUST_PROXY: 'true',
        };
        a = await startTestApp(dialect, { env, database });
        b = await startTestApp(dialect, { env, database });
      });
      after(async () => {
        await a?.close();
        await b?.close();
        await database?.drop();
        await deleteRedisKeys(REDIS_URL as string, prefix);
      });

      test('two processes share one route limit', async () => {
        const key = a.merchant.secretKey;
        const headers = { 'x-forwarded-for': '203.0.113.10' };
        assert.equal((await a.request('GET', '/v1/merchants/me', { key, headers })).status, 200);
        assert.equal((await a.request('GET', '/v1/merchants/me', { key, headers })).status, 200);
        const third = await b.request('GET', '/v1/merchants/me', { key, headers });
        assert.equal(third.status, 200);
        assertHeaders(third, 3, 0);
        assertLimited(await b.request('GET', '/v1/merchants/me', { key, headers }), 3);
        assertLimited(await a.request('GET', '/v1/merchants/me', { key, headers }), 3);
      });

      test('two processes share one route limit between GET and HEAD', async () => {
        const key = a.merchant.secretKey;
        const headers = { 'x-forwarded-for': '203.0.113.12' };
        assert.equal((await a.request('HEAD', '/v1/merchants/me', { key, headers })).status, 200);
        assert.equal((await b.request('GET', '/v1/merchants/me', { key, headers })).status, 200);
        assert.equal((await b.request('HEAD', '/v1/merchants/me', { key, headers })).status, 200);
        assertLimited(await a.request('GET', '/v1/merchants/me', { key, headers }), 3);
        assert.equal((await b.request('HEAD', '/v1/merchants/me', { key, headers })).status, 429);
      });

      test('two processes share the failed-authentication counts', async () => {
        const headers = { 'x-forwarded-for': '203.0.113.11' };
        const wrong = (i: number) => `svc_sk_test_${'w'.repeat(20)}${i}`;
        assertError(
          await a.request('GET', '/v1/webhooks', { key: wrong(1), headers }),
          401,
          'invalid_api_key',
        );
        assertError(
          await b.request('GET', '/v1/webhooks', { key: wrong(2), headers }),
          401,
          'invalid_api_key',
        );
        assertError(
          await a.request('GET', '/v1/webhooks', { key: wrong(3), headers }),
          401,
          'invalid_api_key',
        );
        const res = await b.request('GET', '/v1/webhooks', { key: a.merchant.secretKey, headers });
        assertError(res, 429, 'too_many_failed_authentications');
        assert.ok(Number(res.headers.get('retry-after')) >= 1);
      });

      test('the counters live under REDIS_KEY_PREFIX', async () => {
        const { Redis } = await import('ioredis');
        const redis = new Redis(REDIS_URL as string);
        try {
          const [, keys] = await redis.scan('0', 'MATCH', `${prefix}*`, 'COUNT', 1000);
          assert.ok(
            keys.some((k) => k.startsWith(`${prefix}ratelimit:`)),
            keys.join(', '),
          );
          assert.ok(
            keys.some((k) => k.startsWith(`${prefix}counter:`)),
            keys.join(', '),
          );
        } finally {
          redis.disconnect();
        }
      });
    });
  });
}
