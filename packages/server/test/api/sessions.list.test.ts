import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { assertError } from '../helpers/errors.ts';
import { createSession, SESSION_ENV, sampleCart } from '../helpers/sessions.ts';

interface ListItem {
  session_id: string;
  status: string;
  order_ref: string | null;
  total_cents: number;
  currency: string;
  created_at: string;
  expires_at: string;
}

for (const dialect of DIALECTS) {
  describe(`GET /v1/sessions on ${dialect.name}`, { skip: dialect.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(dialect, { env: SESSION_ENV });
    });
    after(() => t?.close());

    const list = (merchant: TestMerchant, query = '') =>
      t.request('GET', `/v1/sessions${query}`, { key: merchant.secretKey });

    test('a merchant without sessions gets an empty last page', async () => {
      const merchant = await t.createMerchant();
      const res = await list(merchant);
      assert.equal(res.status, 200, res.text);
      assert.match(res.body.request_id, /^req_/);
      assert.deepEqual(
        { ...res.body, request_id: 'x' },
        {
          request_id: 'x',
          data: [],
          has_more: false,
          next_cursor: null,
        },
      );
    });

    test('items show the fields of docs/api.md#list-sessions, newest first', async () => {
      const merchant = await t.createMerchant();
      const first = await createSession(t, {
        merchant,
        cart: sampleCart({ metadata: { order_ref: 'A-1' } }),
      });
      const second = await createSession(t, {
        merchant,
        cart: { total: 500, currency: 'eur', items: [{ name: 'Tea', quantity: 1, unit_price: 500 }] },
      });
      const res = await list(merchant);
      assert.equal(res.status, 200, res.text);
      const data: ListItem[] = res.body.data;
      assert.deepEqual(
        data.map((s) => s.session_id),
        [second.session_id, first.session_id],
      );
      const [newer, older] = data as [ListItem, ListItem];
      assert.deepEqual(Object.keys(newer).sort(), [
        'created_at',
        'currency',
        'expires_at',
        'order_ref',
        'session_id',
        'status',
        'total_cents',
      ]);
      assert.equal(newer.order_ref, null);
      assert.equal(newer.currency, 'eur');
      assert.equal(newer.total_cents, 500);
      assert.equal(newer.expires_at, second.expires_at);
      assert.equal(older.order_ref, 'A-1');
      assert.equal(older.status, 'pending');
      assert.equal(older.total_cents, 10_000);
      assert.equal(older.currency, 'usd');
      assert.ok(Date.parse(newer.created_at) > Date.parse(older.created_at));
      assert.equal(res.body.has_more, false);
      assert.equal(res.body.next_cursor, null);
    });

    test('the status follows the session', async () => {
      const merchant = await t.createMerchant();
      const created = await createSession(t, { merchant });
      const cancel = await t.request('POST', `/v1/sessions/${created.session_id}/cancel`, {
        key: merchant.secretKey,
      });
      assert.equal(cancel.status, 200, cancel.text);
      const res = await list(merchant);
      assert.equal(res.body.data[0].status, 'cancelled');
    });

    test('limit is 1 to 100 (default 25); other values are 400', async () => {
      const merchant = await t.createMerchant();
      for (const query of [
        '?limit=0',
        '?limit=101',
        '?limit=abc',
        '?limit=2.5',
        '?limit=-1',
        '?cursor=abc',
        '?cursor=-5',
        '?cursor=99999999999999999999',
        '?order=asc',
        '?limit=0x10',
        '?limit=1e1',
        '?limit=5.0',
        '?limit=5.',
        '?cursor=1795916194233.0',
        '?limit=%2010',
        '?cursor=0b101',
        '?limit=5&limit=6',
      ]) {
        const res = await list(merchant, query);
        assertError(res, 400, 'invalid_request', query);
      }
      assert.equal((await list(merchant, '?limit=0')).body.error, 'limit must be at least 1');
      assert.equal((await list(merchant, '?limit=101')).body.error, 'limit must be at most 100');
      assert.equal((await list(merchant, '?limit=abc')).body.error, 'limit must be an integer');
      assert.equal((await list(merchant, '?limit=2.5')).body.error, 'limit must be an integer');
      assert.equal(
        (await list(merchant, '?limit=0x10')).body.error,
        'limit must be written in decimal digits',
      );
      assert.equal((await list(merchant, '?limit=5&limit=6')).body.error, 'limit must be given once');
      for (const query of ['?limit=1', '?limit=100']) assert.equal((await list(merchant, query)).status, 200);
    });

    test('default page of 25, then the cursor leads to the rest', async () => {
      const merchant = await t.createMerchant();
      const created: string[] = [];
      for (let i = 0; i < 27; i++)
        created.push((await createSession(t, { merchant, via: 'secret' })).session_id);
      const first = await list(merchant);
      assert.equal(first.body.data.length, 25);
      assert.equal(first.body.has_more, true);
      assert.equal(typeof first.body.next_cursor, 'number');
      const last = first.body.data.at(-1) as ListItem;
      assert.equal(first.body.next_cursor, Date.parse(last.created_at));
      const second = await list(merchant, `?cursor=${first.body.next_cursor}`);
      assert.equal(second.body.data.length, 2);
      assert.equal(second.body.has_more, false);
      assert.equal(second.body.next_cursor, null);
      const listed = [...first.body.data, ...second.body.data].map((s: ListItem) => s.session_id);
      assert.deepEqual(listed, [...created].reverse());
    });

    test('a page that ends exactly at the last session says has_more false', async () => {
      const merchant = await t.createMerchant();
      for (let i = 0; i < 4; i++) await createSession(t, { merchant, via: 'secret' });
      const first = await list(merchant, '?limit=2');
      assert.equal(first.body.has_more, true);
      const second = await list(merchant, `?limit=2&cursor=${first.body.next_cursor}`);
      assert.equal(second.body.data.length, 2);
      assert.equal(second.body.has_more, false);
      assert.equal(second.body.next_cursor, null);
    });

    test('200 sessions created in a burst page through exactly once each, newest first', async () => {
      const merchant = await t.createMerchant();
      const other = await t.createMerchant();
      const created = new Set<string>();
      for (let batch = 0; batch < 10; batch++) {
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            // The other merchant creates in the same burst: its sessions must never show up.
            createSession(t, {
              merchant: i % 5 === 0 ? other : merchant,
              via: i % 2 ? 'secret' : 'publishable',
            }),
          ),
        );
        for (const [i, r] of results.entries()) if (i % 5 !== 0) created.add(r.session_id);
      }
      // Top up to exactly 200 for this merchant.
      const more = await Promise.all(
        Array.from({ length: 200 - created.size }, () => createSession(t, { merchant, via: 'secret' })),
      );
      for (const r of more) created.add(r.session_id);
      assert.equal(created.size, 200);

      const seen: ListItem[] = [];
      let cursor: number | null = null;
      let pages = 0;
      do {
        const query: string = cursor === null ? '?limit=7' : `?limit=7&cursor=${cursor}`;
        const res = await list(merchant, query);
        assert.equal(res.status, 200, res.text);
        assert.ok(res.body.data.length <= 7);
        seen.push(...res.body.data);
        cursor = res.body.next_cursor;
        assert.equal(res.body.has_more, cursor !== null);
        pages++;
      } while (cursor !== null && pages < 100);
      assert.equal(pages, Math.ceil(200 / 7));
      const ids = seen.map((s) => s.session_id);
      assert.equal(new Set(ids).size, ids.length, 'no session listed twice');
      assert.deepEqual(new Set(ids), created);
      for (let i = 1; i < seen.length; i++) {
        assert.ok(
          Date.parse(seen[i - 1]!.created_at) > Date.parse(seen[i]!.created_at),
          `created_at strictly descending at ${i}`,
        );
      }
      const others = await list(other, '?limit=100');
      assert.equal(others.body.data.length, 40);
      assert.ok(others.body.data.every((s: ListItem) => !created.has(s.session_id)));
    });

    test('a publishable key may not list sessions', async () => {
      const res = await t.request('GET', '/v1/sessions', { key: t.merchant.publishableKey });
      assertError(res, 403, 'secret_key_required');
    });

    test('no key is 401', async () => {
      const res = await t.request('GET', '/v1/sessions');
      assertError(res, 401, 'missing_api_key');
    });
  });
}
