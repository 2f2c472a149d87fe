// The API request log on the dashboard's developers page (docs/dashboard.md#api-request-log), over HTTP, on
// SQLite and PostgreSQL: requests made through the API with either key are listed by request id, route
// pattern, status, duration and key prefix — never an id from the URL, a body or a key; requests of another
// merchant, and requests refused before a key was read, are not; pages of 25 by an "Older requests" link;
// one request found by its id; rows past 7 days are not shown and the housekeeping sweep deletes them.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { purgeOldApiRequests } from '../../src/flows/housekeeping.ts';
import type { TestApp } from '../helpers/app.ts';
import { HOUR_MS, manualClock } from '../helpers/clock.ts';
import { dashboardRequest, dashboardUser, type SignedIn, signIn } from '../helpers/dashboard.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { startPagesApp } from '../helpers/pages.ts';
import { eventually } from '../helpers/payments.ts';
import { sampleCart } from '../helpers/sessions.ts';

const DAY_MS = 24 * HOUR_MS;

/** The request log's rows as the page shows them: [time, request id, route, status, duration, key]. */
function rowsOf(page: string): string[][] {
  const table = /<table id="requests">([\s\S]*?)<\/table>/.exec(page)?.[1] ?? '';
  return [...table.matchAll(/<tr><td>([\s\S]*?)<\/td><\/tr>/g)].map((m) =>
    (m[1] as string).split(/<\/td><td[^>]*>/).map((cell) => cell.replace(/<[^>]+>/g, '').trim()),
  );
}

const olderLink = (page: string) =>
  /href="([^"]+)" rel="next">Older requests/.exec(page)?.[1]?.replace(/&amp;/g, '&');

for (const dialect of DIALECTS) {
  describe(`dashboard: API request log on ${dialect.name}`, { skip: dialect.skip }, () => {
    let t: TestApp;
    const clock = manualClock(Date.parse('2026-11-20T12:00:00.000Z'));
    before(async () => {
      t = await startPagesApp({ clock }, dialect);
    });
    after(() => t?.close());

    const developers = (s: SignedIn, query = '') =>
      dashboardRequest(t, 'GET', `/dashboard/developers${query}`, { cookie: s.cookie });

    test('each API request with a working key is listed: request id, route pattern, status, duration, key prefix', async () => {
      const shop = await t.createMerchant({ name: 'Logged Shop' });
      const created = await t.request('POST', '/v1/sessions', {
        key: shop.secretKey,
        body: { cart: sampleCart({ metadata: { order_ref: 'ORD-SECRET-LOOKING' } }) },
      });
      assert.equal(created.status, 200, created.text);
      clock.advance(1000);
      const read = await t.request('GET', `/v1/sessions/${created.body.session_id}`, {
        key: shop.publishableKey,
      });
      assert.equal(read.status, 200, read.text);
      clock.advance(1000);
      const missing = await t.request('GET', '/v1/sessions/gs_nothing', { key: shop.secretKey });
      assert.equal(missing.status, 404);
      // Refused before any key was known: nobody's log.
      assert.equal(
        (await t.request('GET', '/v1/merchants/me', { key: 'svc_sk_test_nope0nope0nope0nope0' })).status,
        401,
      );
      // Another merchant's request is in its own log only.
      const other = await t.request('GET', '/v1/merchants/me', { key: t.merchant.secretKey });
      assert.equal(other.status, 200);

      const s = await signIn(t, await dashboardUser(t, 'viewer', shop));
      let rows: string[][] = [];
      await eventually(
        async () => {
          rows = rowsOf((await developers(s)).text);
          return rows.length === 3;
        },
        5000,
        'three rows in the log',
      );
      // Newest first.
      assert.deepEqual(
        rows.map((r) => [r[1], r[2], r[3], r[5]]),
        [
          [
            missing.body.request_id,
            'GET /v1/sessions/:sessionId',
            '404 refused',
            `${shop.secretKey.slice(0, 16)}…`,
          ],
          [
            read.body.request_id,
            'GET /v1/sessions/:sessionId',
            '200 ok',
            `${shop.publishableKey.slice(0, 16)}…`,
          ],
          [created.body.request_id, 'POST /v1/sessions', '200 ok', `${shop.secretKey.slice(0, 16)}…`],
        ],
      );
      assert.equal(rows[2]?.[0], '2026-11-20 12:00:00 UTC');
      for (const row of rows) assert.match(row[4] ?? '', /^\d+\.\d ms$/);
      const page = (await developers(s)).text;
      assert.ok(!page.includes(created.body.session_id), 'no id from a URL');
      assert.ok(!page.includes('ORD-SECRET-LOOKING'), 'nothing from a body');
      assert.ok(!page.includes(shop.secretKey), 'no secret key');
      // The publishable key is public and shown whole above the keys (docs/dashboard.md); the log names
      // the key of each request by prefix only, as the rows above show.
      assert.equal(page.split(shop.publishableKey).length - 1, 2, 'the key in use, and its row in the keys');
      assert.ok(!page.includes(other.body.request_id), "another merchant's request is not listed");
    });

    test('pages of 25 newest first, "Older requests" for the rest; one request found by its id', async () => {
      const shop = await t.createMerchant({ name: 'Busy Shop' });
      const ids: string[] = [];
      for (let i = 0; i < 30; i++) {
        clock.advance(10);
        const me = await t.request('GET', '/v1/merchants/me', { key: shop.secretKey });
        assert.equal(me.status, 200);
        ids.push(me.body.request_id);
      }
      const s = await signIn(t, await dashboardUser(t, 'developer', shop));
      let first = '';
      await eventually(
        async () => {
          // The rows are written in batches just after the answers: wait for the newest.
          first = (await developers(s)).text;
          return rowsOf(first)[0]?.[1] === ids.at(-1);
        },
        5000,
        'the newest request on the first page',
      );
      assert.deepEqual(
        rowsOf(first).map((r) => r[1]),
        ids.slice(5).reverse(),
      );
      const next = await dashboardRequest(t, 'GET', olderLink(first) as string, { cookie: s.cookie });
      assert.equal(next.status, 200);
      assert.deepEqual(
        rowsOf(next.text).map((r) => r[1]),
        ids.slice(0, 5).reverse(),
      );
      assert.equal(olderLink(next.text), undefined);

      const found = await developers(s, `?request_id=${ids[7]}`);
      assert.deepEqual(
        rowsOf(found.text).map((r) => r[1]),
        [ids[7]],
      );
      const none = await developers(s, '?request_id=req_nothing');
      assert.equal(rowsOf(none.text).length, 0);
      assert.match(none.text, /No request with this id in the last 7 days/);
      // A cursor that is not one of ours is refused in words, not shown as the first page.
      for (const query of [
        '?before=garbage',
        `?before=1.${ids[3]}x!`,
        `?before=1.${ids[3]}&before=2.${ids[4]}`,
      ]) {
        const refused = await developers(s, query);
        assert.equal(refused.status, 400, query);
        assert.match(refused.text, /Older requests|more than once/, query);
        assert.equal(rowsOf(refused.text).length, 0, query);
      }
      assert.equal((await developers(s, '?before=')).status, 200, 'an empty cursor is the first page');
    });

    test('after 7 days a request is no longer shown, and the housekeeping sweep deletes it', async () => {
      const shop = await t.createMerchant({ name: 'Old Shop' });
      const old = await t.request('GET', '/v1/merchants/me', { key: shop.secretKey });
      clock.advance(2 * DAY_MS);
      const recent = await t.request('GET', '/v1/merchants/me', { key: shop.secretKey });
      const count = async () =>
        Number(
          (
            await t.deps.db.kysely
              .selectFrom('api_requests')
              .select((eb) => eb.fn.countAll().as('n'))
              .where('merchant_id', '=', shop.merchant.id)
              .executeTakeFirstOrThrow()
          ).n,
        );
      await eventually(async () => (await count()) === 2, 5000, 'both rows written');
      clock.advance(5 * DAY_MS + HOUR_MS);
      const s = await signIn(t, await dashboardUser(t, 'viewer', shop));
      const page = (await developers(s)).text;
      assert.deepEqual(
        rowsOf(page).map((r) => r[1]),
        [recent.body.request_id],
        'the 7-day-old request is not shown',
      );
      assert.ok((await purgeOldApiRequests(t.deps)) >= 1);
      assert.equal(await count(), 1, 'the older row was deleted, the recent one kept');
      assert.ok(!(await developers(s)).text.includes(old.body.request_id));
    });
  });
}
