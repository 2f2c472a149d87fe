/// <reference lib="dom" />
// Stripe Connect onboarding from the settings page in real Chromium, against the local fake of Stripe's API
// (docs/dashboard.md#payouts-with-stripe): an owner presses the button, follows the one-time link to
// "Stripe", comes back to our return page and from there to Settings, which shows the connected account;
// axe-core finds nothing to fix on the settings page with its link or on the return page.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import type { TestApp } from '../helpers/app.ts';
import { artifactDir, axeViolations, launchChromium } from '../helpers/chromium.ts';
import { dashboardUser, linkToken } from '../helpers/dashboard.ts';
import { FAKE_SECRET_KEY, type FakeStripe, startFakeStripe } from '../helpers/fake-stripe.ts';
import { startPagesApp } from '../helpers/pages.ts';

describe('dashboard payouts with Stripe (Chromium)', () => {
  let fake: FakeStripe;
  let t: TestApp;
  let browser: Browser;
  const shots = artifactDir('dashboard');

  before(async () => {
    fake = await startFakeStripe();
    [t, browser] = await Promise.all([
      startPagesApp({
        env: { STRIPE_SECRET_KEY: FAKE_SECRET_KEY, STRIPE_API_URL: `http://${fake.host}:${fake.port}` },
      }),
      launchChromium(),
    ]);
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    await fake?.close();
  });

  test('set up payouts: the link to Stripe, back to our page, and Settings shows the account', async () => {
    const user = await dashboardUser(t, 'owner');
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${t.baseUrl}/dashboard/sign-in?token=${await linkToken(t, user)}`);
    await page.click('text=Continue to the dashboard');
    await page.waitForURL(/\/dashboard\/sessions$/);
    await page.click('nav >> text=Settings');
    await page.waitForURL(/\/dashboard\/settings$/);
    assert.match((await page.textContent('main')) ?? '', /no connected account yet/);
    await page.click('button:has-text("Set up payouts with Stripe")');
    await page.waitForSelector('#onboarding-link');
    const account = fake.all('account')[0]?.id as string;
    assert.match(account, /^acct_/);
    assert.equal(await page.textContent('#connected-account'), account);
    assert.deepEqual(await axeViolations(page), []);
    await page.screenshot({ path: join(shots, 'settings-stripe-onboarding.png'), fullPage: true });

    await page.click('#onboarding-link');
    await page.waitForSelector(`text=Onboarding ${account}`);
    await page.click('text=Return to the platform');
    await page.waitForURL(/\/dashboard\/payouts\/return$/);
    assert.ok(await page.isVisible('text=Back from Stripe'));
    assert.deepEqual(await axeViolations(page), []);
    await page.click('text=Open Settings');
    await page.waitForURL(/\/dashboard\/settings$/);
    assert.equal(await page.textContent('#connected-account'), account);
    assert.ok(await page.isVisible('button:has-text("Continue onboarding with Stripe")'));
    await context.close();
  });
});
