/// <reference lib="dom" />
// The whole journey in real Chromium, as people live it: a shopper on the demo shop clicks "Pay as a
// group", sets up a three-way equal split in the checkout modal and pays their share there; two friends
// open their links in their own browsers and pay (one after a declined card); the shop's page hears
// onGroupFunded with the session and the order, sends the organizer to its success page, and the shop's
// webhook receiver marks the order paid.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { startDispatcher } from '../../../../packages/server/src/jobs/dispatcher.ts';
import type { Loop } from '../../../../packages/server/src/jobs/loop.ts';
import type { TestApp } from '../../../../packages/server/test/helpers/app.ts';
import { freePort, launchChromium } from '../../../../packages/server/test/helpers/chromium.ts';
import { payWithCard, sessionOf, startPagesApp } from '../../../../packages/server/test/helpers/pages.ts';
import { CARDS, eventually } from '../../../../packages/server/test/helpers/payments.ts';
import { type Shop, startShop } from '../../src/shop.ts';

describe('the journey: shop → button → modal → three payers → funded → order paid (Chromium)', () => {
  let t: TestApp;
  let dispatcher: Loop;
  let shop: Shop & { url: string; port: number };
  let browser: Browser;

  before(async () => {
    [t, browser] = await Promise.all([
      startPagesApp({ env: { WEBHOOK_RETRY_SCHEDULE: '100ms,200ms', WEBHOOK_POLL_INTERVAL_MS: '200' } }),
      launchChromium(),
    ]);
    dispatcher = await startDispatcher(t.deps);
    const port = await freePort();
    const endpoint = await t.request('POST', '/v1/webhooks', {
      key: t.merchant.secretKey,
      body: { url: `http://127.0.0.1:${port}/webhooks/group-checkout`, events: ['*'] },
    });
    assert.equal(endpoint.status, 200, endpoint.text);
    shop = await startShop({
      merchantId: t.merchant.merchant.id,
      publishableKey: t.merchant.publishableKey,
      signingSecret: t.merchant.merchant.signingSecret,
      webhookSecret: endpoint.body.secret,
      apiBaseUrl: `${t.baseUrl}/v1`,
      payBaseUrl: t.baseUrl,
      port,
      log: () => {},
    });
  });
  after(async () => {
    await browser?.close();
    await shop?.close();
    await dispatcher?.stop();
    await t?.close();
  });

  async function personPage(url: string): Promise<Page> {
    const page = await (await browser.newContext({ locale: 'en-US' })).newPage();
    page.on('pageerror', (e) => assert.fail(`script error on ${url}: ${e.message}`));
    await page.goto(url);
    return page;
  }

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
    const order = shop.orders.get(ref);
    assert.ok(order?.session_id, 'the shop knows the session of the order');
    const session = await sessionOf(t, order.session_id as string);
    assert.equal(session.status, 'funded');
    assert.equal(session.order_ref, ref);
    assert.equal(session.charges.length, 3);

    // The webhook receiver verified group.funded and marked the order paid.
    await eventually(async () => shop.orders.get(ref)?.status === 'paid', 10_000, 'the order to be paid');
    const orders = await personPage(`${shop.url}/orders`);
    assert.match((await orders.textContent('body')) ?? '', new RegExp(`${ref}[\\s\\S]*paid`));
  });
});
