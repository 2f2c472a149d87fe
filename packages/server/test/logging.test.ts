// What the log holds: one line per request (request_id, route, status, ms), and never a key, a secret, an
// access token or a card number, wherever the client put it.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestApp, type TestApp, type TestResponse } from './helpers/app.ts';
import { DIALECTS } from './helpers/databases.ts';
import { rawHttp } from './helpers/raw-http.ts';

const CARD = '4242424242424242';

for (const dialect of DIALECTS) {
  describe(`the log on ${dialect.name}`, { skip: dialect.skip }, () => {
    let t: TestApp;
    const requestIds: { id: string; status: number }[] = [];
    const secrets: string[] = [CARD];

    const send = async (method: string, path: string, options: Parameters<TestApp['request']>[2] = {}) => {
      const res: TestResponse = await t.request(method, path, options);
      requestIds.push({ id: res.headers.get('x-request-id') ?? '', status: res.status });
      return res;
    };

    before(async () => {
      t = await startTestApp(dialect);
      const m = t.merchant;
      const unknownSecretKey = `svc_sk_test_${randomBytes(16).toString('hex').slice(0, 27)}`;
      const accessToken = `at_${randomBytes(20).toString('hex')}`;
      const shareId = `shr_${randomBytes(20).toString('hex')}`;
      secrets.push(
        m.secretKey,
        m.publishableKey,
        m.merchant.signingSecret,
        m.merchant.sessionWebhookSecret,
        unknownSecretKey,
        accessToken,
        shareId,
      );

      await send('GET', '/v1/merchants/me', { key: m.secretKey });
      await send('GET', '/v1/merchants/me', {
        key: m.publishableKey,
        headers: { origin: 'https://shop.example' },
      });
      await send('GET', '/v1/merchants/me', { key: unknownSecretKey });
      await send('GET', '/v1/merchants/me', {
        key: m.secretKey,
        headers: { origin: 'https://shop.example' },
      });
      const created = await send('POST', '/v1/webhooks', {
        key: m.secretKey,
        body: { url: `https://hooks.example/in?token=${m.merchant.signingSecret}`, events: ['*'] },
      });
      assert.equal(created.status, 200, created.text);
      secrets.push(created.body.secret);
      await send('POST', '/v1/webhooks', {
        key: m.secretKey,
        body: { url: 'https://hooks.example/x', events: ['*'], signing_secret: m.merchant.signingSecret },
      });
      await send('POST', '/v1/webhooks', {
        key: m.secretKey,
        body: { url: 'https://hooks.example/x', events: ['*'], card: { number: CARD, cvc: '123' } },
      });
      await send('POST', '/v1/webhooks', { key: m.secretKey, rawBody: `{"card":{"number":"${CARD}"` });
      await send('POST', '/v1/webhooks', {
        key: m.secretKey,
        rawBody: `number=${CARD}`,
        headers: { 'content-type': 'text/plain' },
      });
      await send('POST', '/v1/webhooks', {
        key: m.secretKey,
        body: { url: `https://hooks.example/${CARD}`, events: [m.secretKey] },
      });
      await send('GET', `/v1/webhooks?api_key=${m.secretKey}&card=${CARD}`, { key: m.secretKey });
      await send('GET', `/v1/nowhere/${m.secretKey}/${CARD}`);
      await send('GET', `/api/v1/session?access=${accessToken}`);
      await send('GET', `/api/v1/shares/${shareId}`);
      await send('POST', '/v1/sessions', {
        key: m.publishableKey,
        headers: { origin: 'https://shop.example', 'x-service-signature': m.merchant.signingSecret },
        body: {
          cart: { total: 100, currency: 'usd', items: [{ name: CARD, quantity: 1, unit_price: 100 }] },
        },
      });
      // A URL fetch would refuse to send, byte for byte.
      const rawRes = await rawHttp(t.baseUrl, { method: 'GET', path: `/v1/webhooks/%E0%A4%A${m.secretKey}` });
      const raw = rawRes.headers.get('x-request-id') ?? '';
      requestIds.push({ id: raw, status: 400 });
      // The request line is written when the response has gone; give the last one a moment.
      for (let i = 0; i < 50 && !t.logLines.some((l) => l.includes(raw)); i++) await sleep(20);
    });
    after(() => t?.close());

    test('no key, secret, token or card number appears anywhere in the log', () => {
      assert.ok(t.logLines.length >= requestIds.length, 'the log was captured');
      const log = t.logLines.join('\n');
      for (const secret of secrets) {
        assert.ok(secret.length >= 16);
        assert.ok(!log.includes(secret), `${secret.slice(0, 12)}… is in the log`);
      }
      // Nor a distinctive part of one (a log line cut short must not leak the start of a key).
      for (const secret of secrets.filter((s) => s.startsWith('svc_') || s.startsWith('whsec_'))) {
        const body = secret.slice(secret.lastIndexOf('_') + 1);
        assert.ok(!log.includes(body.slice(0, 12)), `part of ${secret.slice(0, 12)}… is in the log`);
      }
    });

    test('each request has exactly one log line, with request_id, route, status and ms', () => {
      const entries = t.logLines.map((line) => JSON.parse(line) as Record<string, unknown>);
      for (const { id, status } of requestIds) {
        assert.match(id, /^req_/);
        const lines = entries.filter((e) => e.request_id === id || JSON.stringify(e).includes(id));
        assert.equal(lines.length, 1, `${id} (status ${status}): ${lines.length} lines`);
        const [line] = lines;
        assert.equal(line?.request_id, id);
        assert.equal(typeof line?.route, 'string');
        assert.equal(line?.status, status);
        assert.equal(typeof line?.ms, 'number');
        assert.ok((line?.ms as number) >= 0);
      }
      const requestLines = entries.filter((e) => e.request_id !== undefined);
      assert.equal(requestLines.length, requestIds.length, 'no request lines beyond one per request');
    });

    test('the route is logged as its pattern, not the URL', () => {
      const routes = t.logLines.map((line) => JSON.parse(line).route).filter(Boolean);
      assert.ok(routes.includes('/v1/merchants/me'));
      assert.ok(routes.includes('/v1/webhooks'));
      assert.ok(routes.includes('/api/v1/shares/:shareId'));
      assert.ok(!routes.some((r: string) => r.includes('?')));
    });
  });
}
