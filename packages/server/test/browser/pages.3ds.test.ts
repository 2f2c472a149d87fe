/// <reference lib="dom" />
// 3-D Secure on the hosted pages in real Chromium, in the sandbox (docs/api.md#3-d-secure): card
// 4000002500003155 makes the bank ask the payer to confirm; the page shows the sandbox's Complete / Fail
// step, which stands in for the bank's page. Failing it gives the form back with the reason; a reloaded
// page resumes the step; completing it pays the share; an organizer's own share goes the same way; a step
// abandoned past PAYMENT_AUTH_TIMEOUT_MS leaves the share to pay again, saying why.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { settleDueSessions } from '../../src/jobs/settle.ts';
import type { TestApp } from '../helpers/app.ts';
import { launchChromium } from '../helpers/chromium.ts';
import { manualClock } from '../helpers/clock.ts';
import {
  closeContexts,
  newSession,
  openPage,
  payWithCard,
  sessionOf,
  startPagesApp,
} from '../helpers/pages.ts';
import { CARDS, equalGroup } from '../helpers/payments.ts';

const AUTH_TIMEOUT_MS = 60_000;

describe('3-D Secure on the hosted pages (Chromium, sandbox)', () => {
  const clock = manualClock(Date.now());
  let t: TestApp;
  let browser: Browser;
  before(async () => {
    [t, browser] = await Promise.all([
      startPagesApp({ clock, env: { PAYMENT_AUTH_TIMEOUT_MS: String(AUTH_TIMEOUT_MS) } }),
      launchChromium(),
    ]);
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });
  afterEach(() => closeContexts(browser));

  test('a member fails the step and gets the form back with why; a reload resumes the step; completing it pays', async () => {
    const group = await equalGroup(t, ['Ann', 'Bob']);
    const bob = group.shares[1].shareId;
    const page = await openPage(browser, `${t.baseUrl}/s/${bob}`);

    await payWithCard(page, CARDS.authenticates);
    await page.getByRole('heading', { name: 'Confirm your payment' }).waitFor();
    assert.match(
      (await page.textContent('#authenticate')) ?? '',
      /Your bank asks you to confirm this payment of \$50\.50/,
    );
    assert.equal(await page.locator('#pay-form').count(), 0, 'no card form while the bank waits');
    assert.equal((await sessionOf(t, group.created.session_id)).group.members[1].status, 'authenticating');

    await page.getByRole('button', { name: 'Fail authentication' }).click();
    await page.waitForSelector('#pay-form');
    assert.match(
      (await page.textContent('#pay-failure')) ?? '',
      /did not go through\. Your bank could not confirm it was you, so the card was not charged/,
    );
    assert.equal((await sessionOf(t, group.created.session_id)).group.members[1].status, 'pending');

    // Again, and this time the payer reloads the page in the middle of the step: it is still there.
    await payWithCard(page, CARDS.authenticates);
    await page.getByRole('button', { name: 'Complete authentication' }).waitFor();
    await page.reload();
    await page.getByRole('button', { name: 'Complete authentication' }).click();
    await page.waitForSelector('#paid');
    assert.match((await page.textContent('#paid')) ?? '', /Your share is paid/);

    const session = await sessionOf(t, group.created.session_id);
    assert.equal(session.group.members[1].status, 'paid');
    assert.equal(session.charges.length, 1, 'one charge: nothing was taken for the failed step');
    assert.equal(session.group.paid_amount, 5000);
  });

  test('the organizer completes the step for their own share on their page', async () => {
    const { created, url } = await newSession(t, { customer: { name: 'Ann' } });
    const page = await openPage(browser, url);
    await page.fill('#m1-name', 'Bob');
    await page.click('#setup-form button[type="submit"]');
    await page.waitForSelector('#my-share #card-number');
    await payWithCard(page, CARDS.authenticates);
    await page.getByRole('heading', { name: 'Confirm my payment' }).waitFor();
    assert.match((await page.textContent('#actions-status')) ?? '', /Your bank asks you to confirm/);
    await page.getByRole('button', { name: 'Complete authentication' }).click();
    await page.waitForFunction(() => !document.querySelector('#my-share'));
    assert.match((await page.textContent('#actions-status')) ?? '', /Your share is paid/);
    const session = await sessionOf(t, created.session_id);
    assert.equal(session.group.members[0].status, 'paid');
    assert.equal(session.group.paid_amount, 5000);
  });

  test('a step left open past PAYMENT_AUTH_TIMEOUT_MS is given up: the link shows the form again and says why', async () => {
    const group = await equalGroup(t, ['Ann', 'Bob']);
    const bob = group.shares[1].shareId;
    const first = await openPage(browser, `${t.baseUrl}/s/${bob}`);
    await payWithCard(first, CARDS.authenticates);
    await first.getByRole('button', { name: 'Complete authentication' }).waitFor();
    await first.context().close();

    clock.advance(AUTH_TIMEOUT_MS + 1000);
    await settleDueSessions(t.deps);

    const again = await openPage(browser, `${t.baseUrl}/s/${bob}`);
    assert.equal(await again.locator('#authenticate').count(), 0);
    assert.match((await again.textContent('#pay-failure')) ?? '', /was not completed in time/);
    await payWithCard(again, CARDS.ok);
    await again.waitForSelector('#paid');
    assert.equal((await sessionOf(t, group.created.session_id)).group.members[1].status, 'paid');
  });
});
