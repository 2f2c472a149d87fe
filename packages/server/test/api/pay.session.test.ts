// The pay-page API under {pay_url}/api/v1 (docs/api.md#pay-page-api): what the hosted pages read and the organizer's
// cancel. PUBLIC_PAY_URL has no path here, so it is served at /api/v1 on the same server.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { assertError } from '../helpers/errors.ts';
import {
  type Created,
  createSession,
  eventRows,
  organizerToken,
  PAY_URL,
  SESSION_ENV,
} from '../helpers/sessions.ts';

for (const dialect of DIALECTS) {
  describe(`pay-page API on ${dialect.name}: the session and shares`, { skip: dialect.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(dialect, { env: SESSION_ENV });
    });
    after(() => t?.close());

    const page = (token: string) => t.request('GET', `/api/v1/session?access=${encodeURIComponent(token)}`);

    /** A session split equally over Ada (organizer), Ben and Cy; Ben has an email. */
    async function groupOfThree(): Promise<{ created: Created; token: string }> {
      const created = await createSession(t, { customer: { name: 'Ada', email: 'ada@example.com' } });
      const token = organizerToken(created);
      const put = await t.request('PUT', `/api/v1/session/group?access=${token}`, {
        body: {
          mode: 'equal',
          members: [{ name: 'Ada' }, { name: 'Ben', email: 'ben@example.com' }, { name: 'Cy' }],
        },
      });
      assert.equal(put.status, 200, put.text);
      return { created, token };
    }

    test('the organizer token shows the organizer view, with share links and emails', async () => {
      const { created, token } = await groupOfThree();
      const res = await page(token);
      assert.equal(res.status, 200, res.text);
      const body = res.body;
      assert.match(body.request_id, /^req_/);
      assert.equal(body.role, 'organizer');
      assert.equal(body.session_id, created.session_id);
      assert.equal(body.status, 'pending');
      assert.equal(body.merchant_name, 'Test Shop');
      assert.equal(body.order_ref, 'ORD-1001');
      assert.equal(body.currency, 'usd');
      assert.equal(body.total_cents, 10_000);
      assert.equal(body.consumer_fee_rate, 0.01);
      assert.equal(body.expires_at, created.expires_at);
      assert.deepEqual(
        body.cart.items.map((i: { id: string }) => i.id),
        ['sku_dinner', 'sku_cake'],
      );
      assert.equal(body.cart.tax, 600);
      assert.equal(body.cart.shipping, 400);
      assert.deepEqual(body.cart.fees, []);
      assert.equal(
        body.join_url,
        `${PAY_URL}/session/${created.session_id}?access=${created.group_access_token}`,
      );
      assert.equal(body.group.set_up, true);
      assert.equal(body.group.size, 3);
      const members = body.group.members;
      assert.deepEqual(
        members.map((m: Record<string, unknown>) => [
          m.name,
          m.email,
          m.amount_cents,
          m.amount_due_cents,
          m.is_organizer,
        ]),
        [
          ['Ada', 'ada@example.com', 3334, 3367, true],
          ['Ben', 'ben@example.com', 3333, 3366, false],
          ['Cy', null, 3333, 3366, false],
        ],
      );
      for (const m of members) {
        assert.match(m.share_id, /^shr_[0-9A-Za-z]{22,}$/);
        assert.equal(m.share_url, `${PAY_URL}/s/${m.share_id}`);
      }
      assert.equal(new Set(members.map((m: { share_id: string }) => m.share_id)).size, 3);
    });

    test('the group token shows the member view: no share links, no emails, no join link', async () => {
      const { created } = await groupOfThree();
      const res = await page(created.group_access_token);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.role, 'member');
      assert.equal(res.body.session_id, created.session_id);
      assert.equal('join_url' in res.body, false);
      assert.equal('success_url' in res.body, false);
      for (const m of res.body.group.members) {
        assert.deepEqual(Object.keys(m).sort(), ['amount_cents', 'id', 'is_organizer', 'name', 'status']);
      }
      assert.ok(!res.text.includes('shr_'), 'no share id anywhere in the member view');
      assert.ok(!res.text.includes('@example.com'), 'no email anywhere in the member view');
    });

    test('a token that is wrong, unknown or missing is refused', async () => {
      const { created, token } = await groupOfThree();
      for (const bad of [
        `${token}x`,
        'at_unknown0000000000000000000',
        'gat_unknown00000000000000000',
        created.session_id,
        'nonsense',
      ]) {
        const res = await page(bad);
        assertError(res, 401, 'invalid_access_token', bad);
      }
      for (const path of ['/api/v1/session', '/api/v1/session?access=']) {
        assertError(await t.request('GET', path), 401, 'invalid_access_token', path);
      }
    });

    test('one session’s token does not open another', async () => {
      const a = await groupOfThree();
      const b = await groupOfThree();
      assert.equal((await page(a.token)).body.session_id, a.created.session_id);
      assert.equal((await page(b.created.group_access_token)).body.session_id, b.created.session_id);
    });

    test('GET /shares/:shareId shows one share, with the consumer fee rounded half up', async () => {
      const created = await createSession(t);
      const token = organizerToken(created);
      // 33.50 × 1 % = 0.335 → 0.34; 33.00 × 1 % = 0.33.
      const put = await t.request('PUT', `/api/v1/session/group?access=${token}`, {
        body: {
          mode: 'custom',
          members: [
            { name: 'Ada', amount_cents: 3350 },
            { name: 'Ben', amount_cents: 3350 },
            { name: 'Cy', amount_cents: 3300 },
          ],
        },
      });
      assert.equal(put.status, 200, put.text);
      const [ada, , cy] = put.body.group.members;
      const res = await t.request('GET', `/api/v1/shares/${ada.share_id}`);
      assert.equal(res.status, 200, res.text);
      assert.match(res.body.request_id, /^req_/);
      assert.deepEqual(
        { ...res.body, request_id: 'x', cart: 'x' },
        {
          request_id: 'x',
          share_id: ada.share_id,
          session_status: 'pending',
          merchant_name: 'Test Shop',
          order_ref: 'ORD-1001',
          currency: 'usd',
          expires_at: created.expires_at,
          member: { id: ada.id, name: 'Ada', amount_cents: 3350, status: 'pending' },
          status: 'pending',
          amount_cents: 3350,
          consumer_fee_rate: 0.01,
          consumer_fee_cents: 34,
          amount_due_cents: 3384,
          capture: 'immediate',
          failure: null,
          failure_code: null,
          next_action: null,
          payment: null,
          cart: 'x',
          split: { mode: 'custom', items: null, basis_points: null },
          group: { size: 3, paid_count: 0, total_cents: 10000, paid_amount: 0, pending_amount: 10000 },
        },
      );
      assert.equal(res.body.cart.items.length, 2);
      const third = await t.request('GET', `/api/v1/shares/${cy.share_id}`);
      assert.equal(third.body.consumer_fee_cents, 33);
      assert.equal(third.body.amount_due_cents, 3333);
      assert.equal(ada.amount_due_cents, 3384);
    });

    test('an unknown share is 404 share_not_found', async () => {
      for (const id of ['shr_unknown000000000000000', 'x', `shr_${'a'.repeat(90)}`]) {
        const res = await t.request('GET', `/api/v1/shares/${id}`);
        assertError(res, 404, 'share_not_found');
      }
    });

    test('the organizer cancels; one group.cancelled event; after that every change is 409', async () => {
      const { created, token } = await groupOfThree();
      const shareId = (await page(token)).body.group.members[1].share_id;

      const byMember = await t.request('POST', `/api/v1/session/cancel?access=${created.group_access_token}`);
      assertError(byMember, 403, 'organizer_only');

      const res = await t.request('POST', `/api/v1/session/cancel?access=${token}`);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(
        { ...res.body, request_id: 'x' },
        { request_id: 'x', session_id: created.session_id, status: 'cancelled', refunds: [] },
      );
      assert.deepEqual(
        (await eventRows(t, created.session_id)).map((e) => e.type),
        ['group.created', 'group.cancelled'],
      );

      const again = await t.request('POST', `/api/v1/session/cancel?access=${token}`);
      assertError(again, 409, 'session_not_pending');
      assert.equal(
        again.body.error,
        'The session is cancelled; only a pending session can be changed or paid.',
      );
      const put = await t.request('PUT', `/api/v1/session/group?access=${token}`, {
        body: { mode: 'equal', members: [{ name: 'Ada' }, { name: 'Ben' }] },
      });
      assertError(put, 409, 'session_not_pending');
      assert.equal(
        put.body.error,
        'The session is cancelled; only a pending session can be changed or paid.',
      );
      const join = await t.request('POST', `/api/v1/session/join?access=${created.group_access_token}`, {
        body: { name: 'Dee' },
      });
      assertError(join, 409, 'session_not_pending');
      assert.equal(
        join.body.error,
        'The session is cancelled; only a pending session can be changed or paid.',
      );

      // Reading still works, and says what happened.
      assert.equal((await page(token)).body.status, 'cancelled');
      assert.equal((await page(token)).body.group.size, 3);
      const share = await t.request('GET', `/api/v1/shares/${shareId}`);
      assert.equal(share.status, 200);
      assert.equal(share.body.session_status, 'cancelled');
      assert.deepEqual(
        (await eventRows(t, created.session_id)).map((e) => e.type),
        ['group.created', 'group.cancelled'],
      );
    });

    test('an expired session takes no changes either', async () => {
      const { created, token } = await groupOfThree();
      await t.request('POST', `/v1/test_helpers/sessions/${created.session_id}/expire`, {
        key: t.merchant.secretKey,
      });
      const put = await t.request('PUT', `/api/v1/session/group?access=${token}`, {
        body: { mode: 'equal', members: [{ name: 'Ada' }, { name: 'Ben' }] },
      });
      assertError(put, 409, 'session_not_pending');
      const cancel = await t.request('POST', `/api/v1/session/cancel?access=${token}`);
      assertError(cancel, 409, 'session_not_pending');
      assert.equal((await page(token)).body.status, 'expired');
    });

    test('pay-page answers allow any origin and never need an API key', async () => {
      const { token } = await groupOfThree();
      const res = await t.request('GET', `/api/v1/session?access=${token}`, {
        headers: { origin: 'https://elsewhere.example' },
      });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('access-control-allow-origin'), '*');
    });
  });
}
