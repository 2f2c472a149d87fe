/// <reference lib="dom" />
// Paying through the hosted pages in real Chromium: the organizer's own share, members on their own links
// (a declined card first), live progress without reloading, funding with the redirect to success_url,
// covering the rest, cancelling with refunds, expiry, joining an equal split, reminders, and a payment made
// with the keyboard alone.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import type { TestApp } from '../helpers/app.ts';
import { launchChromium } from '../helpers/chromium.ts';
import {
  closeContexts,
  holdSharePolls,
  newSession,
  openPage,
  payWithCard,
  sessionOf,
  startPagesApp,
} from '../helpers/pages.ts';
import { CARDS, eventually, payOk } from '../helpers/payments.ts';

describe('paying on the hosted pages (Chromium)', () => {
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

  const open = (url: string, options: { width?: number } = {}) => openPage(browser, url, options);

  /** The organizer's page with an equal split of Ann (organizer), Bob and Cy saved through the page. */
  async function equalOfThree(extra: Record<string, unknown> = {}) {
    const { created, url } = await newSession(t, {
      customer: { name: 'Ann', email: 'ann@example.com' },
      extra,
    });
    const organizer = await open(url);
    await organizer.fill('#m1-name', 'Bob');
    await organizer.fill('#m1-email', 'bob@example.com');
    await organizer.getByRole('button', { name: 'Add a person' }).click();
    await organizer.fill('#m2-name', 'Cy');
    await organizer.click('#setup-form button[type="submit"]');
    await organizer.waitForSelector('#links');
    const links = await organizer
      .locator('#links li input')
      .evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value));
    return {
      organizer,
      sessionId: created.session_id as string,
      bobUrl: links[0] as string,
      cyUrl: links[1] as string,
    };
  }

  test('the whole group pays on its pages; a decline says why; the organizer sees it live and is sent on', async () => {
    const { organizer, sessionId, bobUrl, cyUrl } = await equalOfThree({
      success_url: 'https://shop.example/thanks?order=ORD-1001',
    });
    await organizer.route('https://shop.example/**', (route) =>
      route.fulfill({ status: 200, contentType: 'text/html', body: '<h1>Shop: thank you</h1>' }),
    );
    // Ann pays her own share on her page.
    await payWithCard(organizer, CARDS.ok);
    await organizer.waitForFunction(() =>
      document.querySelector('#actions-status')?.textContent?.includes('paid'),
    );
    assert.equal(await organizer.locator('#my-share').count(), 0, 'nothing more for Ann to pay');

    // Bob, on his phone: a declined card first, in words, then another card.
    const bob = await open(bobUrl, { width: 360 });
    assert.equal(await bob.textContent('[data-testid="amount-due"]'), '$33.66');
    // What the form says at once, before a poll of the page redraws the section with the same words.
    const polls = await holdSharePolls(bob);
    await payWithCard(bob, CARDS.insufficientFunds);
    await bob.waitForSelector('#pay-error:not(:empty)');
    assert.match((await bob.textContent('#pay-error')) ?? '', /insufficient funds|not enough|funds/i);
    assert.match((await bob.textContent('#pay-error')) ?? '', /another card/);
    assert.equal(await bob.getAttribute('#card-number', 'aria-invalid'), 'true');
    await polls.release();
    assert.equal((await sessionOf(t, sessionId)).group.members[1].status, 'pending');
    await payWithCard(bob, CARDS.ok);
    await bob.waitForSelector('#paid');
    assert.match((await bob.textContent('#paid')) ?? '', /Your share is paid/);
    assert.match((await bob.textContent('#paid')) ?? '', /\(Visa ending 4242\)/);

    // Ann's page shows Bob paid without a reload.
    await organizer.waitForFunction(() =>
      document.querySelector('#progress')?.textContent?.includes('$66.67'),
    );

    // Cy pays; everyone's page turns to funded; Ann is sent to the shop's success page.
    const cy = await open(cyUrl);
    await payWithCard(cy, CARDS.ok);
    await cy.waitForSelector('#paid');
    await bob.waitForFunction(() => document.querySelector('.badge')?.textContent === 'Fully paid');
    await organizer.waitForURL('https://shop.example/thanks?order=ORD-1001', { timeout: 10_000 });
    const session = await sessionOf(t, sessionId);
    assert.equal(session.status, 'funded');
    assert.equal(session.charges.length, 3);
  });

  test('cover the rest: after confirming, the organizer’s share is everything not yet paid', async () => {
    const { organizer, sessionId, bobUrl } = await equalOfThree();
    const bob = await open(bobUrl);
    await payWithCard(bob, CARDS.ok);
    await bob.waitForSelector('#paid');
    await organizer.waitForFunction(() =>
      document.querySelector('[data-action="cover"]')?.textContent?.includes('$33.33'),
    );
    await organizer.click('[data-action="cover"]');
    assert.match(
      (await organizer.textContent('#confirm-text')) ?? '',
      /Cover the rest\? The share not yet paid \(\$33\.33\)/,
    );
    await organizer.click('[data-action="cover-yes"]');
    await organizer.waitForFunction(
      () => document.querySelector('[data-testid="amount-due"]')?.textContent === '$67.34',
    );
    await payWithCard(organizer, CARDS.ok);
    await organizer.waitForSelector('#finished');
    assert.match((await organizer.textContent('#finished')) ?? '', /fully paid/);
    const session = await sessionOf(t, sessionId);
    assert.equal(session.status, 'funded');
    assert.deepEqual(
      session.group.members.map((m: { name: string; amount_cents: number }) => [m.name, m.amount_cents]),
      [
        ['Ann', 6667],
        ['Bob', 3333],
      ],
    );
  });

  test('cancel from the organizer’s page: confirmed, the paid share refunded, every page says so', async () => {
    const { organizer, sessionId, bobUrl } = await equalOfThree();
    const bob = await open(bobUrl);
    await payWithCard(bob, CARDS.ok);
    await bob.waitForSelector('#paid');
    await organizer.click('[data-action="cancel"]');
    await organizer.click('[data-action="confirm-no"]');
    assert.equal(
      await organizer.evaluate(() => document.activeElement?.getAttribute('data-action')),
      'cancel',
    );
    assert.equal((await sessionOf(t, sessionId)).status, 'pending', 'keeping the group changes nothing');
    await organizer.click('[data-action="cancel"]');
    await organizer.click('[data-action="cancel-yes"]');
    await organizer.waitForSelector('#finished');
    assert.match((await organizer.textContent('#finished')) ?? '', /This group was cancelled/);
    assert.equal(await organizer.locator('#setup-form').count(), 0, 'no more set-up');
    const session = await sessionOf(t, sessionId);
    assert.equal(session.status, 'cancelled');
    assert.deepEqual(
      session.refunds.map((r: { amount_cents: number; status: string }) => [r.amount_cents, r.status]),
      [[3366, 'succeeded']],
    );
    await bob.waitForFunction(
      () => document.querySelector('#paid')?.textContent?.includes('refunded'),
      null,
      {
        timeout: 10_000,
      },
    );
  });

  test('a payment that arrives by poll leaves the organizer’s keyboard focus on the button it was on', async () => {
    const { organizer, bobUrl } = await equalOfThree();
    // "Keep the group" gives the focus back to the cancel button, which has no id of its own.
    await organizer.click('[data-action="cancel"]');
    await organizer.click('[data-action="confirm-no"]');
    const cover = (await organizer.textContent('[data-action="cover"]')) ?? '';
    // Bob pays elsewhere: the next poll redraws the section the button is in (what is left to cover).
    await payOk(t, new URL(bobUrl).pathname.split('/').at(-1) as string);
    await organizer.waitForFunction(
      (before) => document.querySelector('[data-action="cover"]')?.textContent !== before,
      cover,
      { timeout: 10_000 },
    );
    assert.equal(
      await organizer.evaluate(() => document.activeElement?.getAttribute('data-action')),
      'cancel',
    );
  });

  test('expiry reaches an open page without a reload', async () => {
    const { organizer, sessionId, bobUrl } = await equalOfThree();
    const bob = await open(bobUrl);
    const res = await t.request('POST', `/v1/test_helpers/sessions/${sessionId}/expire`, {
      key: t.merchant.secretKey,
    });
    assert.equal(res.status, 200, res.text);
    await organizer.waitForSelector('#finished', { timeout: 10_000 });
    assert.match((await organizer.textContent('#finished')) ?? '', /This group expired/);
    await bob.waitForSelector('#finished', { timeout: 10_000 });
    assert.equal(await bob.locator('#pay-form').count(), 0, 'no card form on an expired group');
  });

  test('the group link: a friend joins an equal split and lands on their own share page', async () => {
    const { created } = await newSession(t);
    const joinUrl = `${t.baseUrl}/session/${created.session_id}?access=${created.group_access_token}`;
    const friend = await open(joinUrl);
    await friend.click('#join-form button[type="submit"]');
    await friend.waitForSelector('#join-error:not(:empty)');
    assert.equal(await friend.textContent('#join-error'), 'Enter your name to join.');
    await friend.fill('#join-name', 'Dee');
    await friend.click('#join-form button[type="submit"]');
    await friend.waitForURL(/\/s\/shr_/);
    assert.match((await friend.textContent('h1')) ?? '', /Dee, your share/);
  });

  test('send reminders: pending members with an email are mailed, and the page says how many', async () => {
    const { organizer } = await equalOfThree();
    await organizer.click('[data-action="remind"]');
    await organizer.waitForFunction(() =>
      document.querySelector('#actions-status')?.textContent?.startsWith('Sent'),
    );
    // Ann and Bob have emails; Cy has none.
    assert.equal(
      await organizer.textContent('#actions-status'),
      'Sent 2 reminders. 1 not sent: no email, or reminded recently.',
    );
    await organizer.click('[data-action="remind"]');
    await organizer.waitForFunction(() =>
      document.querySelector('#actions-status')?.textContent?.startsWith('No'),
    );
    assert.match((await organizer.textContent('#actions-status')) ?? '', /at most once an hour/);
  });

  test('a member pays with the keyboard alone', async () => {
    const { bobUrl, sessionId } = await equalOfThree();
    const bob = await open(bobUrl);
    // From the top of the page: the skip link, then the card fields in order.
    await bob.keyboard.press('Tab');
    assert.equal(await bob.evaluate(() => document.activeElement?.textContent), 'Skip to content');
    const focused = async () => bob.evaluate(() => document.activeElement?.id);
    for (let i = 0; i < 10 && (await focused()) !== 'card-number'; i++) await bob.keyboard.press('Tab');
    assert.equal(await focused(), 'card-number');
    await bob.keyboard.type(CARDS.ok);
    await bob.keyboard.press('Tab');
    await bob.keyboard.type('12/34');
    await bob.keyboard.press('Tab');
    await bob.keyboard.type('123');
    await bob.keyboard.press('Enter');
    await bob.waitForSelector('#paid');
    await eventually(async () => (await sessionOf(t, sessionId)).group.members[1].status === 'paid');
  });

  test('a share paid elsewhere shows as paid on its page after a reload, with no form', async () => {
    const { bobUrl } = await equalOfThree();
    const shareId = bobUrl.split('/s/')[1] as string;
    await payOk(t, shareId);
    const bob = await open(bobUrl);
    assert.equal(await bob.locator('#pay-form').count(), 0);
    assert.match((await bob.textContent('#paid')) ?? '', /paid/);
  });

  test('cover the rest after paying: the new share is the organizer’s to pay on their page, and a friend’s link says it is gone', async () => {
    const { organizer, sessionId, bobUrl } = await equalOfThree();
    await payWithCard(organizer, CARDS.ok);
    await organizer.waitForFunction(() => !document.querySelector('#my-share'));
    const bob = await open(bobUrl);
    await organizer.click('[data-action="cover"]');
    await organizer.click('[data-action="cover-yes"]');
    // Bob's and Cy's shares (33.33 each) are now one share of Ann's, with its own fee: 66.66 + 0.67.
    await organizer.waitForSelector('#my-share');
    assert.equal(await organizer.textContent('[data-testid="amount-due"]'), '$67.33');
    assert.equal(await organizer.locator('#links li').count(), 0, 'no link for a share of her own');
    assert.equal(await organizer.locator('[data-action="cover"]').count(), 0, 'nothing left to cover');
    await bob.waitForSelector('#problem', { timeout: 10_000 });
    assert.match((await bob.textContent('h1')) ?? '', /no longer in the group/);
    await payWithCard(organizer, CARDS.ok);
    await organizer.waitForSelector('#finished');
    assert.equal((await sessionOf(t, sessionId)).status, 'funded');
  });

  test('a re-split while a member has the page open: their payment is refused, nothing charged, the new amount shown', async () => {
    const { created, url } = await newSession(t, { customer: { name: 'Ann' } });
    const token = new URL(url).searchParams.get('access');
    const setUp = (amounts: [number, number], ids: string[] = []) =>
      t.request('PUT', `/api/v1/session/group?access=${token}`, {
        body: {
          mode: 'custom',
          members: [
            { ...(ids[0] ? { id: ids[0] } : {}), name: 'Ann', amount_cents: amounts[0] },
            { ...(ids[1] ? { id: ids[1] } : {}), name: 'Bob', amount_cents: amounts[1] },
          ],
        },
      });
    const first = await setUp([5000, 5000]);
    const [ann, bobMember] = first.body.group.members;
    const bob = await open(bobMember.share_url);
    assert.equal(await bob.textContent('[data-testid="amount-due"]'), '$50.50');
    // Bob starts typing; the organizer changes the split before he presses Pay. His page's poll is held
    // meanwhile: a poll that saw the new amount first would replace his form with it (and he would pay
    // the new amount knowingly), which is not the race this test is about.
    const polls = await holdSharePolls(bob);
    await bob.fill('#card-number', CARDS.ok);
    await bob.fill('#card-exp', '12/34');
    await bob.fill('#card-cvc', '123');
    assert.equal((await setUp([4000, 6000], [ann.id, bobMember.id])).status, 200);
    await bob.click('#pay-button');
    await polls.release();
    await bob.waitForFunction(
      () => document.querySelector('[data-testid="amount-due"]')?.textContent === '$60.60',
    );
    assert.match((await bob.textContent('#pay-error')) ?? '', /changed to \$60\.60 \(with the fee\)/);
    assert.equal((await sessionOf(t, created.session_id)).group.paid_amount, 0, 'nothing was charged');
    await payWithCard(bob, CARDS.ok);
    await bob.waitForSelector('#paid');
    assert.equal((await sessionOf(t, created.session_id)).group.paid_amount, 6000);
  });

  test('joining twice by double click makes one member', async () => {
    const { created } = await newSession(t);
    const friend = await open(
      `${t.baseUrl}/session/${created.session_id}?access=${created.group_access_token}`,
    );
    await friend.fill('#join-name', 'Dee');
    await friend.dblclick('#join-button');
    await friend.waitForURL(/\/s\/shr_/);
    const names = (await sessionOf(t, created.session_id)).group.members.map((m: { name: string }) => m.name);
    assert.deepEqual(
      names.filter((n: string) => n === 'Dee'),
      ['Dee'],
    );
  });

  test('a funded group’s page opened later stays put: no redirect to success_url', async () => {
    const { organizer, bobUrl, cyUrl } = await equalOfThree({ success_url: 'https://shop.example/thanks' });
    let left = false;
    await payWithCard(organizer, CARDS.ok);
    for (const url of [bobUrl, cyUrl]) await payOk(t, url.split('/s/')[1] as string);
    const again = await open(organizer.url());
    again.on('framenavigated', (frame) => {
      if (frame === again.mainFrame() && frame.url().startsWith('https://shop.example')) left = true;
    });
    await again.waitForSelector('#finished');
    await again.waitForTimeout(2000);
    assert.equal(left, false);
  });
});
