/// <reference lib="dom" />
// The whole journey in real Chromium, as people live it: a shopper on the demo shop clicks "Pay as a
// group", sets up a three-way equal split in the checkout modal and pays their share there; two friends
// open their links in their own browsers and pay (one after a declined card); the shop's page hears
// onGroupFunded with the session and the order, sends the organizer to its success page, and the shop's
// webhook receiver marks the order paid. And a card whose bank asks for 3-D Secure, completed in the modal.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { startDispatcher } from '../../../../packages/server/src/jobs/dispatcher.ts';
import type { Loop } from '../../../../packages/server/src/jobs/loop.ts';
import type { TestApp } from '../../../../packages/server/test/helpers/app.ts';
import { launchChromium } from '../../../../packages/server/test/helpers/chromium.ts';
import {
  openPage,
  payWithCard,
  sessionOf,
  startPagesApp,
} from '../../../../packages/server/test/helpers/pages.ts';
import { CARDS, eventually, payOk } from '../../../../packages/server/test/helpers/payments.ts';
import { type StartedShop, startShopFor } from '../helpers.ts';

describe('the journey: shop → button → modal → three payers → funded → order paid (Chromium)', () => {
  let t: TestApp;
  let dispatcher: Loop;
  let shop: StartedShop;
  let browser: Browser;

  before(async () => {
    [t, browser] = await Promise.all([
      startPagesApp({ env: { WEBHOOK_RETRY_SCHEDULE: '100ms,200ms', WEBHOOK_POLL_INTERVAL_MS: '200' } }),
      launchChromium(),
    ]);
    dispatcher = await startDispatcher(t.deps);
    shop = await startShopFor(t);
  });
  after(async () => {
    await browser?.close();
    await shop?.close();
    await dispatcher?.stop();
    await t?.close();
  });

  const personPage = (url: string) => openPage(browser, url);

  /**
   * The shop's page, with every line its status shows (what the SDK's callbacks said) kept across the
   * redirects the SDK makes (and each page it loads); `blockMessages` stops the page from ever hearing the modal's postMessage.
   */
  async function shopperPage(options: { blockMessages?: boolean } = {}) {
    const context = await browser.newContext({ locale: 'en-US' });
    const said: string[] = [];
    await context.exposeFunction('reportStatus', (text: string) => said.push(text));
    await context.addInitScript((block: boolean) => {
      if (window !== window.top || location.protocol === 'about:') return;
      if (block) window.addEventListener('message', (e) => e.stopImmediatePropagation(), true);
      const report = (window as unknown as { reportStatus(t: string): void }).reportStatus;
      report(`loaded ${location.pathname}`);
      new MutationObserver(() => {
        const text = document.getElementById('status')?.textContent;
        if (text) report(text);
      }).observe(document, { subtree: true, childList: true, characterData: true });
    }, options.blockMessages ?? false);
    const page = await context.newPage();
    page.on('pageerror', (e) => assert.fail(`script error on the shop: ${e.message}`));
    await page.goto(shop.url);
    return { page, said };
  }

  /** Clicks the button and sets up an equal split of Ann and Bob in the modal; answers Bob's link. */
  async function groupOfTwo(page: Page) {
    await page.getByRole('button', { name: 'Pay as a group' }).click();
    const modal = page.frameLocator('iframe[title="Group Checkout"]');
    await modal.locator('#m0-name').fill('Ann');
    await modal.locator('#m1-name').fill('Bob');
    await modal.locator('#setup-form button[type="submit"]').click();
    await modal.locator('#links').waitFor();
    const bobUrl = await modal.locator('#links li input').first().inputValue();
    return { modal, bobShare: bobUrl.split('/s/')[1] as string };
  }

  const sessionIdIn = (said: string[]) => {
    const line = said.find((s) => s.startsWith('Group created'));
    return /session (gs_\w+)/.exec(line ?? '')?.[1] as string;
  };

  test('a group of three pays for a cart, each on their own page; the shop is told and marks it paid', async () => {
    // The shop's page is on another origin than the service (localhost vs 127.0.0.1).
    const shopper = await personPage(shop.url);
    assert.ok(new URL(shop.url).origin !== new URL(t.baseUrl).origin);
    const button = shopper.getByRole('button', { name: 'Pay as a group' });
    await button.click();

    const dialog = shopper.getByRole('dialog', { name: 'Group Checkout' });
    await dialog.waitFor();
    const modal = shopper.frameLocator('iframe[title="Group Checkout"]');
    await modal.locator('#setup-form').waitFor();
    await modal.locator('#m0-name').fill('Ann');
    await modal.locator('#m1-name').fill('Bob');
    await modal.getByRole('button', { name: 'Add a person' }).click();
    await modal.locator('#m2-name').fill('Cy');
    await modal.locator('#setup-form button[type="submit"]').click();
    await modal.locator('#links').waitFor();
    const links = await modal
      .locator('#links li input')
      .evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value));
    assert.equal(links.length, 2);

    // Ann pays her share inside the modal.
    await modal.locator('#card-number').fill(CARDS.ok);
    await modal.locator('#card-exp').fill('12/34');
    await modal.locator('#card-cvc').fill('123');
    await modal.locator('#pay-button').click();
    await modal.locator('#my-share').waitFor({ state: 'detached' });

    // Bob: declined first, then another card. Cy: at once.
    const bob = await personPage(links[0] as string);
    await payWithCard(bob, CARDS.declined);
    await bob.waitForSelector('#pay-error:not(:empty)');
    assert.match((await bob.textContent('#pay-error')) ?? '', /declined/i);
    await payWithCard(bob, CARDS.ok);
    await bob.waitForSelector('#paid');
    const cy = await personPage(links[1] as string);
    await payWithCard(cy, CARDS.ok);
    await cy.waitForSelector('#paid');

    // The shop's page is told (onGroupFunded) and sends Ann to the success page.
    await shopper.waitForURL(/\/success\?order=ORD-/, { timeout: 15_000 });
    const ref = new URL(shopper.url()).searchParams.get('order') as string;
    await eventually(async () => Boolean(shop.orders.get(ref)?.session_id), 10_000, 'the order’s session');
    const session = await sessionOf(t, shop.orders.get(ref)?.session_id as string);
    assert.equal(session.status, 'funded');
    assert.equal(session.order_ref, ref);
    assert.equal(session.charges.length, 3);

    // The webhook receiver verified group.funded and marked the order paid.
    await eventually(async () => shop.orders.get(ref)?.status === 'paid', 10_000, 'the order to be paid');
    const orders = await personPage(`${shop.url}/orders`);
    assert.match((await orders.textContent('body')) ?? '', new RegExp(`${ref}[\\s\\S]*paid`));
  });

  test('the first click after typing a quantity opens the checkout, for the cart as typed (#19)', async () => {
    const { page, said } = await shopperPage();
    await page.getByRole('button', { name: 'Pay as a group' }).waitFor();
    const totalBefore = await page.textContent('#sum-total');
    const lanterns = page.locator('#qty-sku_lantern');
    await lanterns.click();
    await lanterns.press('Control+a');
    await lanterns.pressSequentially('2');
    // The totals follow the typing, before the field loses focus.
    assert.equal(await lanterns.evaluate((el) => el === document.activeElement), true);
    await eventually(
      async () => (await page.textContent('#sum-total')) !== totalBefore,
      5_000,
      'the total to follow the typing',
    );
    // One click, straight from the field: the modal opens.
    await page.getByRole('button', { name: 'Pay as a group' }).click();
    await page.getByRole('dialog', { name: 'Group Checkout' }).waitFor({ timeout: 5_000 });
    await eventually(async () => Boolean(sessionIdIn(said)), 10_000, 'onGroupCreated');
    const session = await sessionOf(t, sessionIdIn(said));
    // A tent and two lanterns: 238.00, tax 19.64, shipping 9.00, packing 2.00.
    assert.equal(await page.textContent('#sum-total'), '$268.64');
    assert.equal(session.total_cents, 26864);
    assert.ok(
      said.some((s) => s.includes('say who is in the group in the checkout window')),
      'the status does not ask for links that do not exist yet',
    );
  });

  test('cancel in the modal: onGroupCancelled, the paid share refunded, sent to cancel_url, order cancelled', async () => {
    const { page, said } = await shopperPage();
    const { modal, bobShare } = await groupOfTwo(page);
    await payOk(t, bobShare);
    await modal.locator('[data-action="cancel"]').click();
    await modal.locator('[data-action="cancel-yes"]').click();
    await eventually(async () => said.some((s) => s.includes('cancelled')), 10_000, 'onGroupCancelled');
    const sessionId = sessionIdIn(said);
    const session = await sessionOf(t, sessionId);
    assert.equal(session.status, 'cancelled');
    assert.deepEqual(
      session.refunds.map((r: { status: string }) => r.status),
      ['succeeded'],
    );
    // cancel_url is the shop's product page: the SDK went there, after the callback.
    await eventually(async () => said.filter((s) => s === 'loaded /').length === 2, 10_000, 'cancel_url');
    assert.ok(said.indexOf('loaded /', 1) > said.findIndex((s) => s.includes('cancelled')), said.join('\n'));
    await eventually(
      async () => said.some((s) => s.startsWith('You left the group checkout of order ORD-')),
      10_000,
      'the product page to say what became of the order',
    );
    await eventually(
      async () => shop.orders.list().some((o) => o.session_id === sessionId && o.status === 'cancelled'),
      10_000,
      'the order to be cancelled by the webhook',
    );
  });

  test('with the modal’s messages blocked, polling alone reports the expiry: onGroupExpired', async () => {
    const { page, said } = await shopperPage({ blockMessages: true });
    await groupOfTwo(page);
    const sessionId = sessionIdIn(said);
    assert.match(sessionId, /^gs_/);
    const res = await t.request('POST', `/v1/test_helpers/sessions/${sessionId}/expire`, {
      key: t.merchant.secretKey,
    });
    assert.equal(res.status, 200, res.text);
    await eventually(
      async () => said.some((s) => s.includes('expired')),
      10_000,
      'onGroupExpired from polling',
    );
    assert.equal(said.filter((s) => s.includes('expired')).length, 1, 'reported once');
  });

  test('3-D Secure inside the modal: the organizer’s bank asks, the step is done in the modal, the share is paid', async () => {
    const { page, said } = await shopperPage();
    const { modal } = await groupOfTwo(page);
    await modal.locator('#card-number').fill(CARDS.authenticates);
    await modal.locator('#card-exp').fill('12/34');
    await modal.locator('#card-cvc').fill('123');
    await modal.locator('#pay-button').click();
    await modal.getByRole('heading', { name: 'Confirm my payment' }).waitFor();
    const sessionId = sessionIdIn(said);
    assert.equal((await sessionOf(t, sessionId)).group.members[0].status, 'authenticating');
    await modal.getByRole('button', { name: 'Complete authentication' }).click();
    await modal.locator('#my-share').waitFor({ state: 'detached' });
    const session = await sessionOf(t, sessionId);
    assert.equal(session.group.members[0].status, 'paid');
    assert.equal(session.charges.length, 1);
  });
});
