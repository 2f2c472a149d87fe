// The SDK's callbacks in real Chromium (docs/sdk.md#callbacks): from the hosted page's messages (the
// stand-in in harness.ts), from polling the real service alone, each at most once per session; forged
// messages ignored; polling stopped when the session is final or the instance destroyed.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import type { TestMerchant } from '../../../server/test/helpers/app.ts';
import { payOk } from '../../../server/test/helpers/payments.ts';
import { type Harness, type Shop, sleep, startHarness, until } from './harness.ts';

const DIALOG = '[role="dialog"]';
const PAY = '#slot button';

describe('browser SDK: callbacks', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h?.close());

  /** Opens the checkout on a new shop page: the session id, once onGroupCreated has fired. */
  async function opened(shop: Shop): Promise<string> {
    await shop.page.locator(PAY).click();
    await shop.page.locator(DIALOG).waitFor();
    await until(() => shop.calls.some(([name]) => name === 'created'), 'onGroupCreated');
    return String(shop.calls.find(([name]) => name === 'created')?.[1]);
  }

  /** Every GET of the session the page makes (the polling), counted from now on. */
  function polls(page: Page, sessionId: string): { count: number; statuses: string[] } {
    const seen = { count: 0, statuses: [] as string[] };
    const url = `${h.serviceUrl}/v1/sessions/${sessionId}`;
    page.on('request', (request) => {
      if (request.method() === 'GET' && request.url() === url) seen.count++;
    });
    page.on('response', async (response) => {
      if (response.request().method() === 'GET' && response.url() === url) {
        seen.statuses.push((await response.json()).status);
      }
    });
    return seen;
  }

  async function withShop(
    config: Parameters<Harness['shop']>[1],
    body: (shop: Shop, m: TestMerchant) => Promise<void>,
  ): Promise<void> {
    const m = await h.merchant();
    const shop = await h.shop(m, config);
    try {
      await body(shop, m);
      assert.deepEqual(shop.pageErrors, [], 'nothing thrown on the page');
    } finally {
      await shop.close();
    }
  }

  const named = (shop: Shop, name: string) => shop.calls.filter(([n]) => n === name);

  test('onGroupCreated fires once with the session id, not again for the page’s group.created', async () => {
    await withShop({}, async (shop, m) => {
      const sessionId = await opened(shop);
      assert.match(sessionId, /^gs_/);
      const read = await h.t.request('GET', `/v1/sessions/${sessionId}`, { key: m.secretKey });
      assert.equal(read.status, 200, 'the id is the session the service made');
      await shop.page.frameLocator('iframe').locator('#funded').waitFor(); // the page has posted group.created
      await sleep(300);
      assert.equal(named(shop, 'created').length, 1);
    });
  });

  test('funded told by polling and by the page: onGroupFunded once, with the order reference', async () => {
    await withShop({ button: { group: { minSize: 1 } } }, async (shop) => {
      const sessionId = await opened(shop);
      const seen = polls(shop.page, sessionId);
      // The organizer pays the whole cart through the pay-page API (a group of one: minSize reached the API).
      const token = new URL(String(await shop.page.locator('iframe').getAttribute('src'))).searchParams.get(
        'access',
      );
      const group = await h.t.request('PUT', `/api/v1/session/group?access=${token}`, {
        body: { mode: 'equal', members: [{ name: 'Ada' }] },
      });
      assert.equal(group.status, 200, group.text);
      await payOk(h.t, group.body.group.members[0].share_id);
      await until(() => seen.statuses.includes('funded'), 'a poll to see the session funded', 8_000);
      await until(() => named(shop, 'funded').length > 0, 'onGroupFunded');
      // The page says so too; nothing more fires, and polling has stopped.
      await shop.page.frameLocator('iframe').locator('#funded').click();
      await sleep(3_500);
      assert.deepEqual(named(shop, 'funded'), [['funded', sessionId, 'ORD-1001']]);
      assert.equal(seen.statuses.filter((s) => s === 'funded').length, 1, 'no poll after the final status');
      assert.equal(shop.page.url().includes('/p/'), true, 'no success_url, so no redirect');
    });
  });

  test('group.funded from the page: onGroupFunded, then the organizer goes to success_url', async () => {
    await withShop({ button: { success_url: `${h.shopOrigin}/success` } }, async (shop) => {
      const sessionId = await opened(shop);
      await shop.page.frameLocator('iframe').locator('#funded').click();
      await shop.page.waitForURL(`${h.shopOrigin}/success`);
      assert.equal(await shop.page.locator('h1').innerText(), 'Order paid');
      assert.deepEqual(named(shop, 'funded'), [['funded', sessionId, 'ORD-1001']]);
    });
  });

  test('forged messages change nothing: another origin, a frame that is not ours, the page itself, another session', async () => {
    await withShop({ button: { success_url: `${h.shopOrigin}/success` } }, async (shop) => {
      const sessionId = await opened(shop);
      const { page } = shop;
      // Our own frame, about another session.
      await page.frameLocator('iframe').locator('#other').click();
      // A frame on another origin, and a frame on the pay origin that is not the SDK's iframe.
      await page.evaluate(
        `for (const src of ['${h.strangerOrigin}/hostile?session=${sessionId}', '${h.fakePayOrigin}/hostile?session=${sessionId}']) {
          const f = document.createElement('iframe'); f.src = src; document.body.appendChild(f);
        }
        window.postMessage({ source: 'group-checkout', type: 'group.funded', session_id: '${sessionId}', order_ref: 'FORGED' }, '*');`,
      );
      await sleep(1_500);
      assert.deepEqual(named(shop, 'funded'), []);
      assert.ok(page.url().startsWith(`${h.shopOrigin}/p/`), 'no redirect to success_url');
      // The real page's message is heard, so the silence above was the SDK refusing the forgeries.
      await page.frameLocator(`${DIALOG} iframe`).locator('#funded').click();
      await page.waitForURL(`${h.shopOrigin}/success`);
      assert.deepEqual(named(shop, 'funded'), [['funded', sessionId, 'ORD-1001']]);
    });
  });

  test('our own iframe, once navigated to another origin, is not believed', async () => {
    await withShop({ button: { success_url: `${h.shopOrigin}/success` } }, async (shop) => {
      await opened(shop);
      await shop.page.frameLocator('iframe').locator('#leave').click();
      await until(
        () => shop.page.frames().some((f) => f.url().startsWith(`${h.strangerOrigin}/hostile`)),
        'the frame to leave',
      );
      await sleep(1_000);
      assert.deepEqual(named(shop, 'funded'), []);
      assert.ok(shop.page.url().startsWith(`${h.shopOrigin}/p/`), 'no redirect to success_url');
    });
  });

  test('error and close from the page: onError with the page’s code; the modal closes', async () => {
    await withShop({}, async (shop) => {
      await opened(shop);
      const frame = shop.page.frameLocator('iframe');
      await frame.locator('#error').click();
      await until(() => named(shop, 'error').length > 0, 'onError');
      assert.deepEqual(named(shop, 'error'), [
        ['error', { code: 'card_declined', message: 'The card was declined.' }],
      ]);
      // The button's click takes the frame away (the modal closes): the click is dispatched rather than
      // made with the mouse, whose release Chromium may never answer once the frame is gone.
      await frame.locator('#close').dispatchEvent('click');
      await shop.page.locator(DIALOG).waitFor({ state: 'detached' });
    });
  });

  test('polling alone: a session cancelled by the merchant fires onGroupCancelled, then cancel_url', async () => {
    await withShop(
      { init: { payBaseUrl: `${h.fakePayOrigin}/silent` }, button: { cancel_url: `${h.shopOrigin}/cancel` } },
      async (shop, m) => {
        const sessionId = await opened(shop);
        assert.ok(
          String(await shop.page.locator('iframe').getAttribute('src')).startsWith(
            `${h.fakePayOrigin}/silent/session/`,
          ),
        );
        const cancel = await h.t.request('POST', `/v1/sessions/${sessionId}/cancel`, { key: m.secretKey });
        assert.equal(cancel.status, 200, cancel.text);
        await shop.page.waitForURL(`${h.shopOrigin}/cancel`, { timeout: 8_000 });
        assert.deepEqual(named(shop, 'cancelled'), [['cancelled', sessionId]]);
      },
    );
  });

  test('polling alone: an expired session fires onGroupExpired once, and polling stops', async () => {
    await withShop({ init: { payBaseUrl: `${h.fakePayOrigin}/silent` } }, async (shop, m) => {
      const sessionId = await opened(shop);
      const seen = polls(shop.page, sessionId);
      const expire = await h.t.request('POST', `/v1/test_helpers/sessions/${sessionId}/expire`, {
        key: m.secretKey,
      });
      assert.equal(expire.status, 200, expire.text);
      await until(() => named(shop, 'expired').length > 0, 'onGroupExpired', 8_000);
      const count = seen.count;
      await sleep(3_500);
      assert.equal(seen.count, count, 'no poll after the session expired');
      assert.deepEqual(named(shop, 'expired'), [['expired', sessionId]]);
      assert.deepEqual(named(shop, 'funded'), []);
    });
  });

  test('destroy() stops polling, closes the modal and takes the button away', async () => {
    await withShop({ init: { payBaseUrl: `${h.fakePayOrigin}/silent` } }, async (shop) => {
      const sessionId = await opened(shop);
      const seen = polls(shop.page, sessionId);
      await until(() => seen.count > 0, 'a poll', 5_000);
      await shop.page.evaluate('checkout.destroy()');
      assert.equal(await shop.page.locator(DIALOG).count(), 0);
      assert.equal(await shop.page.locator(PAY).count(), 0);
      assert.equal(await shop.page.evaluate('document.body.style.overflow'), '');
      const count = seen.count;
      await sleep(3_500);
      assert.equal(seen.count, count, 'no poll after destroy()');
    });
  });
});
