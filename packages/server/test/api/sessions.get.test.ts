import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { assertError } from '../helpers/errors.ts';
import { createSession, organizerToken, SESSION_ENV } from '../helpers/sessions.ts';

for (const dialect of DIALECTS) {
  describe(`GET /v1/sessions/{id} on ${dialect.name}`, { skip: dialect.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(dialect, { env: SESSION_ENV });
    });
    after(() => t?.close());

    const get = (id: string, key = t.merchant.secretKey) => t.request('GET', `/v1/sessions/${id}`, { key });

    test('the secret key sees the session, its group and the customer', async () => {
      const created = await createSession(t, { customer: { name: 'Ada', email: 'ada@example.com' } });
      const res = await get(created.session_id);
      assert.equal(res.status, 200, res.text);
      const body = res.body;
      assert.match(body.request_id, /^req_/);
      assert.match(body.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      assert.match(body.group.id, /^grp_/);
      assert.match(body.group.members[0].id, /^mem_/);
      assert.deepEqual(
        { ...body, request_id: 'x', created_at: 'x', group: { ...body.group, id: 'x', members: 'x' } },
        {
          request_id: 'x',
          session_id: created.session_id,
          status: 'pending',
          created_at: 'x',
          expires_at: created.expires_at,
          order_ref: 'ORD-1001',
          currency: 'usd',
          total_cents: 10_000,
          group: { id: 'x', size: 1, mode: 'equal', paid_amount: 0, pending_amount: 10_000, members: 'x' },
          charges: [],
          transfer: null,
          refunds: [],
          disputes: [],
          customer: { name: 'Ada', email: 'ada@example.com' },
        },
      );
      assert.deepEqual(body.group.members, [
        { id: body.group.members[0].id, name: 'Ada', amount_cents: 10_000, status: 'pending' },
      ]);
    });

    test('the publishable key (the SDK polling) sees the same, without the customer', async () => {
      const created = await createSession(t, { customer: { name: 'Ada', email: 'ada@example.com' } });
      const secret = await get(created.session_id);
      const res = await get(created.session_id, t.merchant.publishableKey);
      assert.equal(res.status, 200, res.text);
      assert.equal('customer' in res.body, false);
      const { customer: _, request_id: __, ...rest } = secret.body;
      assert.deepEqual({ ...res.body, request_id: undefined }, { ...rest, request_id: undefined });
    });

    test('the group as the organizer set it up', async () => {
      const created = await createSession(t);
      const put = await t.request('PUT', `/api/v1/session/group?access=${organizerToken(created)}`, {
        body: { mode: 'equal', members: [{ name: 'Ada' }, { name: 'Ben' }, { name: 'Cy' }] },
      });
      assert.equal(put.status, 200, put.text);
      const res = await get(created.session_id);
      assert.equal(res.body.group.size, 3);
      assert.equal(res.body.group.mode, 'equal');
      assert.deepEqual(
        res.body.group.members.map((m: { name: string; amount_cents: number; status: string }) => [
          m.name,
          m.amount_cents,
          m.status,
        ]),
        [
          ['Ada', 3334, 'pending'],
          ['Ben', 3333, 'pending'],
          ['Cy', 3333, 'pending'],
        ],
      );
      assert.equal(res.body.group.paid_amount, 0);
      assert.equal(res.body.group.pending_amount, 10_000);
    });

    test('a session without order_ref shows null', async () => {
      const created = await createSession(t, {
        cart: { total: 100, currency: 'usd', items: [{ name: 'Pin', quantity: 1, unit_price: 100 }] },
      });
      const res = await get(created.session_id);
      assert.equal(res.body.order_ref, null);
      assert.equal(res.body.group.members[0].name, 'Organizer');
    });

    test('an organizer created without a name is named in their language: the locale, else their browser', async () => {
      const cart = { total: 100, currency: 'eur', items: [{ name: 'Pin', quantity: 1, unit_price: 100 }] };
      const french = await createSession(t, { cart, extra: { locale: 'fr' } });
      const german = await createSession(t, { cart, headers: { 'accept-language': 'de-AT, en;q=0.5' } });
      const japanese = await createSession(t, {
        cart,
        extra: { locale: 'ja' },
        headers: { 'accept-language': 'de' },
      });
      const named = await createSession(t, { cart, extra: { locale: 'fr' }, customer: { name: 'Ann' } });
      const names = [];
      for (const created of [french, german, japanese, named])
        names.push((await get(created.session_id)).body.group.members[0].name);
      assert.deepEqual(names, ['Organisateur', 'Organisator', '幹事', 'Ann']);
    });

    test('an unknown id is 404 session_not_found', async () => {
      for (const id of ['gs_doesnotexist000000', 'x', `gs_${'a'.repeat(90)}`]) {
        const res = await get(id);
        assertError(res, 404, 'session_not_found', id);
      }
    });

    test('another merchant’s session is 404, with either of its keys', async () => {
      const other = await t.createMerchant();
      const created = await createSession(t, { merchant: other });
      for (const key of [t.merchant.secretKey, t.merchant.publishableKey]) {
        const res = await get(created.session_id, key);
        assertError(res, 404, 'session_not_found');
      }
      assert.equal((await get(created.session_id, other.secretKey)).status, 200);
    });

    test('no key is 401', async () => {
      const created = await createSession(t);
      const res = await t.request('GET', `/v1/sessions/${created.session_id}`);
      assertError(res, 401, 'missing_api_key');
    });
  });
}
