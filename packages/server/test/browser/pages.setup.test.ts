/// <reference lib="dom" />
// The organizer sets the group up on the hosted page, in real Chromium, in each split mode; the amounts the
// service then holds are what the page said, and mistakes are named next to the field before anything is sent.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { TestApp } from '../helpers/app.ts';
import { launchChromium } from '../helpers/chromium.ts';
import { closeContexts, newSession, openPage, sessionOf, startPagesApp } from '../helpers/pages.ts';

describe('group set-up on the organizer’s page (Chromium)', () => {
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

  /** A new session's organizer page, open in a fresh context; organizer "Ann" with two empty rows. */
  async function organizerPage(): Promise<{ page: Page; sessionId: string }> {
    const { created, url } = await newSession(t, { customer: { name: 'Ann', email: 'ann@example.com' } });
    const page = await openPage(browser, url);
    await page.waitForFunction(() => document.getElementById('live') !== null);
    return { page, sessionId: created.session_id };
  }

  const amounts = async (sessionId: string) =>
    (await sessionOf(t, sessionId)).group.members.map((m: { name: string; amount_cents: number }) => [
      m.name,
      m.amount_cents,
    ]);

  async function save(page: Page) {
    await page.click('#setup-form button[type="submit"]');
    await page.waitForSelector('#links');
  }

  test('equal: three people; the shares add up to the total, leftover cents to the first', async () => {
    const { page, sessionId } = await organizerPage();
    assert.equal(await page.inputValue('#m0-name'), 'Ann');
    await page.fill('#m1-name', 'Bob');
    await page.getByRole('button', { name: 'Add a person' }).click();
    assert.equal(
      await page.evaluate(() => document.activeElement?.id),
      'm2-name',
      'focus moves to the new row',
    );
    await page.keyboard.type('Cy');
    await save(page);
    assert.deepEqual(await amounts(sessionId), [
      ['Ann', 3334],
      ['Bob', 3333],
      ['Cy', 3333],
    ]);
    const links = await page
      .locator('#links input[readonly]')
      .evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value));
    assert.equal(links.length, 3, 'a link for Bob, one for Cy, and the group link');
    assert.match(links[0] as string, new RegExp(`^${t.baseUrl}/s/shr_`));
    assert.ok((await page.textContent('#progress'))?.includes('Bob'));
  });

  test('itemized: units of each item assigned; tax and shipping follow the items', async () => {
    const { page, sessionId } = await organizerPage();
    await page.check('input[name="mode"][value="itemized"]');
    await page.fill('#m1-name', 'Bob');
    await page.fill('#m0-item0', '1');
    await page.fill('#m1-item0', '0');
    await page.click('#setup-form button[type="submit"]');
    // One dinner and the cake are nobody's yet: the page says so and sends nothing.
    await page.waitForSelector('#items-error');
    assert.match((await page.textContent('#items-error')) ?? '', /Dinner for two: 1 of 2 assigned/);
    assert.equal((await sessionOf(t, sessionId)).group.mode, 'equal', 'nothing was saved');
    await page.fill('#m1-item0', '1');
    await page.fill('#m1-item1', '1');
    await save(page);
    const [[, ann], [, bob]] = (await amounts(sessionId)) as [[string, number], [string, number]];
    assert.equal(ann + bob, 10_000);
    // Ann: 40.00 of 90.00 of items → 40.00 + 4/9 of 10.00 extras = 44.44; Bob the rest.
    assert.deepEqual([ann, bob], [4444, 5556]);
  });

  test('custom: amounts that do not add up are refused in words; then saved', async () => {
    const { page, sessionId } = await organizerPage();
    await page.check('input[name="mode"][value="custom"]');
    await page.fill('#m1-name', 'Bob');
    await page.fill('#m0-amount', '60');
    await page.fill('#m1-amount', '30.5');
    await page.click('#setup-form button[type="submit"]');
    await page.waitForSelector('#setup-error:not(:empty)');
    assert.equal(
      await page.textContent('#setup-error'),
      'The amounts add up to $90.50; they must add up to $100.00.',
    );
    await page.fill('#m1-amount', '4x');
    await page.click('#setup-form button[type="submit"]');
    await page.waitForSelector('#m1-amount-error');
    assert.equal(await page.getAttribute('#m1-amount', 'aria-invalid'), 'true');
    assert.equal(await page.getAttribute('#m1-amount', 'aria-describedby'), 'm1-amount-error');
    await page.fill('#m1-amount', '40.00');
    await save(page);
    assert.deepEqual(await amounts(sessionId), [
      ['Ann', 6000],
      ['Bob', 4000],
    ]);
  });

  test('percentage: basis points from the typed percentages', async () => {
    const { page, sessionId } = await organizerPage();
    await page.check('input[name="mode"][value="percentage"]');
    await page.fill('#m1-name', 'Bob');
    await page.fill('#m0-percent', '66.67');
    await page.fill('#m1-percent', '33.33');
    await save(page);
    assert.deepEqual(await amounts(sessionId), [
      ['Ann', 6667],
      ['Bob', 3333],
    ]);
  });

  test('host-pays: the organizer’s rest is shown as the friends’ amounts are typed', async () => {
    const { page, sessionId } = await organizerPage();
    await page.check('input[name="mode"][value="host-pays"]');
    await page.fill('#m1-name', 'Bob');
    await page.fill('#m1-amount', '25');
    await page.waitForFunction(() =>
      document.querySelector('[data-testid="host-rest"]')?.textContent?.includes('$75.00'),
    );
    await save(page);
    assert.deepEqual(await amounts(sessionId), [
      ['Ann', 7500],
      ['Bob', 2500],
    ]);
  });

  test('an empty name and a bad email are named next to their fields; nothing is sent', async () => {
    const { page, sessionId } = await organizerPage();
    await page.fill('#m1-email', 'not-an-email');
    await page.click('#setup-form button[type="submit"]');
    await page.waitForSelector('#m1-name-error');
    assert.equal(await page.textContent('#m1-name-error'), 'Enter a name.');
    assert.match((await page.textContent('#m1-email-error')) ?? '', /Enter an email address/);
    assert.equal(
      await page.evaluate(() => document.activeElement?.id),
      'm1-name',
      'focus on the first mistake',
    );
    assert.equal((await sessionOf(t, sessionId)).group.members.length, 1, 'the group was not changed');
  });

  test('a person can be removed, and the split is changed again after saving', async () => {
    const { page, sessionId } = await organizerPage();
    await page.fill('#m1-name', 'Bob');
    await page.getByRole('button', { name: 'Add a person' }).click();
    await page.fill('#m2-name', 'Cy');
    await save(page);
    await page.getByRole('button', { name: 'Remove Cy' }).click();
    await page.click('#setup-form button[type="submit"]');
    await page.waitForFunction(() => !document.querySelector('#links')?.textContent?.includes('Cy'));
    assert.deepEqual(await amounts(sessionId), [
      ['Ann', 5000],
      ['Bob', 5000],
    ]);
  });
});
