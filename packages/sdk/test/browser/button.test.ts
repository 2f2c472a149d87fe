// The SDK in real Chromium, against the real service (docs/sdk.md): option checks, the button, one session
// per click, the modal's accessibility and closing, and errors reaching onError. The hosted page is the
// stand-in described in harness.ts.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { type Harness, type Shop, sampleCart, startHarness, until } from './harness.ts';

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));

const DIALOG = '[role="dialog"]';
const PAY = '#slot button';

// A step that hangs fails its own test in two minutes rather than the whole file at the runner's limit.
describe('browser SDK: options, button and modal', { timeout: 120_000 }, () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h?.close());

  /** Runs `body` with a shop page, closing its context after. */
  async function withShop(config: Parameters<Harness['shop']>[1], body: (shop: Shop) => Promise<void>) {
    const m = await h.merchant();
    const shop = await h.shop(m, config);
    try {
      await body(shop);
      assert.deepEqual(shop.pageErrors, [], 'nothing thrown on the page');
    } finally {
      await shop.close();
    }
  }

  test('init() and button() refuse bad options with a message naming the option', async () => {
    const context = await h.browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`${h.shopOrigin}/bare`);
      const m = await h.merchant();
      const ok = { merchantId: m.merchant.id, publishableKey: m.publishableKey };
      // Every case runs in the page; each answers the Error's message, or 'ok'.
      const attempt = (call: 'init' | 'button' | 'button-first', options: unknown) =>
        page.evaluate(
          ([call, options, ok]) => {
            const gc = (globalThis as unknown as { GroupCheckout: Record<string, (o: unknown) => unknown> })
              .GroupCheckout;
            try {
              if (call === 'button') gc.init?.(ok);
              gc[call === 'init' ? 'init' : 'button']?.(options);
              return 'ok';
            } catch (e) {
              return (e as Error).message;
            }
          },
          [call, options, ok] as const,
        );

      assert.equal(
        await attempt('button-first', { cart: {} }),
        'GroupCheckout.button: call GroupCheckout.init({ merchantId, publishableKey, … }) first',
      );
      const initCases: [unknown, string][] = [
        [undefined, 'GroupCheckout.init: pass an options object'],
        [
          { publishableKey: ok.publishableKey },
          'merchantId must be your merchant id, starting svc_merch_ (got undefined)',
        ],
        [
          { ...ok, merchantId: 'merch_1' },
          'merchantId must be your merchant id, starting svc_merch_ (got "merch_1")',
        ],
        [
          { ...ok, publishableKey: 'pk_abc' },
          'publishableKey must start svc_pk_test_ (sandbox) or svc_pk_live_',
        ],
        [{ ...ok, publishableKey: m.secretKey }, 'this is a secret, which must never reach a browser'],
        [
          { ...ok, environment: 'production' },
          'environment is "production" but publishableKey is a test key',
        ],
        [
          { ...ok, environment: 'staging' },
          'environment must be one of "sandbox", "production" (got "staging")',
        ],
        [{ ...ok, theme: 'blue' }, 'theme must be one of "auto", "light", "dark" (got "blue")'],
        [{ ...ok, apiBaseUrl: 'api.example.com/v1' }, 'apiBaseUrl must be an absolute http(s) URL'],
        [{ ...ok, payBaseUrl: 'ftp://pay.example.com' }, 'payBaseUrl must be an absolute http(s) URL'],
        [{ ...ok, getSignature: 'sign' }, 'getSignature must be a function'],
        [{ ...ok, publishable_key: 'x' }, 'unknown option publishable_key'],
      ];
      for (const [options, message] of initCases) {
        const answer = await attempt('init', options);
        assert.ok(answer.startsWith('GroupCheckout.init: '), answer);
        assert.ok(
          answer.includes(message),
          `${JSON.stringify(options)}: "${answer}" should say "${message}"`,
        );
      }
      assert.equal(await attempt('init', { ...ok, environment: 'sandbox', theme: 'dark' }), 'ok');

      const cart = sampleCart();
      const buttonCases: [unknown, string][] = [
        [{}, 'cart is required'],
        [{ cart: { ...cart, total: 12.5 } }, 'cart.total must be an integer amount in minor units'],
        [
          { cart: { ...cart, currency: 'USD' } },
          'cart.currency must be a lowercase ISO 4217 code such as "usd" (got "USD")',
        ],
        [{ cart: { ...cart, items: [] } }, 'cart.items must be an array of at least one item'],
        [{ cart, success_url: 'http://shop.example/paid' }, 'success_url must be an absolute https URL'],
        [{ cart, cancel_url: '/cancel' }, 'cancel_url must be an absolute https URL'],
        [
          { cart, successUrl: 'https://shop.example' },
          'unknown option successUrl (did you mean success_url?)',
        ],
        [{ cart, group: { min_size: 2 } }, 'group.min_size is the wire name; the SDK takes group.minSize'],
        [{ cart, group: { size: 2 } }, 'unknown option group.size'],
        [{ cart, appearance: { size: 'xl' } }, 'appearance.size must be one of "sm", "md", "lg" (got "xl")'],
        [
          { cart, appearance: { variant: 'ghost' } },
          'appearance.variant must be one of "primary", "outline", "dark"',
        ],
        [{ cart, appearance: { fullWidth: 'yes' } }, 'appearance.fullWidth must be true or false'],
        [{ cart, appearance: { label: 'Split it' } }, 'the label "Pay as a group" is fixed'],
        [{ cart, callbacks: { onFunded: 'not a function' } }, 'unknown callback onFunded'],
      ];
      for (const [options, message] of buttonCases) {
        const answer = await attempt('button', options);
        assert.ok(answer.startsWith('GroupCheckout.button: '), answer);
        assert.ok(answer.includes(message), `"${answer}" should say "${message}"`);
      }
      for (const url of [
        'https://shop.example/paid',
        'http://localhost:3000/paid',
        'http://127.0.0.1:8080/paid',
      ]) {
        assert.equal(await attempt('button', { cart, success_url: url, cancel_url: url }), 'ok', url);
      }
      assert.equal(
        await attempt('button', {
          cart,
          group: { minSize: 2, maxSize: 4, defaultMode: 'equal', allowedModes: ['equal'], expiryHours: 24 },
          appearance: { fullWidth: false, size: 'lg', variant: 'dark' },
        }),
        'ok',
      );
      assert.equal(await page.evaluate('GroupCheckout.version'), version);
    } finally {
      await context.close();
    }
  });

  test('the button is a real button labelled "Pay as a group", styled by appearance and theme', async () => {
    await withShop({ init: { theme: 'dark' } }, async ({ page }) => {
      const pay = page.locator(PAY);
      assert.equal(await pay.evaluate((b) => (b as unknown as { type: string }).type), 'button');
      assert.equal(await pay.innerText(), 'Pay as a group');
      await page.getByRole('button', { name: 'Pay as a group' }).waitFor();
      const fullWidth = await pay.boundingBox();
      assert.equal(fullWidth?.width, 320, 'full width of its 320-pixel container by default');

      // A second button, small outline, light theme, next to the first: one stylesheet for both.
      await page.evaluate(
        `document.body.insertAdjacentHTML('beforeend', '<div id="second" style="width:320px"></div>');
        GroupCheckout.button({ cart: ${JSON.stringify(sampleCart())},
          appearance: { fullWidth: false, size: 'sm', variant: 'outline' } }).mount('#second')`,
      );
      const box = await page.locator('#second button').boundingBox();
      assert.ok(box && box.width < 320 && box.height < (fullWidth?.height ?? 0), JSON.stringify(box));
      assert.equal(await page.locator('#second button').innerText(), 'Pay as a group');
      assert.equal(await page.locator('style#gc-styles').count(), 1);
      const colours = (selector: string) =>
        page.locator(selector).evaluate((b) => {
          const style = (
            globalThis as unknown as {
              getComputedStyle(e: unknown): { backgroundColor: string; color: string };
            }
          ).getComputedStyle(b);
          return [style.backgroundColor, style.color];
        });
      const [darkPrimaryBg] = await colours(PAY);
      const [outlineBg] = await colours('#second button');
      assert.equal(outlineBg, 'rgba(0, 0, 0, 0)', 'the outline variant has no fill');
      assert.equal(
        darkPrimaryBg,
        'rgb(165, 180, 252)',
        'the primary button in the dark theme is light indigo',
      );
    });
  });

  test('one click makes one session, even clicked twice and opened twice; busy meanwhile', async () => {
    const m = await h.merchant();
    const shop = await h.shop(m, { signDelayMs: 400 });
    try {
      const { page, calls } = shop;
      const pay = page.locator(PAY);
      await pay.click();
      assert.equal(await pay.getAttribute('aria-busy'), 'true');
      assert.equal(await pay.isDisabled(), true);
      assert.equal(await pay.innerText(), 'Pay as a group');
      await pay.dblclick({ force: true });
      await page.evaluate('checkout.open(); checkout.open()');
      await page.locator(DIALOG).waitFor();
      assert.equal(await pay.getAttribute('aria-busy'), null);
      assert.equal(await pay.isDisabled(), false);
      assert.equal(await h.sessionCount(m), 1);
      const created = calls.filter(([name]) => name === 'created');
      assert.equal(created.length, 1);
      assert.match(String(created[0]?.[1]), /^gs_/);
      assert.deepEqual(shop.pageErrors, []);
    } finally {
      await shop.close();
    }
  });

  test('the modal: a labelled dialog with one iframe on the session page; focus kept inside; Escape closes it and focus returns; the page does not scroll meanwhile', async () => {
    const m = await h.merchant();
    const shop = await h.shop(m, { init: { theme: 'auto' } });
    try {
      const { page, calls } = shop;
      await page.locator(PAY).click();
      const dialog = page.locator(DIALOG);
      await dialog.waitFor();
      assert.equal(await dialog.getAttribute('aria-modal'), 'true');
      assert.equal(await dialog.getAttribute('aria-label'), 'Group Checkout');
      assert.equal(await dialog.locator('iframe').count(), 1);
      assert.equal(await page.locator('iframe').count(), 1);
      const iframe = dialog.locator('iframe[title="Group Checkout"]');
      assert.equal(await iframe.getAttribute('allow'), 'payment');
      const src = new URL(String(await iframe.getAttribute('src')));
      const sessionId = String(calls.find(([name]) => name === 'created')?.[1]);
      assert.equal(src.origin, h.fakePayOrigin);
      assert.equal(src.pathname, `/session/${sessionId}`);
      assert.match(String(src.searchParams.get('access')), /^at_/);
      assert.equal(src.searchParams.get('embed'), '1');
      assert.equal(src.searchParams.get('parent_origin'), h.shopOrigin);
      assert.equal(src.searchParams.get('theme'), 'auto');
      const close = dialog.getByRole('button', { name: 'Close Group Checkout' });
      assert.ok(await close.isVisible());
      await page.frameLocator('iframe').locator('#funded').waitFor();

      // Focus: on the close button at first, and never outside the dialog, forwards or backwards.
      // Tab into or out of the hosted page's frame crosses processes: for a moment the parent's focus
      // is on its body, on its way. The check waits for focus to arrive somewhere, then asks where.
      const focusInDialog = async () => {
        await page
          .waitForFunction('document.activeElement && document.activeElement !== document.body', null, {
            timeout: 5_000,
          })
          .catch(() => {});
        return page.evaluate(`document.querySelector('${DIALOG}').contains(document.activeElement)`);
      };
      assert.equal(
        await page.evaluate('document.activeElement.getAttribute("aria-label")'),
        'Close Group Checkout',
      );
      for (const key of [
        'Tab',
        'Tab',
        'Tab',
        'Tab',
        'Tab',
        'Tab',
        'Tab',
        'Tab',
        'Shift+Tab',
        'Shift+Tab',
        'Shift+Tab',
      ]) {
        await page.keyboard.press(key);
        assert.equal(await focusInDialog(), true, `focus left the dialog after ${key}`);
      }
      // A click on the page behind the overlay does not take focus out either.
      await page.mouse.click(5, 5);
      assert.equal(await focusInDialog(), true, 'focus left the dialog after a click on the overlay');

      // The page behind does not scroll while the modal is open.
      await page.mouse.move(20, 300);
      await page.mouse.wheel(0, 800);
      await page.waitForTimeout(200);
      assert.equal(await page.evaluate('window.scrollY'), 0);

      // Escape on the parent page closes it; focus returns to the button.
      await close.focus();
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
      assert.equal(await page.evaluate('document.activeElement.textContent'), 'Pay as a group');
      await page.mouse.wheel(0, 800);
      await until(async () => Number(await page.evaluate('window.scrollY')) > 0, 'the page to scroll again');

      // Opened again: the same session, not a second one. Escape inside the frame (the page posts close).
      await page.locator(PAY).click();
      await dialog.waitFor();
      const again = new URL(String(await page.locator('iframe').getAttribute('src')));
      assert.equal(again.pathname, `/session/${sessionId}`);
      assert.equal(await h.sessionCount(m), 1);
      await page.frameLocator('iframe').locator('#funded').focus();
      // A real Escape key in the frame: its page closes the modal on keydown. Chromium tears the frame down
      // while the key is still being handled, and the acknowledgement the key's delivery waits for can go
      // down with it (seen on CI: the press waited until the suite timed out). So the test waits for what
      // a person sees, the dialog gone, and gives the delivery only a moment more; no keyup follows, as it
      // would have no frame to go to.
      const pressed = page.keyboard.down('Escape').catch(() => undefined);
      await dialog.waitFor({ state: 'detached' });
      await Promise.race([pressed, page.waitForTimeout(1_000)]);
      assert.equal(await page.evaluate('document.activeElement.textContent'), 'Pay as a group');
      assert.deepEqual(
        calls.map(([name]) => name),
        ['created'],
        'closing is not cancelling',
      );
      assert.deepEqual(shop.pageErrors, []);
    } finally {
      await shop.close();
    }
  });

  for (const [how, module] of [
    ['loaded as a classic script', false],
    ['imported as an ES module', true],
  ] as const) {
    test(`${how} from the service, the SDK finds its API (PUBLIC_BASE_URL) and pay pages without being told`, async () => {
      await withShop(
        { module, init: { apiBaseUrl: undefined, payBaseUrl: undefined } },
        async ({ page, calls }) => {
          await page.locator(PAY).click();
          await page.locator(DIALOG).waitFor();
          const sessionId = String(calls.find(([name]) => name === 'created')?.[1]);
          assert.match(sessionId, /^gs_/, 'created through PUBLIC_BASE_URL, not http://localhost:4000/v1');
          const src = String(await page.locator('iframe').getAttribute('src'));
          assert.ok(src.startsWith(`${h.serviceUrl}/session/${sessionId}?access=at_`), src);
        },
      );
    });
  }

  test('closing with a cancel_url sends the organizer there', async () => {
    await withShop({ button: { cancel_url: `${h.shopOrigin}/cancel` } }, async ({ page, calls }) => {
      await page.locator(PAY).click();
      await page.getByRole('button', { name: 'Close Group Checkout' }).click();
      await page.waitForURL(`${h.shopOrigin}/cancel`);
      assert.equal(await page.locator('h1').innerText(), 'Cancelled');
      assert.deepEqual(
        calls.map(([name]) => name),
        ['created'],
      );
    });
  });

  test('a refused signature reaches onError with the code and request_id; nothing throws, no modal', async () => {
    await withShop({ button: { signature: 'ab'.repeat(32) } }, async ({ page, calls }) => {
      await page.locator(PAY).click();
      await until(() => calls.length > 0, 'onError');
      const [name, error] = calls[0] as [string, { code: string; message: string; request_id: string }];
      assert.equal(name, 'error');
      assert.equal(error.code, 'invalid_signature');
      assert.match(error.request_id, /^req_/);
      assert.ok(error.message.length > 0);
      assert.equal(await page.locator(DIALOG).count(), 0);
      assert.equal(await page.locator(PAY).isDisabled(), false);
    });
  });

  test('no way to sign, a failing getSignature, an unreachable API: onError with the SDK’s codes', async () => {
    await withShop({ noGetSignature: true }, async ({ page, calls }) => {
      await page.locator(PAY).click();
      await until(() => calls.length > 0, 'onError');
      assert.equal((calls[0]?.[1] as { code: string } | undefined)?.code, 'signature_failed');
    });
    await withShop(
      { init: { merchantId: 'svc_merch_unknownToTheShop' }, button: { cart: sampleCart() } },
      async ({ page, calls }) => {
        await page.locator(PAY).click();
        await until(() => calls.length > 0, 'onError');
        const error = calls[0]?.[1] as { code: string; message: string };
        assert.equal(error.code, 'signature_failed');
        assert.match(error.message, /^getSignature failed: the shop could not sign the cart \(HTTP 404\)/);
      },
    );
    await withShop({ init: { apiBaseUrl: 'http://127.0.0.1:9/v1' } }, async ({ page, calls }) => {
      await page.locator(PAY).click();
      await until(() => calls.length > 0, 'onError');
      assert.equal((calls[0]?.[1] as { code: string } | undefined)?.code, 'network_error');
      assert.equal(await page.locator(PAY).isDisabled(), false);
    });
  });
});
