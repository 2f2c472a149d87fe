// Hardening of the HTTP surface (docs/decisions.md#slow-clients, docs/api.md#rate-limits,
// docs/api.md#conventions): the route limit runs before authentication, so refused requests are limited
// and carry the RateLimit headers; every answer carries the security headers and is never cached; slow
// clients are cut off while others are served; one address cannot hold every connection.
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { sqliteCase } from '../helpers/databases.ts';
import { createSession, organizerToken } from '../helpers/sessions.ts';

/** Opens a raw connection to the app and collects what it answers until the server closes it. */
function rawClient(t: TestApp) {
  const { port } = new URL(t.baseUrl);
  const socket: Socket = connect(Number(port), '127.0.0.1');
  let received = '';
  socket.on('data', (chunk) => (received += chunk));
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const connected = new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return { socket, closed, connected, received: () => received };
}

const HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

describe('route limits run before authentication', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(sqliteCase, {
      env: { RATE_LIMIT_MERCHANTS_ME: '3', RATE_LIMIT_SESSIONS_GET: '3', RATE_LIMIT_PAY_READ: '3' },
    });
  });
  after(() => t?.close());

  const refusals: [string, (t: TestApp) => Record<string, string>, number, string][] = [
    [
      'a live key in the sandbox',
      () => ({ authorization: `Bearer svc_sk_live_${'a'.repeat(24)}` }),
      403,
      'key_environment_mismatch',
    ],
    [
      'a secret key with an Origin',
      (t) => ({ authorization: `Bearer ${t.merchant.secretKey}`, origin: 'https://shop.example' }),
      403,
      'secret_key_from_browser',
    ],
    [
      'a wrong X-Merchant-ID',
      (t) => ({ authorization: `Bearer ${t.merchant.secretKey}`, 'x-merchant-id': 'svc_merch_someoneelse' }),
      403,
      'merchant_mismatch',
    ],
    ['no key at all', () => ({}), 401, 'missing_api_key'],
  ];

  for (const [name, headers, status, code] of refusals) {
    test(`${name}: counted, with RateLimit headers, then 429 without looking the key up`, async () => {
      const other = await startTestApp(sqliteCase, { env: { RATE_LIMIT_MERCHANTS_ME: '3' } });
      try {
        for (let i = 0; i < 3; i++) {
          const res = await other.request('GET', '/v1/merchants/me', { headers: headers(other) });
          assert.equal(res.status, status, res.text);
          assert.equal(res.body.code, code);
          assert.equal(res.headers.get('ratelimit-limit'), '3');
          assert.equal(res.headers.get('ratelimit-remaining'), String(2 - i));
          assert.ok(res.headers.get('ratelimit-reset'));
        }
        const queries = other.deps.db.queryCount();
        const limited = await other.request('GET', '/v1/merchants/me', { headers: headers(other) });
        assert.equal(limited.status, 429, limited.text);
        assert.equal(limited.body.code, 'rate_limited');
        assert.ok(Number(limited.headers.get('retry-after')) >= 1);
        assert.equal(other.deps.db.queryCount(), queries, 'a limited request costs no query');
      } finally {
        await other.close();
      }
    });
  }

  test('a publishable key can read its 429 from a browser (CORS before the limit)', async () => {
    const created = await createSession(t);
    const get = () =>
      t.request('GET', `/v1/sessions/${created.session_id}`, {
        key: t.merchant.publishableKey,
        headers: { origin: 'https://shop.example' },
      });
    let res = await get();
    for (let i = 0; i < 5 && res.status !== 429; i++) res = await get();
    assert.equal(res.status, 429);
    assert.equal(res.headers.get('access-control-allow-origin'), 'https://shop.example');
    assert.equal(res.headers.get('ratelimit-remaining'), '0');
  });

  test('a URL holding NUL is counted and limited like any other request', async () => {
    const other = await startTestApp(sqliteCase, { env: { RATE_LIMIT_SESSIONS_GET: '3' } });
    try {
      for (let i = 0; i < 3; i++) {
        const res = await other.request('GET', '/v1/sessions/x%00y', { key: other.merchant.secretKey });
        assert.equal(res.status, 400, res.text);
        assert.equal(res.headers.get('ratelimit-remaining'), String(2 - i));
      }
      const limited = await other.request('GET', '/v1/sessions/x%00y', { key: other.merchant.secretKey });
      assert.equal(limited.status, 429);
    } finally {
      await other.close();
    }
  });

  test('a pay-page request with a wrong token carries the RateLimit headers', async () => {
    const res = await t.request('GET', '/api/v1/session?access=at_nope');
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('ratelimit-limit'), '3');
  });
});

describe('security headers on every answer', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(sqliteCase);
  });
  after(() => t?.close());

  test('answers with credentials, errors, probes and documents are never cached or sniffed', async () => {
    const created = await createSession(t, { via: 'secret' });
    const answers = [
      await t.request('POST', '/v1/sessions', { key: t.merchant.secretKey, body: { cart: created.cart } }),
      await t.request('POST', '/v1/webhooks', {
        key: t.merchant.secretKey,
        body: { url: 'https://hooks.example/h', events: ['*'] },
      }),
      await t.request('GET', `/api/v1/session?access=${organizerToken(created)}`),
      await t.request('GET', `/v1/sessions/${created.session_id}`, { key: t.merchant.secretKey }),
      await t.request('GET', '/v1/nowhere', { key: t.merchant.secretKey }),
      await t.request('POST', '/v1/sessions', { key: t.merchant.secretKey, rawBody: '{"cart":' }),
      await t.request('GET', '/v1/merchants/me'),
      await t.request('GET', '/healthz'),
      await t.request('GET', '/v1/openapi.json'),
    ];
    for (const res of answers) {
      for (const [name, value] of Object.entries(HEADERS)) {
        assert.equal(
          res.headers.get(name),
          value,
          `${name} on a ${res.status} answer: ${res.text.slice(0, 80)}`,
        );
      }
    }
  });

  test('a request Node refuses before routing gets them too', async () => {
    const client = rawClient(t);
    await client.connected;
    client.socket.write('GARBAGE / HTTP/1.1\r\n\r\n');
    await client.closed;
    for (const [name, value] of Object.entries(HEADERS)) {
      assert.match(client.received(), new RegExp(`${name}: ${value}`, 'i'));
    }
  });
});

describe('slow clients and connections per address', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(sqliteCase, {
      env: { HEADERS_TIMEOUT_MS: '500', REQUEST_TIMEOUT_MS: '1000', MAX_CONNECTIONS_PER_IP: '8' },
    });
  });
  after(() => t?.close());

  test('a client that sends half a body is answered 408 and cut off, while others are served', async () => {
    const client = rawClient(t);
    await client.connected;
    // A valid key, so that the request waits for its body (a refused one is answered at once).
    client.socket.write(
      `POST /v1/sessions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.merchant.secretKey}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"ca',
    );
    const healthy = await t.request('GET', '/healthz');
    assert.equal(healthy.status, 200, 'others are served meanwhile');
    const started = Date.now();
    await client.closed;
    assert.ok(Date.now() - started < 5_000, 'cut off within seconds');
    assert.match(client.received(), /^HTTP\/1\.1 408 /);
    assert.match(client.received(), /"code":"request_timeout"/);
  });

  test('a client that never finishes its headers is cut off', async () => {
    const client = rawClient(t);
    await client.connected;
    client.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ');
    const started = Date.now();
    await client.closed;
    assert.ok(Date.now() - started < 5_000);
  });

  test('one address may hold 8 connections; a ninth is answered 429 and closed', async () => {
    const clients = Array.from({ length: 8 }, () => rawClient(t));
    await Promise.all(clients.map((c) => c.connected));
    await sleep(50);
    const ninth = rawClient(t);
    await ninth.closed;
    assert.match(ninth.received(), /^HTTP\/1\.1 429 /);
    assert.match(ninth.received(), /Too many open connections/);
    // Once one closes, the address may connect again.
    clients[0]?.socket.destroy();
    await clients[0]?.closed;
    await sleep(50);
    const res = await t.request('GET', '/healthz');
    assert.equal(res.status, 200);
    for (const c of clients) c.socket.destroy();
  });
});
