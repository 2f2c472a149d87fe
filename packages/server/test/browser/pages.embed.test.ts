/// <reference lib="dom" />
// Embedding in real Chromium: the organizer's page in an iframe of the merchant's page tells that page
// what happens (group.created, group.funded, close on Escape), only when the parent is a recorded origin;
// any other origin, or any framing outside embed mode, is refused by the browser itself (frame-ancestors).
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, afterEach, before, describe, test } from 'node:test';
import type { Browser, Frame, Page } from 'playwright-core';
import type { TestApp, TestMerchant } from '../helpers/app.ts';
import { launchChromium } from '../helpers/chromium.ts';
import { closeContexts, newSession, startPagesApp } from '../helpers/pages.ts';
import { payOk } from '../helpers/payments.ts';

/** A merchant's page on its own origin that frames `?src=` and keeps every message it is sent. */
async function parentSite(host: string): Promise<{ origin: string; server: Server }> {
  const server = createServer((request, response) => {
    const src = new URL(request.url ?? '/', 'http://x').searchParams.get('src') ?? '';
    response.setHeader('content-type', 'text/html');
    response.end(`<!doctype html><title>Shop</title>
<script>window.messages = []; addEventListener('message', (e) => messages.push({ origin: e.origin, data: e.data }));</script>
<iframe id="gc" title="Group Checkout" width="800" height="700" src="${src.replace(/"/g, '&quot;')}"></iframe>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  return { origin: `http://${host}:${address.port}`, server };
}

describe('embedding the hosted pages (Chromium)', () => {
  let t: TestApp;
  let browser: Browser;
  let recorded: { origin: string; server: Server };
  let stranger: { origin: string; server: Server };
  let merchant: TestMerchant;
  before(async () => {
    [t, browser, recorded, stranger] = await Promise.all([
      startPagesApp(),
      launchChromium(),
      parentSite('127.0.0.1'),
      // Another origin on the same machine: another host name is another origin.
      parentSite('localhost'),
    ]);
    merchant = await t.createMerchant({ allowedOrigins: [recorded.origin] });
  });
  after(async () => {
    await browser.close();
    recorded.server.close();
    stranger.server.close();
    await t.close();
  });
  afterEach(() => closeContexts(browser));

  async function framed(
    parent: string,
    src: string,
  ): Promise<{ page: Page; frame: () => Frame | undefined }> {
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${parent}/?src=${encodeURIComponent(src)}`);
    return { page, frame: () => page.frames().find((f) => f.url().startsWith(t.baseUrl)) };
  }

  const messages = (page: Page) =>
    page.evaluate(
      () => (window as unknown as { messages: { origin: string; data: Record<string, unknown> }[] }).messages,
    );

  test('framed by the recorded origin: the page runs and posts its events to that origin only', async () => {
    const { created, url } = await newSession(t, { merchant });
    const src = `${url}&embed=1&parent_origin=${encodeURIComponent(recorded.origin)}`;
    const { page, frame } = await framed(recorded.origin, src);
    await page.waitForFunction(() => (window as unknown as { messages: unknown[] }).messages.length > 0);
    assert.deepEqual(await messages(page), [
      {
        origin: t.baseUrl,
        data: {
          source: 'group-checkout',
          type: 'group.created',
          session_id: created.session_id,
          order_ref: 'ORD-1001',
        },
      },
    ]);
    assert.ok(await frame()?.locator('#setup-form').count(), 'the page is shown in the frame');

    // The group pays elsewhere; the framed page hears of it by polling and tells the parent.
    const res = await t.request(
      'PUT',
      `/api/v1/session/group?access=${new URL(url).searchParams.get('access')}`,
      {
        body: { mode: 'equal', members: [{ name: 'Ann' }, { name: 'Bob' }] },
      },
    );
    assert.equal(res.status, 200, res.text);
    for (const m of res.body.group.members) await payOk(t, m.share_id);
    await page.waitForFunction(
      () =>
        (window as unknown as { messages: { data: { type: string } }[] }).messages.some(
          (m) => m.data.type === 'group.funded',
        ),
      null,
      { timeout: 10_000 },
    );
    const funded = (await messages(page)).find((m) => m.data.type === 'group.funded');
    assert.deepEqual(funded?.data, {
      source: 'group-checkout',
      type: 'group.funded',
      session_id: created.session_id,
      order_ref: 'ORD-1001',
    });

    // Escape inside the frame asks the parent to close the modal.
    await frame()?.locator('h1').click();
    await page.keyboard.press('Escape');
    await page.waitForFunction(() =>
      (window as unknown as { messages: { data: { type: string } }[] }).messages.some(
        (m) => m.data.type === 'close',
      ),
    );
  });

  test('a parent_origin that is not recorded gets no message, though the recorded parent may frame the page', async () => {
    const { url } = await newSession(t, { merchant });
    const src = `${url}&embed=1&parent_origin=${encodeURIComponent(stranger.origin)}`;
    const { page, frame } = await framed(recorded.origin, src);
    await page.waitForSelector('#gc');
    await page.waitForFunction(() => true);
    const inner = frame();
    assert.ok(inner);
    await inner.waitForSelector('#setup-form');
    await page.waitForTimeout(500);
    assert.deepEqual(await messages(page), []);
  });

  test('a parent_origin that is no origin (*, null, a path, a directive, spaces, unicode) gets no message', async () => {
    const { url } = await newSession(t, { merchant });
    for (const parent of [
      '*',
      'null',
      `${recorded.origin}/`,
      `${recorded.origin}/shop`,
      `${recorded.origin}; report-uri https://evil.example/r`,
      `${recorded.origin} https://evil.example`,
      'https://bücher.example',
    ]) {
      const src = `${url}&embed=1&parent_origin=${encodeURIComponent(parent)}`;
      const { page, frame } = await framed(recorded.origin, src);
      await page.waitForSelector('#gc');
      await page.waitForFunction(() => true);
      const inner = frame();
      assert.ok(inner, parent);
      // The page runs, framed by the recorded origin: its policy names that origin only.
      await inner.waitForSelector('#setup-form');
      await page.waitForTimeout(300);
      assert.deepEqual(await messages(page), [], parent);
      await page.context().close();
    }
  });

  test('a session recorded with Origin "*" before origins were parsed is framed by nobody and posts to nobody', async () => {
    const { created, url } = await newSession(t, { merchant });
    await t.deps.db.kysely
      .updateTable('sessions')
      .set({ embed_origins: JSON.stringify(['*']) })
      .where('id', '=', created.session_id)
      .execute();
    for (const parent of [stranger.origin, recorded.origin]) {
      const { page } = await framed(parent, `${url}&embed=1&parent_origin=${encodeURIComponent('*')}`);
      const iframe = await (await page.waitForSelector('#gc')).contentFrame();
      await page.waitForTimeout(700);
      const ours = await iframe?.evaluate(() => document.getElementById('app') !== null).catch(() => false);
      assert.equal(ours, false, `${parent} framing a "*" session`);
      assert.deepEqual(await messages(page), []);
      await page.context().close();
    }
  });

  test('another origin cannot frame the page, nor can anyone outside embed mode', async () => {
    const { url } = await newSession(t, { merchant });
    for (const [parent, src] of [
      [stranger.origin, `${url}&embed=1&parent_origin=${encodeURIComponent(stranger.origin)}`],
      [recorded.origin, url],
    ] as const) {
      const { page } = await framed(parent, src);
      const iframe = await (await page.waitForSelector('#gc')).contentFrame();
      await page.waitForTimeout(700);
      // Chromium replaces a refused frame with its own error page: none of ours is in it.
      const ours = await iframe?.evaluate(() => document.getElementById('app') !== null).catch(() => false);
      assert.equal(ours, false, `${parent} framing ${src}`);
      assert.deepEqual(await messages(page), []);
    }
  });
});
