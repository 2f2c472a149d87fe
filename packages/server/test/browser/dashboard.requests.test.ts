/// <reference lib="dom" />
// The API request log on the developers page in real Chromium (docs/dashboard.md#api-request-log), on
// SQLite and PostgreSQL: requests made through the API appear newest first by request id, route pattern,
// status, duration and key prefix; "Older requests" pages on; a request id from an API answer finds its
// row; the table scrolls inside its own box at 320 px, and axe-core finds nothing to fix in light or dark.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import type { TestApp } from '../helpers/app.ts';
import { artifactDir, axeViolations, launchChromium } from '../helpers/chromium.ts';
import { manualClock } from '../helpers/clock.ts';
import { dashboardUser, linkToken } from '../helpers/dashboard.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { startPagesApp } from '../helpers/pages.ts';
import { eventually } from '../helpers/payments.ts';

for (const dialect of DIALECTS) {
  describe(`dashboard request log (Chromium) on ${dialect.name}`, { skip: dialect.skip }, () => {
    let t: TestApp;
    let browser: Browser;
    const shots = artifactDir('dashboard');
    const ids: string[] = [];
    // Rows are ordered by their time to the millisecond: the clock moves between requests, so that the
    // order asserted is the order they were made in.
    const clock = manualClock(Date.now());

    before(async () => {
      [t, browser] = await Promise.all([startPagesApp({ clock }, dialect), launchChromium()]);
      // 30 requests: the first page shows 25.
      for (let i = 0; i < 29; i++) {
        clock.advance(7);
        const me = await t.request('GET', '/v1/merchants/me', { key: t.merchant.secretKey });
        assert.equal(me.status, 200);
        ids.push(me.body.request_id);
      }
      clock.advance(7);
      const missing = await t.request('GET', '/v1/sessions/gs_nothing', { key: t.merchant.publishableKey });
      assert.equal(missing.status, 404);
      ids.push(missing.body.request_id);
      // Written in batches just after the answers: wait until the last one is in.
      await eventually(
        async () =>
          Number(
            (
              await t.deps.db.kysely
                .selectFrom('api_requests')
                .select((eb) => eb.fn.countAll().as('n'))
                .executeTakeFirstOrThrow()
            ).n,
          ) === 30,
      );
    });
    after(async () => {
      await browser?.close();
      await t?.close();
    });

    async function signedIn(scheme: 'light' | 'dark', width = 1280) {
      const user = await dashboardUser(t, 'viewer');
      const context = await browser.newContext({ colorScheme: scheme, viewport: { width, height: 800 } });
      const page = await context.newPage();
      await page.goto(`${t.baseUrl}/dashboard/sign-in?token=${await linkToken(t, user)}`);
      await page.click('text=Continue to the dashboard');
      await page.waitForURL(/\/dashboard\/sessions$/);
      await page.click('nav >> text=Developers');
      await page.waitForURL(/\/dashboard\/developers$/);
      return { context, page };
    }

    const cells = (page: import('playwright-core').Page, column: number) =>
      page.locator(`#requests tbody td:nth-child(${column})`).allTextContents();

    test('newest first, 25 a page; Older requests; found by request id', async () => {
      const { context, page } = await signedIn('light');
      assert.deepEqual(await cells(page, 2), ids.slice(5).reverse());
      const [route, status, key] = await Promise.all([cells(page, 3), cells(page, 4), cells(page, 6)]);
      assert.equal(route[0], 'GET /v1/sessions/:sessionId');
      assert.equal(status[0], '404 refused');
      assert.equal(key[0], `${t.merchant.publishableKey.slice(0, 16)}…`);
      assert.equal(route[1], 'GET /v1/merchants/me');
      assert.equal(status[1], '200 ok');
      assert.equal(key[1], `${t.merchant.secretKey.slice(0, 16)}…`);
      await page.screenshot({ path: join(shots, `developers-requests-${dialect.name}.png`), fullPage: true });
      await page.click('text=Older requests');
      await page.waitForURL(/before=/);
      assert.deepEqual(await cells(page, 2), ids.slice(0, 5).reverse());
      assert.equal(await page.locator('text=Older requests').count(), 0);
      await page.fill('#request-id', ids[3] as string);
      await page.click('button:has-text("Find")');
      await page.waitForURL(/request_id=/);
      assert.deepEqual(await cells(page, 2), [ids[3]]);
      await context.close();
    });

    for (const scheme of ['light', 'dark'] as const) {
      test(`no axe violation, ${scheme}; nothing scrolls sideways at 320 px`, async () => {
        const wide = await signedIn(scheme);
        const violations = await axeViolations(wide.page);
        assert.deepEqual(violations, []);
        await wide.context.close();
        const narrow = await signedIn(scheme, 320);
        const overflow = await narrow.page.evaluate(
          () => document.documentElement.scrollWidth - window.innerWidth,
        );
        assert.ok(overflow <= 0, `the developers page at 320 px scrolls sideways by ${overflow} px`);
        await narrow.page.screenshot({
          path: join(shots, `developers-requests-${dialect.name}-${scheme}-320.png`),
          fullPage: true,
        });
        await narrow.context.close();
      });
    }
  });
}
