// The answers serialized once per cached read (api/answer-bytes.ts): a polled session and the merchant's
// profile answer what a fresh serialization would, with each request's own request_id, and a write shows
// at once.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { changeAllowedOrigins } from '../../src/flows/merchants.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { createSession, SESSION_ENV } from '../helpers/sessions.ts';

const CUSTOMER = { name: 'Ada', email: 'ada@example.com', phone: '+1 555 0100' };

for (const dialect of DIALECTS) {
  describe(`answers read again and again on ${dialect.name}`, { skip: dialect.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(dialect, { env: SESSION_ENV });
    });
    after(() => t?.close());

    const get = (id: string, key: string) => t.request('GET', `/v1/sessions/${id}`, { key });

    test('a polled session answers the same JSON each time, with its own request_id first', async () => {
      const created = await createSession(t);
      const answers = [];
      for (let i = 0; i < 3; i++) answers.push(await get(created.session_id, t.merchant.secretKey));
      const ids = new Set<string>();
      for (const res of answers) {
        assert.equal(res.status, 200, res.text);
        assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
        assert.match(res.text, /^\{"request_id":"req_[0-9A-Za-z]+","/);
        assert.equal(res.body.request_id, res.headers.get('x-request-id'));
        assert.equal(Number(res.headers.get('content-length')), Buffer.byteLength(res.text));
        ids.add(res.body.request_id);
        assert.deepEqual({ ...res.body, request_id: '' }, { ...answers[0]?.body, request_id: '' });
      }
      assert.equal(ids.size, 3);
      assert.equal(answers[0]?.body.session_id, created.session_id);
      assert.equal(answers[0]?.body.status, 'pending');
    });

    test('the publishable key never gets the customer the secret key was shown, in either order', async () => {
      const first = await createSession(t, { customer: CUSTOMER });
      const second = await createSession(t, { customer: CUSTOMER });
      const secretThenPublic = [
        await get(first.session_id, t.merchant.secretKey),
        await get(first.session_id, t.merchant.publishableKey),
      ];
      const publicThenSecret = [
        await get(second.session_id, t.merchant.publishableKey),
        await get(second.session_id, t.merchant.secretKey),
      ];
      assert.deepEqual(secretThenPublic[0]?.body.customer, CUSTOMER);
      assert.equal(secretThenPublic[1]?.body.customer, undefined);
      assert.doesNotMatch(secretThenPublic[1]?.text ?? '', /ada@example\.com/);
      assert.equal(publicThenSecret[0]?.body.customer, undefined);
      assert.deepEqual(publicThenSecret[1]?.body.customer, CUSTOMER);
    });

    test('a write to the session shows in the very next read', async () => {
      const created = await createSession(t);
      assert.equal((await get(created.session_id, t.merchant.secretKey)).body.status, 'pending');
      const cancelled = await t.request('POST', `/v1/sessions/${created.session_id}/cancel`, {
        key: t.merchant.secretKey,
      });
      assert.equal(cancelled.status, 200, cancelled.text);
      const after = await get(created.session_id, t.merchant.secretKey);
      assert.equal(after.body.status, 'cancelled');
    });

    test("the merchant's profile shows a change of its origins in the very next read", async () => {
      const me = () => t.request('GET', '/v1/merchants/me', { key: t.merchant.secretKey });
      const before = await me();
      assert.equal(before.status, 200, before.text);
      const rest = (text: string) => text.replace(/^\{"request_id":"[^"]+",/, '');
      assert.equal(rest((await me()).text), rest(before.text));
      await changeAllowedOrigins(t.deps.db, t.merchant.merchant.id, {
        add: ['https://other.example'],
        remove: [],
      });
      const changed = await me();
      assert.deepEqual(changed.body.allowed_origins, [
        ...before.body.allowed_origins,
        'https://other.example',
      ]);
      assert.deepEqual(
        { ...changed.body, request_id: '', allowed_origins: [] },
        { ...before.body, request_id: '', allowed_origins: [] },
      );
    });
  });
}
