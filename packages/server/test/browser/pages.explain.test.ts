/// <reference lib="dom" />
// Member pages that explain (#19), in real Chromium: a member's share says what it is of the order (their
// own items in an itemized split, "an equal part of", "an amount set by the organizer", a percentage), the
// service fee says what it is for, an expiry typed as 1230 is taken, custom amounts and percentages show a
// running total as they are typed, and in the 480 px modal "Pay my share" comes before the share links.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { TestApp } from '../helpers/app.ts';
import { launchChromium } from '../helpers/chromium.ts';
import { closeContexts, newSession, openPage, sessionOf, startPagesApp } from '../helpers/pages.ts';
import { CARDS } from '../helpers/payments.ts';

describe('pages that explain what each person pays (Chromium)', () => {
  let t: TestApp;
  let browser: Browser;
  before(async () => {
    [t, browser] = await Promise.all([startPagesApp(), launchChromium()]);
  });
  after(async () => {
    await browser.close();
    await t.close();
  });
  afterEach(() => closeContexts(browser));

  async function organizerPage(width?: number): Promise<{ page: Page; sessionId: string }> {
    const { created, url } = await newSession(t, { customer: { name: 'Ann', email: 'ann@example.com' } });
    const page = await openPage(browser, url, width ? { width } : {});
    await page.waitForFunction(() => document.getElementById('live') !== null);
    return { page, sessionId: created.session_id };
  }

  async function save(page: Page): Promise<string[]> {
    await page.click('#setup-form button[type="submit"]');
    await page.waitForSelector('#links');
    return page
      .locator('#links li input')
      .evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value));
  }

  const text = async (page: Page, selector: string) =>
    (await page.innerText(selector)).replace(/\s+/g, ' ').trim();

  test('itemized: the member sees their own items, the fee explained, and the whole order apart', async () => {
    const { page } = await organizerPage();
    await page.check('input[name="mode"][value="itemized"]');
    await page.fill('#m1-name', 'Bob');
    await page.fill('#m0-item0', '1');
    await page.fill('#m1-item0', '1');
    await page.fill('#m1-item1', '1');
    const [bobUrl] = await save(page);
    const bob = await openPage(browser, bobUrl as string);
    const basis = await text(bob, '#share-basis');
    assert.match(basis, /^Your items: 1 × Dinner for two \$40\.00 1 × /);
    assert.doesNotMatch(basis, /2 × Dinner/);
    assert.match(
      await text(bob, '#fee-note'),
      /^The service fee \(1% of your share\) pays Group Checkout for collecting the group's payments for the shop; if the group does not complete, it is refunded with your share\.$/,
    );
    assert.equal(await text(bob, '#cart-h'), 'The whole order');
  });

  test('equal and custom: the share says what it is of the order', async () => {
    const equal = await organizerPage();
    await equal.page.fill('#m1-name', 'Bob');
    const [bobUrl] = await save(equal.page);
    const bob = await openPage(browser, bobUrl as string);
    assert.equal(
      await text(bob, '#share-basis'),
      "An equal part of the order's $100.00, split between 2 people.",
    );

    const custom = await organizerPage();
    await custom.page.check('input[name="mode"][value="custom"]');
    await custom.page.fill('#m1-name', 'Cy');
    await custom.page.fill('#m0-amount', '70');
    await custom.page.fill('#m1-amount', '30');
    const [cyUrl] = await save(custom.page);
    const cy = await openPage(browser, cyUrl as string);
    assert.equal(
      await text(cy, '#share-basis'),
      "An amount set by the organizer, out of the order's $100.00.",
    );
  });

  test('custom amounts and percentages: a running total as they are typed, before submit', async () => {
    const { page } = await organizerPage();
    await page.check('input[name="mode"][value="custom"]');
    await page.fill('#m1-name', 'Bob');
    // The fields start filled (an equal split); the organizer clears them and types their own.
    await page.fill('#m0-amount', '');
    await page.fill('#m1-amount', '');
    await page.locator('#m0-amount').pressSequentially('60');
    await page.waitForFunction(() =>
      document.getElementById('running-total')?.textContent?.includes('$40.00 left'),
    );
    assert.equal(await text(page, '#running-total'), 'So far $60.00 of $100.00: $40.00 left to share out.');
    assert.equal(
      await page.evaluate(() => document.activeElement?.id),
      'm0-amount',
      'typing keeps its place',
    );
    await page.locator('#m1-amount').pressSequentially('45');
    await page.waitForFunction(() =>
      document.getElementById('running-total')?.textContent?.includes('too much'),
    );
    assert.equal(await text(page, '#running-total'), 'So far $105.00 of $100.00: $5.00 too much.');

    await page.check('input[name="mode"][value="percentage"]');
    await page.fill('#m0-percent', '');
    await page.fill('#m1-percent', '');
    await page.locator('#m0-percent').pressSequentially('25');
    await page.locator('#m1-percent').pressSequentially('75');
    await page.waitForFunction(() =>
      document.getElementById('running-total')?.textContent?.includes('adds up'),
    );
    assert.equal(await text(page, '#running-total'), 'So far 100% of 100%: it adds up.');
  });

  test('an expiry typed as 1230 pays; in a 480 px window "Pay my share" comes before the links', async () => {
    const { page, sessionId } = await organizerPage(480);
    await page.fill('#m1-name', 'Bob');
    await save(page);
    const order = await page.evaluate(() => {
      const mine = document.getElementById('my-share');
      const links = document.getElementById('links');
      return mine && links ? mine.compareDocumentPosition(links) & Node.DOCUMENT_POSITION_FOLLOWING : 0;
    });
    assert.ok(order, 'Pay my share is above the share links');
    assert.ok(
      ((await page.locator('#my-share').boundingBox())?.y ?? 1e9) <
        ((await page.locator('#links').boundingBox())?.y ?? 0),
    );
    await page.fill('#card-number', CARDS.ok);
    await page.fill('#card-exp', '1230');
    await page.fill('#card-cvc', '123');
    await page.click('#pay-button');
    await page.locator('#my-share').waitFor({ state: 'detached' });
    const session = await sessionOf(t, sessionId);
    assert.equal(session.group.members[0].status, 'paid');
  });
});
