// The dashboard's overview over HTTP (docs/dashboard.md#pages), on SQLite and PostgreSQL: sessions made
// through the API on given days are counted on their days (created, funded, expired, cancelled), funded
// volume per currency, the funding rate and the median time to fund; another merchant's sessions are not
// counted; the charts are SVG with titles, and every number is in the table.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import { HOUR_MS, manualClock } from '../helpers/clock.ts';
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
      // Funded after 2 h and after 4 h: the lower middle is 2 h.
      assert.match(page.text, /<p class="big">2 h 0 min<\/p>/);
      assert.equal((page.text.match(/<svg class="chart"/g) ?? []).length, 5);
      assert.match(page.text, /role="img" aria-labelledby="created-t created-d"/);
      assert.match(page.text, /total 4, highest day 2/);
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
