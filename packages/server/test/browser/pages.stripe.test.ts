/// <reference lib="dom" />
// A member's page with Stripe as the processor, in Chromium: the card form is Stripe's Payment Element,
// Stripe.js makes a PaymentMethod and the page pays with its id; a card that asks for 3-D Secure is handed
// to Stripe.js's handleNextAction, and the page then asks the service what became of the payment. Stripe.js and Stripe's API are the border
// we cannot reach: the browser is answered a small stand-in for https://js.stripe.com/v3/ (its element is
// one field holding the PaymentMethod id it will make; its bank's step waits for the test), and the server talks to the local fake of Stripe's
// API (test/helpers/fake-stripe.ts).
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { createStripeProcessor } from '../../src/processor/stripe.ts';
import type { TestApp } from '../helpers/app.ts';
import { launchChromium } from '../helpers/chromium.ts';
import { FAKE_SECRET_KEY, type FakeStripe, startFakeStripe } from '../helpers/fake-stripe.ts';
import { closeContexts, newSession, sessionOf, startPagesApp } from '../helpers/pages.ts';
import { equalGroup } from '../helpers/payments.ts';

const STRIPE_JS = `
window.Stripe = function (key, options) {
  window.stripeSeen = { key: key, options: options };
  return {
    elements: function (options) {
      window.stripeSeen.elements = options;
      return {
        create: function () {
          return { mount: function (selector) {
            document.querySelector(selector).innerHTML =
              '<label for="fake-pm">Card (stand-in)</label><input id="fake-pm" value="pm_card_visa">';
          } };
        },
        submit: function () { return Promise.resolve({}); },
      };
    },
    createPaymentMethod: function () {
      return Promise.resolve({ paymentMethod: { id: document.getElementById('fake-pm').value } });
    },
    // The bank's page: resolves when the test says the payer is done with it (finishNextAction).
    handleNextAction: function (options) {
      window.nextActions = (window.nextActions || []).concat([options.clientSecret]);
      return new Promise(function (resolve) { window.finishNextAction = function () { resolve({}); }; });
    },
  };
};`;

describe('paying with Stripe’s Payment Element (Chromium, Stripe faked at the border)', () => {
  let fake: FakeStripe;
  let t: TestApp;
  let browser: Browser;
  before(async () => {
    fake = await startFakeStripe();
    [t, browser] = await Promise.all([
      startPagesApp({
        env: { STRIPE_PUBLISHABLE_KEY: 'pk_test_groupcheckout' },
        wrapProcessor: () =>
          createStripeProcessor({
            secretKey: FAKE_SECRET_KEY,
            host: fake.host,
            port: fake.port,
            protocol: 'http',
          }),
      }),
      launchChromium(),
    ]);
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    await fake?.close();
  });
  afterEach(() => closeContexts(browser));

  test('the Payment Element takes the card; a decline says why; then the share is paid with the PaymentMethod', async () => {
    const group = await equalGroup(t, ['Ann', 'Bob']);
    const context = await browser.newContext({ locale: 'en-US' });
    await context.route('https://js.stripe.com/**', (route) =>
      route.fulfill({ status: 200, contentType: 'text/javascript', body: STRIPE_JS }),
    );
    const page = await context.newPage();
    page.on('pageerror', (e) => assert.fail(e.message));
    const response = await page.goto(`${t.baseUrl}/s/${group.shares[1].shareId}`);
    assert.match(
      response?.headers()['content-security-policy'] ?? '',
      /script-src 'self' https:\/\/js\.stripe\.com/,
    );
    assert.equal(await page.locator('#card-number').count(), 0, 'no card fields of ours');
    await page.waitForSelector('#fake-pm');
    assert.deepEqual(await page.evaluate(() => (window as unknown as { stripeSeen: unknown }).stripeSeen), {
      key: 'pk_test_groupcheckout',
      options: { locale: 'en' },
      elements: {
        mode: 'payment',
        amount: 5050,
        currency: 'usd',
        paymentMethodCreation: 'manual',
        captureMethod: 'automatic',
      },
    });

    await page.fill('#fake-pm', 'pm_card_chargeDeclinedInsufficientFunds');
    await page.click('#pay-button');
    // Said at once under the button, and by the pay section itself once the page next reads the share
    // (which may replace the section, and the first message with it, before this line looks).
    await page
      .locator('#pay')
      .filter({ hasText: /another card/ })
      .waitFor();

    await page.fill('#fake-pm', 'pm_card_visa');
    await page.click('#pay-button');
    await page.waitForSelector('#paid');
    const paid = fake.requests.filter((r) => r.path === '/v1/payment_intents' && r.method === 'POST');
    assert.deepEqual(
      paid.map((r) => r.params.payment_method),
      ['pm_card_chargeDeclinedInsufficientFunds', 'pm_card_visa'],
    );
    assert.equal((await sessionOf(t, group.created.session_id)).group.members[1].status, 'paid');
  });

  test('the Payment Element speaks the session’s language and is given the amount as Stripe counts it (ISK in hundredths); without Stripe.js the page says so in that language', async () => {
    // ISK has no decimals in ISO 4217; Stripe counts it in hundredths that are always 00.
    const cart = {
      total: 10_000,
      currency: 'isk',
      items: [{ id: 'sku_tour', name: 'Tour', quantity: 1, unit_price: 10_000 }],
      tax: 0,
      shipping: 0,
    };
    const group = await equalGroup(t, ['Ann', 'Bob'], { cart, extra: { locale: 'fr' } });
    // A German reader of a French session: the session's language wins, on our page and in Stripe's form.
    const context = await browser.newContext({ locale: 'de-DE' });
    await context.route('https://js.stripe.com/**', (route) =>
      route.fulfill({ status: 200, contentType: 'text/javascript', body: STRIPE_JS }),
    );
    const page = await context.newPage();
    page.on('pageerror', (e) => assert.fail(e.message));
    await page.goto(`${t.baseUrl}/s/${group.shares[1].shareId}`);
    await page.waitForSelector('#fake-pm');
    const seen = await page.evaluate(
      () =>
        (
          window as unknown as {
            stripeSeen: { options: unknown; elements: { amount: number; currency: string } };
          }
        ).stripeSeen,
    );
    assert.deepEqual(seen.options, { locale: 'fr' });
    // ISK 5,000 and the consumer fee, in ISO units; Stripe is given a hundred times that.
    assert.equal(group.shares[1].due, 5050);
    assert.deepEqual([seen.elements.amount, seen.elements.currency], [505_000, 'isk']);

    const offline = await browser.newContext({ locale: 'en-US' });
    await offline.route('https://js.stripe.com/**', (route) => route.abort());
    const alone = await offline.newPage();
    await alone.goto(`${t.baseUrl}/s/${group.shares[0].shareId}`);
    await alone
      .locator('#pay-error')
      .filter({ hasText: /Stripe\.js ne s/ })
      .waitFor();
  });

  test('the organizer sets the group up, and the Payment Element appears for their share on the same page', async () => {
    const { created, url } = await newSession(t, { customer: { name: 'Ann' } });
    const context = await browser.newContext({ locale: 'en-US' });
    await context.route('https://js.stripe.com/**', (route) =>
      route.fulfill({ status: 200, contentType: 'text/javascript', body: STRIPE_JS }),
    );
    const page = await context.newPage();
    page.on('pageerror', (e) => assert.fail(e.message));
    await page.goto(url);
    await page.fill('#m1-name', 'Bob');
    await page.click('#setup-form button[type="submit"]');
    await page.waitForSelector('#my-share #fake-pm');
    await page.click('#pay-button');
    await page.waitForFunction(() => !document.querySelector('#my-share'));
    const session = await sessionOf(t, created.session_id);
    assert.equal(session.group.members[0].status, 'paid');
    assert.equal(session.group.paid_amount, 5000);
  });

  test('a card that asks for 3-D Secure goes to Stripe.js’s bank step; closed unfinished, it resumes from the page; then paid', async () => {
    const group = await equalGroup(t, ['Ann', 'Bob']);
    const context = await browser.newContext({ locale: 'en-US' });
    await context.route('https://js.stripe.com/**', (route) =>
      route.fulfill({ status: 200, contentType: 'text/javascript', body: STRIPE_JS }),
    );
    const page = await context.newPage();
    page.on('pageerror', (e) => assert.fail(e.message));
    await page.goto(`${t.baseUrl}/s/${group.shares[1].shareId}`);
    const nextActions = () =>
      page.evaluate(() => (window as unknown as { nextActions?: string[] }).nextActions ?? []);
    const finish = () =>
      page.evaluate(() => (window as unknown as { finishNextAction(): void }).finishNextAction());

    await page.fill('#fake-pm', 'pm_card_authenticationRequired');
    await page.click('#pay-button');
    await page.waitForFunction(
      () => (window as unknown as { nextActions?: string[] }).nextActions?.length === 1,
    );
    const [secret] = await nextActions();
    const paymentIntent = String(secret).split('_secret_')[0] as string;
    assert.match(paymentIntent, /^pi_/);
    assert.equal((await sessionOf(t, group.created.session_id)).group.members[1].status, 'authenticating');

    // The payer closes the bank's window without finishing: the page offers the step again.
    await finish();
    await page.getByRole('button', { name: 'Confirm with my bank' }).click();
    await page.waitForFunction(
      () => (window as unknown as { nextActions?: string[] }).nextActions?.length === 2,
    );
    assert.deepEqual(await nextActions(), [secret, secret], 'the same payment, not a new one');

    fake.authenticate(paymentIntent, 'succeed');
    await finish();
    await page.waitForSelector('#paid');
    assert.equal((await sessionOf(t, group.created.session_id)).group.members[1].status, 'paid');
    const created = fake.requests.filter(
      (r) =>
        r.path === '/v1/payment_intents' &&
        r.method === 'POST' &&
        r.params.payment_method === 'pm_card_authenticationRequired',
    );
    assert.equal(created.length, 1, 'one PaymentIntent for the share');
  });
});
