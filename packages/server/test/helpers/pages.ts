// What the hosted-page suites share: a real server whose public URLs name its own loopback port (so the
// links it hands out work in a browser), a group set up over the pay-page API, and page helpers.
import assert from 'node:assert/strict';
import type { Browser, Page, Route } from 'playwright-core';
import { RELAXED_LIMITS, type StartOptions, startTestApp, type TestApp } from './app.ts';
import { freePort } from './chromium.ts';
import { type DialectCase, sqliteCase } from './databases.ts';
import { type Created, createSession, organizerToken } from './sessions.ts';

/** A real server on its own loopback port, on SQLite unless the suite names another database. */
export async function startPagesApp(
  options: StartOptions = {},
  dialect: DialectCase = sqliteCase,
): Promise<TestApp> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  return startTestApp(dialect, {
    ...options,
    port,
    env: { PUBLIC_BASE_URL: `${origin}/v1`, PUBLIC_PAY_URL: origin, ...RELAXED_LIMITS, ...options.env },
  });
}

/** A session made by the merchant's server, and the organizer's page URL. */
export async function newSession(
  t: TestApp,
  options: Parameters<typeof createSession>[1] = {},
): Promise<{ created: Created; url: string; token: string }> {
  const created = await createSession(t, options);
  return { created, url: created.session_url, token: organizerToken(created) };
}

/** Fills the sandbox card form on `page` and submits it. */
export async function payWithCard(page: Page, number: string) {
  await page.fill('#card-number', number);
  await page.fill('#card-exp', '12/34');
  await page.fill('#card-cvc', '123');
  await page.click('#pay-button');
}

/**
 * Holds the polls of a share's page (GET /api/v1/shares/{id}) until `release` is called, which lets them
 * through: for a test that reads what the page said on its own before a poll may redraw it.
 */
export async function holdSharePolls(page: Page): Promise<{ release: () => Promise<void> }> {
  const held: Route[] = [];
  let holding = true;
  const pattern = '**/api/v1/shares/*';
  await page.route(pattern, (route) =>
    holding && route.request().method() === 'GET' ? void held.push(route) : route.continue(),
  );
  return {
    release: async () => {
      holding = false;
      // A poll the page gave up on meanwhile (it navigated, or redrew) is already settled: nothing to let go.
      for (const route of held.splice(0)) await route.continue().catch(() => undefined);
      await page.unroute(pattern);
    },
  };
}

/** The session as the merchant API shows it. */
export async function sessionOf(t: TestApp, sessionId: string) {
  const res = await t.request('GET', `/v1/sessions/${sessionId}`, { key: t.merchant.secretKey });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

/**
 * Closes every browser context still open: for a suite's afterEach, when its tests open their pages in
 * contexts of their own. A hosted page left open polls the session every 3 seconds and ticks its clock
 * every second for as long as the browser runs, which slows every suite running beside it.
 */
export async function closeContexts(browser: Browser): Promise<void> {
  await Promise.all(browser.contexts().map((context) => context.close()));
}

/** `url` in a fresh browser context (another person's browser); a script error on the page fails the test. */
export async function openPage(
  browser: Browser,
  url: string,
  options: { width?: number } = {},
): Promise<Page> {
  const context = await browser.newContext({
    locale: 'en-US',
    viewport: { width: options.width ?? 1024, height: 900 },
  });
  const page = await context.newPage();
  page.on('pageerror', (e) => assert.fail(`script error on ${url}: ${e.message}`));
  await page.goto(url);
  return page;
}
