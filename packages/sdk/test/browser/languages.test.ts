// The SDK's button and modal in each language (#19), in real Chromium: the fixed label follows the
// shopper's browser, or the locale given to init() or to the button (the button's wins); a chosen language
// goes to POST /sessions as the session's locale, so its pages and mail speak it too; `auto` sends none.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { WORDS } from '../../src/words.ts';
import { type Harness, startHarness } from './harness.ts';

const PAY = '#slot button';

describe('browser SDK: languages', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h?.close());

  const BROWSERS = {
    en: 'en-GB',
    es: 'es-MX',
    fr: 'fr-CA',
    de: 'de-AT',
    it: 'it-IT',
    pt: 'pt-BR',
    nl: 'nl-BE',
    ja: 'ja-JP',
  } as const;

  test('the label in the browser’s language, for each of the eight; English for any other', async () => {
    const m = await h.merchant();
    const labels: Record<string, string> = {};
    for (const [lang, browserLocale] of [...Object.entries(BROWSERS), ['en', 'sv-SE']] as [
      string,
      string,
    ][]) {
      const shop = await h.shop(m, { browserLocale });
      try {
        labels[browserLocale] = (await shop.page.textContent(PAY)) ?? '';
        assert.equal(labels[browserLocale], WORDS[lang as keyof typeof WORDS].label, browserLocale);
        assert.equal(await shop.page.getAttribute(PAY, 'lang'), lang);
      } finally {
        await shop.close();
      }
    }
    assert.equal(labels['fr-CA'], 'Payer à plusieurs');
    assert.equal(labels['ja-JP'], 'みんなで支払う');
    assert.equal(labels['sv-SE'], 'Pay as a group');
  });

  test('init’s locale over the browser, the button’s over init’s; it becomes the session’s locale', async () => {
    const m = await h.merchant();
    const shop = await h.shop(m, {
      browserLocale: 'fr-FR',
      init: { locale: 'ja' },
      button: { locale: 'de' },
    });
    try {
      assert.equal(await shop.page.textContent(PAY), 'Gemeinsam bezahlen');
      const sent = shop.page.waitForRequest((r) => r.method() === 'POST' && r.url().endsWith('/v1/sessions'));
      await shop.page.click(PAY);
      assert.equal(JSON.parse((await sent).postData() ?? '{}').locale, 'de');
      const dialog = shop.page.locator('[role="dialog"]');
      await dialog.waitFor();
      assert.equal(await dialog.getAttribute('aria-label'), 'Group Checkout');
      // The shop's page is English; the dialog's names are German, and say so.
      assert.equal(await dialog.getAttribute('lang'), 'de');
      assert.equal(await shop.page.getAttribute('.gc-close', 'aria-label'), 'Group Checkout schließen');
    } finally {
      await shop.close();
    }
    const auto = await h.shop(m, { browserLocale: 'it-IT', init: { locale: 'auto' } });
    try {
      assert.equal(await auto.page.textContent(PAY), 'Paga in gruppo');
      const sent = auto.page.waitForRequest((r) => r.method() === 'POST' && r.url().endsWith('/v1/sessions'));
      await auto.page.click(PAY);
      assert.equal(
        JSON.parse((await sent).postData() ?? '{}').locale,
        undefined,
        'auto: the pages follow the reader',
      );
    } finally {
      await auto.close();
    }
  });

  test('a locale that is not ours is refused at set-up, naming the option', async () => {
    const m = await h.merchant();
    const shop = await h.shop(m);
    try {
      const message = await shop.page.evaluate(() => {
        try {
          (globalThis as unknown as { GroupCheckout: { button(o: unknown): unknown } }).GroupCheckout.button({
            cart: {
              total: 100,
              currency: 'usd',
              items: [{ id: 'a', name: 'A', quantity: 1, unit_price: 100 }],
            },
            locale: 'sv',
          });
          return 'ok';
        } catch (e) {
          return (e as Error).message;
        }
      });
      assert.match(message, /^GroupCheckout\.button: locale must be one of "auto", "en", .* \(got "sv"\)$/);
    } finally {
      await shop.close();
    }
  });
});
