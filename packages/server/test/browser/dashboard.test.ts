/// <reference lib="dom" />
// The merchant dashboard in real Chromium (docs/dashboard.md), with data made through the API: signing in
// by a link mailed through a real SMTP server on loopback; the sessions list, its filter and search; a
// session's page with its group, cards, ledger and timeline; redeliver reaching a webhook receiver; cancel
// and remind; a test event sent from the webhooks page to a receiver that verifies its signature; a viewer
// sees no buttons; sign-out. Every page in light and dark is checked by axe-core
// (WCAG 2.1 A/AA), for sideways scrolling at 320 px, and photographed (test-artifacts/dashboard/).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { verifyWebhook } from '@group-checkout/node';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startDispatcher } from '../../src/jobs/dispatcher.ts';
import type { TestApp } from '../helpers/app.ts';
import { artifactDir, axeViolations, launchChromium } from '../helpers/chromium.ts';
import { dashboardUser, linkToken } from '../helpers/dashboard.ts';
import { startPagesApp } from '../helpers/pages.ts';
import { CARDS, equalGroup, eventually, payOk } from '../helpers/payments.ts';
import { Receiver } from '../helpers/receiver.ts';
import { sampleCart } from '../helpers/sessions.ts';
import { type SmtpReceiver, startSmtpServer } from '../helpers/smtp.ts';

describe('merchant dashboard (Chromium)', () => {
  let t: TestApp;
  let browser: Browser;
  let smtp: SmtpReceiver;
  let receiver: Receiver;
  let dispatcher: { stop(): Promise<void> };
  const shots = artifactDir('dashboard');
  let funded: Awaited<ReturnType<typeof equalGroup>>;
  let pending: Awaited<ReturnType<typeof equalGroup>>;

  before(async () => {
    smtp = await startSmtpServer();
    receiver = await Receiver.start();
    [t, browser] = await Promise.all([startPagesApp({ env: { SMTP_URL: smtp.url } }), launchChromium()]);
    dispatcher = await startDispatcher(t.deps);
    const hook = await t.request('POST', '/v1/webhooks', {
      key: t.merchant.secretKey,
      body: { url: receiver.url, events: ['*'] },
    });
    assert.equal(hook.status, 200, hook.text);
    funded = await equalGroup(t, ['Ann', 'Bob'], {});
    for (const s of funded.shares) await payOk(t, s.shareId, CARDS.ok);
    pending = await equalGroup(t, ['Cy', 'Dee', 'Eve'], { via: 'secret' });
    await payOk(t, pending.shares[0].shareId);
    // A few more, one cancelled, so the list has every status to filter.
    const cancelled = await equalGroup(t, ['Fay', 'Gus']);
    await t.request('POST', `/v1/sessions/${cancelled.created.session_id}/cancel`, {
      key: t.merchant.secretKey,
    });
    await eventually(async () => receiver.received.some((r) => r.event.type === 'group.funded'));
  });
  after(async () => {
    await dispatcher.stop();
    await browser.close();
    await t.close();
    await receiver.close();
    await smtp.close();
  });

  /** A browser context signed in as `user` through the link's own page. */
  async function signedIn(role: 'owner' | 'developer' | 'viewer', scheme: 'light' | 'dark' = 'light') {
    const user = await dashboardUser(t, role);
    const context = await browser.newContext({ colorScheme: scheme });
    const page = await context.newPage();
    await page.goto(`${t.baseUrl}/dashboard/sign-in?token=${await linkToken(t, user)}`);
    await page.click('text=Continue to the dashboard');
    await page.waitForURL(/\/dashboard\/sessions$/);
    return { context, page, user };
  }

  test('sign in by a mailed link; the cookie is HttpOnly and SameSite=Strict; a used link is refused', async () => {
    const user = await dashboardUser(t, 'owner');
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${t.baseUrl}/dashboard`);
    await page.waitForURL(/\/dashboard\/sign-in$/);
    await page.fill('#email', user.email);
    await page.click('text=Mail me a sign-in link');
    await page.waitForSelector('text=Check your mail');
    await eventually(async () => smtp.messages.some((m) => m.to.includes(user.email)));
    const mail = smtp.messages.find((m) => m.to.includes(user.email));
    const url = /(http:\/\/\S+\/dashboard\/sign-in\?token=\S+)/.exec(mail?.text ?? '')?.[1] as string;
    await page.goto(url);
    await page.screenshot({ path: join(shots, 'sign-in-confirm.png') });
    await page.click('text=Continue to the dashboard');
    await page.waitForURL(/\/dashboard\/sessions$/);
    const [cookie] = await context.cookies();
    assert.equal(cookie?.name, 'gc_dashboard');
    assert.equal(cookie?.httpOnly, true);
    assert.equal(cookie?.sameSite, 'Strict');
    assert.equal(await page.evaluate(() => document.cookie), '', 'scripts cannot read the session cookie');

    const other = await (await browser.newContext()).newPage();
    const used = await other.goto(url);
    assert.equal(used?.status(), 410);
    assert.ok(await other.isVisible('text=This sign-in link does not work'));
    await context.close();
  });

  test('the sessions list filters by status, searches by order_ref or id, and pages', async () => {
    for (let i = 0; i < 26; i++) {
      const res = await t.request('POST', '/v1/sessions', {
        key: t.merchant.secretKey,
        body: { cart: sampleCart({ metadata: { order_ref: `BULK-${i}` } }) },
      });
      assert.equal(res.status, 200, res.text);
    }
    const { context, page } = await signedIn('viewer');
    assert.equal(await page.locator('tbody tr').count(), 25);
    await page.click('text=Older sessions');
    assert.ok((await page.locator('tbody tr').count()) >= 4);
    await page.goto(`${t.baseUrl}/dashboard/sessions`);
    await page.selectOption('#status', 'funded');
    await page.click('button:has-text("Show")');
    await page.waitForURL(/status=funded/);
    const ids = await page.locator('tbody td:first-child').allTextContents();
    assert.deepEqual(ids, [funded.created.session_id]);
    await page.selectOption('#status', '');
    await page.fill('#q', 'BULK-7');
    await page.click('button:has-text("Show")');
    await page.waitForURL(/q=BULK-7/);
    assert.deepEqual(await page.locator('tbody td:nth-child(2)').allTextContents(), ['BULK-7']);
    await page.fill('#q', pending.created.session_id);
    await page.click('button:has-text("Show")');
    assert.deepEqual(await page.locator('tbody td:first-child').allTextContents(), [
      pending.created.session_id,
    ]);
    await context.close();
  });

  test("a session's page shows the group, cards, ledger and timeline; redeliver reaches the receiver", async () => {
    const { context, page } = await signedIn('developer');
    await page.goto(`${t.baseUrl}/dashboard/sessions/${funded.created.session_id}`);
    const text = (await page.textContent('main')) ?? '';
    assert.match(text, /funded/);
    assert.match(text, /Ann/);
    assert.match(text, /Bob/);
    assert.match(text, /visa ···· 4242/i);
    assert.match(text, /Dinner for two/);
    assert.ok((await page.locator('#ledger-h + div tbody tr').count()) > 0, 'ledger lines are shown');
    assert.match(text, /group\.funded/);
    await eventually(async () => {
      await page.reload();
      return /attempt 1 at .*HTTP 200/.test((await page.textContent('main')) ?? '');
    });
    const before = receiver.received.filter((r) => r.event.type === 'group.funded').length;
    await page.click('button:has-text("Redeliver group.funded")');
    await page.waitForURL(/done=redelivered/);
    assert.ok(await page.isVisible('text=The event is on its way again'));
    await eventually(
      async () => receiver.received.filter((r) => r.event.type === 'group.funded').length === before + 1,
    );
    const again = receiver.received.filter((r) => r.event.type === 'group.funded');
    assert.equal(again.at(-1)?.id, again[0]?.id, 'the same event id: a receiver can tell it is a redelivery');
    await context.close();
  });

  test('remind and cancel a pending session from its page', async () => {
    const { context, page } = await signedIn('owner');
    await page.goto(`${t.baseUrl}/dashboard/sessions/${pending.created.session_id}`);
    await page.click('button:has-text("Remind pending members")');
    await page.waitForURL(/done=reminded/);
    await page.click('button:has-text("Cancel session")');
    await page.waitForURL(/done=cancelled/);
    assert.match((await page.textContent('main')) ?? '', /cancelled/);
    assert.equal(await page.locator('button:has-text("Cancel session")').count(), 0);
    const api = await t.request('GET', `/v1/sessions/${pending.created.session_id}`, {
      key: t.merchant.secretKey,
    });
    assert.equal(api.body.status, 'cancelled');
    assert.equal(api.body.refunds.length, 1, 'the paid share was refunded, as the API cancels');
    await context.close();
  });

  test('a viewer sees no change buttons; sign-out ends the session', async () => {
    const { context, page } = await signedIn('viewer');
    await page.goto(`${t.baseUrl}/dashboard/sessions/${funded.created.session_id}`);
    assert.equal(await page.locator('main button').count(), 0);
    await page.goto(`${t.baseUrl}/dashboard/settings`);
    assert.equal(await page.locator('main form').count(), 0, 'no invite or remove for a viewer');
    await page.click('button:has-text("Sign out")');
    await page.waitForURL(/\/dashboard\/sign-in$/);
    await page.goto(`${t.baseUrl}/dashboard/sessions`);
    await page.waitForURL(/\/dashboard\/sign-in$/);
    await context.close();
  });

  test('webhooks: add an endpoint (secret shown once), rotate its secret, see recent deliveries', async () => {
    const { context, page } = await signedIn('developer');
    await page.click('nav >> text=Webhooks');
    await page.waitForURL(/\/dashboard\/webhooks$/);
    assert.match((await page.textContent('main')) ?? '', /group\.funded/, 'recent deliveries are listed');
    await page.fill('#hook-url', 'https://shop.example/new-hooks');
    await page.check('input[value="group.funded"]');
    await page.click('button:has-text("Add endpoint")');
    await page.waitForSelector('#new-secret');
    const secret = (await page.textContent('#new-secret')) ?? '';
    assert.match(secret, /^whsec_/);
    await page.screenshot({ path: join(shots, 'webhooks-secret-shown.png'), fullPage: true });
    const hooks = await t.request('GET', '/v1/webhooks', { key: t.merchant.secretKey });
    const made = hooks.body.data.find((w: { url: string }) => w.url === 'https://shop.example/new-hooks');
    assert.ok(made);
    await page.click(`button:has-text("Rotate secret of ${made.id}")`);
    await page.waitForSelector('text=Secret rotated');
    const next = (await page.textContent('#new-secret')) ?? '';
    assert.ok(next.startsWith('whsec_') && next !== secret);
    await page.goto(`${t.baseUrl}/dashboard/webhooks`);
    assert.equal(await page.locator('#new-secret').count(), 0, 'a secret is never shown again');
    await context.close();
  });

  test('webhooks: send a test event; the receiver verifies its signature with the secret the page showed', async () => {
    const { context, page } = await signedIn('developer');
    await page.goto(`${t.baseUrl}/dashboard/webhooks`);
    const url = `http://127.0.0.1:${receiver.port}/tested`;
    await page.fill('#hook-url', url);
    await page.check('input[value="group.funded"]');
    await page.click('button:has-text("Add endpoint")');
    await page.waitForSelector('#new-secret');
    const secret = (await page.textContent('#new-secret')) ?? '';
    const hooks = await t.request('GET', '/v1/webhooks', { key: t.merchant.secretKey });
    const made = hooks.body.data.find((w: { url: string }) => w.url === url);
    assert.ok(made);
    await page.goto(`${t.baseUrl}/dashboard/webhooks`);
    await page.click(`button:has-text("Send test event to ${made.id}")`);
    await page.waitForURL(/done=test-sent/);
    assert.ok(await page.isVisible('text=A signed webhook.test event is on its way'));
    await eventually(async () => receiver.received.some((r) => r.path === '/tested'));
    const got = receiver.received.filter((r) => r.path === '/tested');
    assert.equal(got.length, 1, 'only the test event: the endpoint takes group.funded only');
    // The receiver's check, as a merchant's server makes it: the signature, with the secret shown once.
    const event = verifyWebhook<{ type: string; data: { webhook_id: string } }>(
      got[0]?.body ?? '',
      got[0]?.headers ?? {},
      secret,
    );
    assert.equal(event.type, 'webhook.test');
    assert.equal(event.data.webhook_id, made.id);
    await eventually(async () => {
      await page.reload();
      const main = (await page.textContent('main')) ?? '';
      return /webhook\.test to http:\/\/127\.0\.0\.1:\d+\/tested delivered/.test(main);
    });
    await page.screenshot({ path: join(shots, 'webhooks-test-event.png'), fullPage: true });
    await context.close();
  });

  test('developers: roll the publishable key (shown once, works); add an allowed origin', async () => {
    const { context, page } = await signedIn('developer');
    await page.click('nav >> text=Developers');
    await page.waitForURL(/\/dashboard\/developers$/);
    await page.click('button:has-text("Roll publishable key")');
    await page.waitForSelector('#new-secret');
    const key = (await page.textContent('#new-secret')) ?? '';
    assert.match(key, /^svc_pk_test_/);
    await page.screenshot({ path: join(shots, 'developers-key-rolled.png'), fullPage: true });
    const read = await t.request('GET', `/v1/sessions/${funded.created.session_id}`, { key });
    assert.equal(read.status, 200, 'the new publishable key reads a session');
    await page.fill('#origin', 'https://camping.example');
    await page.click('button:has-text("Add origin")');
    await page.waitForURL(/done=origin-added/);
    const me = await t.request('GET', '/v1/merchants/me', { key: t.merchant.secretKey });
    assert.ok(me.body.allowed_origins.includes('https://camping.example'));
    await context.close();
  });

  test('keyboard: the skip link and every control are reachable with Tab', async () => {
    const { context, page } = await signedIn('owner');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Skip to content');
    await page.keyboard.press('Enter');
    assert.match(page.url(), /#main$/);
    await context.close();
  });

  for (const scheme of ['light', 'dark'] as const) {
    test(`no axe violation on any page, ${scheme}; nothing scrolls sideways at 320 px`, async () => {
      const { context, page: first } = await signedIn('owner', scheme);
      await first.close();
      const anonymous = await browser.newContext({ colorScheme: scheme });
      const pages: [string, BrowserContext, string][] = [
        ['sign-in', anonymous, '/dashboard/sign-in'],
        ['link-dead', anonymous, '/dashboard/sign-in?token=dsl_nothing'],
        ['overview', context, '/dashboard'],
        ['sessions', context, '/dashboard/sessions'],
        ['sessions-empty', context, '/dashboard/sessions?q=nothing-matches'],
        ['session-funded', context, `/dashboard/sessions/${funded.created.session_id}`],
        ['session-cancelled', context, `/dashboard/sessions/${pending.created.session_id}`],
        ['settings', context, '/dashboard/settings'],
        ['webhooks', context, '/dashboard/webhooks'],
        ['developers', context, '/dashboard/developers'],
        ['not-found', context, '/dashboard/sessions/gs_nothing'],
      ];
      const found: string[] = [];
      // One tab a context, going from page to page (a new tab costs Chromium about as much CPU as three
      // page loads).
      const tabs = new Map<BrowserContext, Page>();
      for (const [name, ctx, path] of pages) {
        // One load a page: checked at 1280 px, then narrowed as a person narrows a window.
        const page = tabs.get(ctx) ?? (await ctx.newPage());
        tabs.set(ctx, page);
        await page.setViewportSize({ width: 1280, height: 800 });
        await page.goto(`${t.baseUrl}${path}`);
        await page.screenshot({ path: join(shots, `${name}-${scheme}-1280.png`), fullPage: true });
        for (const v of await axeViolations(page)) found.push(`${name}: ${v}`);
        await page.setViewportSize({ width: 320, height: 800 });
        await page.screenshot({ path: join(shots, `${name}-${scheme}-320.png`), fullPage: true });
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        assert.ok(overflow <= 0, `${name} at 320 px scrolls sideways by ${overflow} px`);
      }
      await context.close();
      await anonymous.close();
      assert.deepEqual(found, []);
    });
  }
});
