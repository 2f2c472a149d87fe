// The dashboard's overview over HTTP (docs/dashboard.md#pages), on SQLite and PostgreSQL: sessions made
// through the API on given days are counted on their days (created, funded, expired, cancelled), funded
// volume per currency, the funding rate and the median time to fund (the mean of the two middles for an
// even count); another merchant's sessions are not counted; the charts are SVG with titles, and every
// number is in the table.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DAY_MS, medianTimeToFund } from '../../src/store/dashboard.ts';
import type { TestApp } from '../helpers/app.ts';
import { HOUR_MS, MINUTE_MS, manualClock } from '../helpers/clock.ts';
import { dashboardRequest, dashboardUser, signIn } from '../helpers/dashboard.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { startPagesApp } from '../helpers/pages.ts';
import { equalGroup, payOk } from '../helpers/payments.ts';
import { createSession, sampleCart } from '../helpers/sessions.ts';

for (const dialect of DIALECTS) {
  describe(`dashboard: overview on ${dialect.name}`, { skip: dialect.skip }, () => {
    let t: TestApp;
    // Noon UTC, so that a few hours either way stay on one day.
    const clock = manualClock(Date.parse('2026-11-10T12:00:00.000Z'));
    before(async () => {
      t = await startPagesApp({ clock }, dialect);
    });
    after(() => t?.close());

    /** The table row of a UTC day: [created, funded, expired, cancelled, volume…]. */
    const rowOf = (page: string, date: string) => {
      const row = new RegExp(`<th scope="row">${date}</th>(.*?)</tr>`).exec(page)?.[1] ?? '';
      return [...row.matchAll(/<td class="num">([^<]*)<\/td>/g)].map((m) => m[1]);
    };

    test('counts each session on its day, with volume, funding rate and median time to fund', async () => {
      // Day 1 (Nov 10): two sessions created; one funded 2 hours later, one cancelled.
      const a = await equalGroup(t, ['Ann', 'Bob']);
      const cancelled = await createSession(t);
      clock.advance(2 * HOUR_MS);
      for (const s of a.shares) await payOk(t, s.shareId);
      await t.request('POST', `/v1/sessions/${cancelled.session_id}/cancel`, { key: t.merchant.secretKey });
      // Day 2 (Nov 11): one created and funded 4 hours later, one expired by the sandbox helper.
      clock.set(Date.parse('2026-11-11T08:00:00.000Z'));
      const second = await equalGroup(t, ['Cy', 'Dee']);
      const expiring = await createSession(t);
      clock.advance(4 * HOUR_MS);
      for (const share of second.shares) await payOk(t, share.shareId);
      const expired = await t.request('POST', `/v1/test_helpers/sessions/${expiring.session_id}/expire`, {
        key: t.merchant.secretKey,
      });
      assert.equal(expired.status, 200, expired.text);
      // Another merchant's funded session on day 2 counts nowhere here.
      const other = await t.createMerchant({ name: 'Other' });
      await createSession({ request: t.request, merchant: other }, { cart: sampleCart() });

      const s = await signIn(t, await dashboardUser(t, 'viewer'));
      const page = await dashboardRequest(t, 'GET', '/dashboard', { cookie: s.cookie });
      assert.equal(page.status, 200, page.text);
      assert.deepEqual(rowOf(page.text, '2026-11-10'), ['2', '1', '0', '1', '100.00 USD']);
      assert.deepEqual(rowOf(page.text, '2026-11-11'), ['2', '1', '1', '0', '100.00 USD']);
      assert.deepEqual(rowOf(page.text, '2026-11-09'), ['0', '0', '0', '0', '0.00 USD']);
      // Four ended: two funded.
      assert.match(page.text, /<p class="big">50 %<\/p>/);
      // Funded after 2 h and after 4 h: the median of an even count is the mean of the two middles.
      assert.match(page.text, /<p class="big">3 h 0 min<\/p>/);
      assert.equal((page.text.match(/<svg class="chart"/g) ?? []).length, 5);
      assert.match(page.text, /role="img" aria-labelledby="created-t created-d"/);
      assert.match(page.text, /total 4, highest day 2/);
    });

    test('the median time to fund is the middle value, or the mean of the two middles (in whole ms)', async () => {
      const shop = await t.createMerchant({ name: 'Median' });
      const client = { request: t.request, merchant: shop };
      const start = clock.now();
      /** A session made an hour after the last, funded `afterMs` after it was made. */
      let made = 0;
      const fundedAfter = async (afterMs: number) => {
        clock.set(start + made++ * HOUR_MS);
        const g = await equalGroup(client, ['Ann', 'Bob']);
        clock.advance(afterMs);
        for (const share of g.shares) await payOk(client, share.shareId);
      };
      for (const afterMs of [10 * MINUTE_MS, 20 * MINUTE_MS, 30 * MINUTE_MS + 1, 40 * MINUTE_MS])
        await fundedAfter(afterMs);
      const median = () => medianTimeToFund(t.deps.db.kysely, shop.merchant.id, start - DAY_MS);
      // The two middles are 20 min and 30 min + 1 ms: their mean, rounded down to whole milliseconds.
      assert.equal(await median(), 25 * MINUTE_MS);
      const s = await signIn(t, await dashboardUser(t, 'viewer', shop));
      const page = await dashboardRequest(t, 'GET', '/dashboard', { cookie: s.cookie });
      assert.match(page.text, /<p class="big">25 min<\/p>/);
      await fundedAfter(50 * MINUTE_MS);
      assert.equal(await median(), 30 * MINUTE_MS + 1, 'an odd count: the middle value');
    });

    test('a merchant with no sessions sees zeros and words, not errors', async () => {
      const other = await t.createMerchant({ name: 'Empty' });
      const s = await signIn(t, await dashboardUser(t, 'owner', other));
      const page = await dashboardRequest(t, 'GET', '/dashboard', { cookie: s.cookie });
      assert.equal(page.status, 200);
      assert.match(page.text, /No session ended yet/);
      assert.match(page.text, /No session funded yet/);
    });
  });
}
