/// <reference lib="dom" />
// Every hosted page, in each state a person meets, checked by axe-core (WCAG 2.1 A and AA) in the light and
// the dark theme, checked for sideways scrolling at 320 px, and photographed at 1280 and 360 px in both
// themes (test-artifacts/pages/, kept by CI).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { TestApp } from '../helpers/app.ts';
import { artifactDir, axeViolations, launchChromium } from '../helpers/chromium.ts';
import { newSession, payWithCard, startPagesApp } from '../helpers/pages.ts';
import { CARDS, equalGroup, payOk } from '../helpers/payments.ts';

describe('hosted pages: accessibility, narrow screens, screenshots (Chromium)', () => {
  let t: TestApp;
  let browser: Browser;
  const shots = artifactDir('pages');
  before(async () => {
    [t, browser] = await Promise.all([startPagesApp(), launchChromium()]);
  });
  after(async () => {
    await browser.close();
    await t.close();
  });

  /** The pages to check: name → URL, and what to do on the page before checking it. */
  async function states(): Promise<[string, string, ((page: Page) => Promise<void>)?][]> {
    const fresh = await newSession(t, { customer: { name: 'Ann', email: 'ann@example.com' } });
    const group = await equalGroup(t, ['Ann', 'Bob', 'Cy']);
    await payOk(t, group.shares[0].shareId);
    const funded = await equalGroup(t, ['Ann', 'Bob']);
    for (const s of funded.shares) await payOk(t, s.shareId);
    const cancelled = await equalGroup(t, ['Ann', 'Bob']);
    await payOk(t, cancelled.shares[1].shareId);
    await t.request('POST', `/v1/sessions/${cancelled.created.session_id}/cancel`, {
      key: t.merchant.secretKey,
    });
    return [
      ['organizer-new', fresh.url],
      [
        'organizer-errors',
        fresh.url,
        async (page) => {
          await page.click('#setup-form button[type="submit"]');
          await page.waitForSelector('#m1-name-error');
        },
      ],
      ['organizer-set-up', group.created.session_url],
      [
        'group',
        `${t.baseUrl}/session/${group.created.session_id}?access=${group.created.group_access_token}`,
      ],
      ['share', `${t.baseUrl}/s/${group.shares[1].shareId}`],
      [
        'share-declined',
        `${t.baseUrl}/s/${group.shares[2].shareId}`,
        async (page) => {
          await payWithCard(page, CARDS.declined);
          await page.waitForSelector('#pay-error:not(:empty)');
        },
      ],
      ['share-paid', `${t.baseUrl}/s/${group.shares[0].shareId}`],
      ['organizer-funded', funded.created.session_url],
      ['share-refunded', `${t.baseUrl}/s/${cancelled.shares[1].shareId}`],
      ['organizer-cancelled', cancelled.created.session_url],
      ['refused-403', `${t.baseUrl}/session/${group.created.session_id}`],
      ['refused-404', `${t.baseUrl}/s/shr_nothing0000000000000000`],
    ];
  }

  for (const scheme of ['light', 'dark'] as const) {
    test(`no axe violation on any page, ${scheme} theme; nothing scrolls sideways at 320 px`, async () => {
      const context = await browser.newContext({ colorScheme: scheme, locale: 'en-US' });
      const found: string[] = [];
      // One tab for all the states, as a person goes from link to link (a new tab costs Chromium about
      // as much CPU as three page loads).
      const page = await context.newPage();
      for (const [name, url, prepare] of await states()) {
        // One load a page: checked at 1280 px, then narrowed as a person narrows a window.
        await page.setViewportSize({ width: 1280, height: 800 });
        // goto waits for the load event, by which the page's module script has run and rendered.
        await page.goto(url);
        if (prepare) await prepare(page);
        for (const v of await axeViolations(page)) found.push(`${name}: ${v}`);
        for (const width of [1280, 360]) {
          await page.setViewportSize({ width, height: 800 });
          await page.screenshot({ path: join(shots, `${name}-${scheme}-${width}.png`), fullPage: true });
        }
        await page.setViewportSize({ width: 320, height: 800 });
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        assert.ok(overflow <= 0, `${name} at 320 px scrolls sideways by ${overflow} px`);
      }
      await context.close();
      assert.deepEqual(found, []);
    });
  }

  test('theme=dark in the URL wins over the system’s light scheme', async () => {
    const { url } = await newSession(t);
    const page = await (await browser.newContext({ colorScheme: 'light' })).newPage();
    await page.goto(`${url}&theme=dark`);
    const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    assert.equal(background, 'rgb(17, 19, 24)');
    await page.goto(`${url}&theme=bogus`);
    assert.equal(await page.getAttribute('html', 'data-theme'), 'auto');
  });
});
