/// <reference lib="dom" />
// Each language on the pages a member sees (#19), in real Chromium: a browser that asks for French (its
// Accept-Language) gets French — the share page before and after paying, the group's page and a refusal
// — with lang set, no message key, and no English word left but an allow-list of loanwords; amounts are
// Intl's for that language and the session's currency (EUR in French as 12,50 €, JPY without decimals);
// a session made with locale=ja speaks Japanese whatever the browser asks.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { CATALOGUES } from '../../src/i18n/catalogues.ts';
import { LOCALES, type Locale } from '../../src/i18n/locales.ts';
import type { TestApp } from '../helpers/app.ts';
import { launchChromium } from '../helpers/chromium.ts';
import { englishLeft } from '../helpers/english.ts';
import { closeContexts, startPagesApp } from '../helpers/pages.ts';
import { payOk } from '../helpers/payments.ts';
import { createSession, organizerToken } from '../helpers/sessions.ts';

/** Browser languages, as a person's browser sends them. */
const BROWSER: Record<Locale, string> = {
  en: 'en-US',
  es: 'es-ES',
  fr: 'fr-FR',
  de: 'de-DE',
  it: 'it-IT',
  pt: 'pt-PT',
  nl: 'nl-NL',
  ja: 'ja-JP',
};

test('the English detector finds English', () => {
  assert.deepEqual(englishLeft('Payer votre part: pay your share', 'fr', []), ['pay', 'your', 'share']);
});

describe('the member pages in every language (Chromium)', () => {
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

  /** A session of three, split equally by its organizer; the second member's share id and the group link. */
  async function groupOfThree(extra: Record<string, unknown> = {}, currency = 'eur') {
    const cart = {
      total: currency === 'jpy' ? 9000 : 3750,
      currency,
      items: [
        { id: 'sku_raclette', name: 'Raclette', quantity: 1, unit_price: currency === 'jpy' ? 9000 : 3750 },
      ],
      metadata: { order_ref: 'ORD-7' },
    };
    const created = await createSession(t, { cart, extra });
    const res = await t.request('PUT', `/api/v1/session/group?access=${organizerToken(created)}`, {
      body: { mode: 'equal', members: [{ name: 'Ann' }, { name: 'Bea' }, { name: 'Cato' }] },
    });
    assert.equal(res.status, 200, res.text);
    return {
      organizerUrl: created.session_url as string,
      share: res.body.group.members[1].share_id as string,
      other: res.body.group.members[2].share_id as string,
      joinUrl: res.body.join_url as string,
    };
  }

  /**
   * A browser that speaks `browserLocale`, with one tab that goes from page to page (the pages keep no
   * cookie or storage, and a new tab costs Chromium about as much CPU as three page loads): `open(url)`
   * loads a page in it and answers the tab once the page has rendered.
   */
  async function browserIn(browserLocale: string): Promise<(url: string) => Promise<Page>> {
    const context = await browser.newContext({ locale: browserLocale });
    const page = await context.newPage();
    page.on('pageerror', (e) => assert.fail(`script error: ${e.message}`));
    return async (url) => {
      await page.goto(url);
      await page.waitForFunction(() => document.getElementById('live') !== null);
      return page;
    };
  }

  async function check(page: Page, lang: Locale, data: string[], where: string, htmlLang = BROWSER[lang]) {
    assert.equal(await page.getAttribute('html', 'lang'), htmlLang);
    const text = `${await page.title()}\n${await page.innerText('body')}`;
    assert.doesNotMatch(text, /\b[a-z]+\.[a-z]+[A-Z.]\w*\b/, `${lang} ${where}: a message key shows`);
    assert.deepEqual(englishLeft(text, lang, data), [], `${lang} ${where}: English left\n${text}`);
    return text;
  }

  for (const lang of LOCALES) {
    test(`${lang}: the organizer's page, the share page before and after paying, the group's page and a refusal`, async () => {
      const { organizerUrl, share, other, joinUrl } = await groupOfThree();
      const data = ['Raclette', 'Ann', 'Bea', 'Cato', 'Test Shop', 'ORD-7', t.merchant.merchant.name];
      const open = await browserIn(BROWSER[lang]);
      const organizer = await open(organizerUrl);
      await check(organizer, lang, data, "organizer's page");
      // The set-up form in each mode, with its running total and its checks, in that language.
      for (const mode of ['custom', 'percentage', 'itemized', 'host-pays']) {
        await organizer.check(`input[name="mode"][value="${mode}"]`);
        await check(organizer, lang, data, `organizer's page, ${mode}`);
      }
      await organizer.fill('#m1-name', '');
      await organizer.click('#setup-form button[type="submit"]');
      await organizer.waitForSelector('#setup-error:not(:empty), .error:not(:empty)');
      await check(organizer, lang, data, "organizer's page, a refused set-up");
      // A custom split the page lets through and the service refuses (two shares below the smallest card
      // payment): its reasons by the refused fields, in that language, never the API's English.
      await organizer.fill('#m1-name', 'Bea');
      await organizer.check('input[name="mode"][value="custom"]');
      await organizer.fill('#m0-amount', '37.10');
      await organizer.fill('#m1-amount', '0.20');
      await organizer.fill('#m2-amount', '0.20');
      await organizer.click('#setup-form button[type="submit"]');
      await organizer.waitForSelector('#m1-amount-error');
      const refused = await check(organizer, lang, data, "organizer's page, a custom split refused");
      const minimum = new Intl.NumberFormat(BROWSER[lang], { style: 'currency', currency: 'EUR' }).format(
        0.5,
      );
      assert.ok(refused.includes(minimum), `${lang}: the smallest card payment is named\n${refused}`);
      if (lang === 'fr')
        assert.match(
          refused,
          /La part de Bea, soit 0,20.€, est inférieure au plus petit paiement par carte, 0,50.€\./,
        );
      const page = await open(`${t.baseUrl}/s/${share}`);
      const before = await check(page, lang, data, 'share page');
      // A declined card: why, and what to do, in that language; the same once the page is loaded again.
      await page.fill('#card-number', '4000 0000 0000 9995');
      await page.fill('#card-exp', '12/30');
      await page.fill('#card-cvc', '123');
      await page.click('#pay-button');
      await page.waitForSelector('#pay-error:not(:empty)');
      const declined = await check(page, lang, data, 'share page, a declined card');
      const insufficient = CATALOGUES[lang]['decline.insufficient_funds'] as string;
      assert.ok(declined.includes(insufficient), `${lang}: the decline's reason\n${declined}`);
      await page.reload();
      await page.waitForSelector('#pay-failure');
      assert.ok((await page.innerText('#pay-failure')).includes(insufficient));
      await check(page, lang, data, 'share page after a decline');
      // 12.50 each, in that language's way of writing euros.
      const due = (await page.textContent('[data-testid="amount-due"]')) ?? '';
      const expected = new Intl.NumberFormat(BROWSER[lang], { style: 'currency', currency: 'EUR' }).format(
        12.63,
      );
      assert.equal(due, expected);
      if (lang === 'fr') {
        assert.equal(due.replace(/\s/g, ' '), '12,63 €');
        assert.match(before.replace(/\s/g, ' '), /Votre part 12,50 €/);
        assert.match(before, /Une part égale des 37,50.€ de la commande, partagée entre 3 personnes\./);
      }
      // Paid: the page says so in its language.
      await payOk(t, share);
      await page.reload();
      await page.waitForSelector('#paid');
      await check(page, lang, data, 'paid share page');
      // Another member pays: progress moves, still in that language.
      await payOk(t, other);
      const group = await open(joinUrl);
      await check(group, lang, data, "group's page");
      await check(await open(`${t.baseUrl}/s/shr_nothing_here`), lang, data, 'refusal');
    });
  }

  test('locale on POST /sessions wins over the browser: ja, with yen and no decimals', async () => {
    const { share } = await groupOfThree({ locale: 'ja' }, 'jpy');
    const page = await (await browserIn('fr-FR'))(`${t.baseUrl}/s/${share}`);
    assert.equal(await page.getAttribute('html', 'lang'), 'ja');
    const text = await check(
      page,
      'ja',
      ['Raclette', 'Ann', 'Bea', 'Cato', 'ORD-7', t.merchant.merchant.name],
      'share page',
      'ja',
    );
    assert.match(text, /あなたの負担分/);
    assert.equal(await page.textContent('[data-testid="amount-due"]'), '￥3,030');
    assert.doesNotMatch(text, /￥3,000\.00/);
  });

  test('Accept-Language by q-value: German first when the browser prefers it over English', async () => {
    const { share } = await groupOfThree();
    const context = await browser.newContext({
      extraHTTPHeaders: { 'accept-language': 'sv-SE, de;q=0.8, en;q=0.5' },
    });
    const page = await context.newPage();
    await page.goto(`${t.baseUrl}/s/${share}`);
    assert.equal(await page.getAttribute('html', 'lang'), 'de');
    assert.match(await page.innerText('h1'), /Bea, dein Anteil/);
  });
});
