// The hosted pages over HTTP, as a browser receives them before any script runs: rendered content, the
// security headers (frame-ancestors per embed mode), refusals as pages, the assets' caching and compression,
// the critical path's weight, and Apple Pay's domain association file. The browser suites (test/browser) drive the same pages in Chromium.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import type { TestApp } from '../helpers/app.ts';
import { newSession, startPagesApp } from '../helpers/pages.ts';
import { equalGroup } from '../helpers/payments.ts';
import { rawHttp } from '../helpers/raw-http.ts';
import { sampleCart } from '../helpers/sessions.ts';

/** The page's JSON data block, as its script reads it. */
function pageData(html: string) {
  const match = /<script type="application\/json" id="page-data">(.*?)<\/script>/s.exec(html);
  assert.ok(match, 'the page carries its data');
  return JSON.parse(match[1] as string);
}

const csp = (res: { headers: Headers }) => res.headers.get('content-security-policy') ?? '';

describe('hosted pages over HTTP', () => {
  let t: TestApp;
  before(async () => {
    t = await startPagesApp();
  });
  after(() => t.close());

  const get = (path: string, headers: Record<string, string> = {}) => t.request('GET', path, { headers });
  const pathOf = (url: string) => url.slice(t.baseUrl.length);

  test("the organizer's page reads before any script: cart, total, set-up form, progress", async () => {
    const { url } = await newSession(t);
    const res = await get(pathOf(url), { 'accept-language': 'en-US,en;q=0.8' });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    for (const text of [
      'Test Shop',
      'Order ORD-1001',
      'Dinner for two',
      'Cake',
      '$100.00',
      'Set up your group',
      'Group progress',
      'Split equally',
      'I pay the rest',
    ]) {
      assert.ok(res.text.includes(text), `the page shows ${text}`);
    }
    assert.match(res.text, /<html lang="en-US" data-theme="auto">/);
    assert.match(res.text, /<script defer src="\/assets\/organizer\.[\w-]+\.js"><\/script>/);
  });

  test('every page sends the security headers; outside embed mode nothing may frame it', async () => {
    const { url } = await newSession(t);
    const group = await equalGroup(t, ['Ann', 'Bob']);
    for (const path of [pathOf(url), `/s/${group.shares[1].shareId}`, '/s/shr_nope', '/session/gs_x']) {
      const res = await get(path);
      const policy = csp(res);
      for (const part of [
        "default-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
      ]) {
        assert.ok(policy.includes(part), `${path}: ${part} in ${policy}`);
      }
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(res.headers.get('referrer-policy'), 'no-referrer');
    }
  });

  test('embed mode: framed only by the recorded origins; parent_origin never widens them', async () => {
    const { url } = await newSession(t);
    const embedded = await get(
      `${pathOf(url)}&embed=1&parent_origin=${encodeURIComponent('https://evil.example')}`,
    );
    assert.match(csp(embedded), /frame-ancestors https:\/\/shop\.example(;|$)/);
    assert.ok(!csp(embedded).includes('evil.example'));
    assert.equal(pageData(embedded.text).ctx.parentOrigin, undefined, 'no parent to post to');
    const recorded = await get(
      `${pathOf(url)}&embed=1&parent_origin=${encodeURIComponent('https://shop.example')}`,
    );
    assert.equal(pageData(recorded.text).ctx.parentOrigin, 'https://shop.example');
    assert.match(recorded.text, /<html [^>]*class="embed"/);
  });

  test('a missing, wrong or other session’s token is a 403 page in words; an unknown share a 404 page', async () => {
    const a = await newSession(t);
    const b = await newSession(t);
    const cases: [string, number, string][] = [
      [`/session/${a.created.session_id}`, 403, 'This link is incomplete'],
      [`/session/${a.created.session_id}?access=at_wrong0000000000000000000`, 403, 'This link does not work'],
      [`/session/${a.created.session_id}?access=${b.token}`, 403, 'This link does not work'],
      [
        `/session/${a.created.session_id}?access=${a.token}&access=${a.token}`,
        403,
        'This link is incomplete',
      ],
      ['/s/shr_unknown000000000000000000', 404, 'We could not find this share'],
    ];
    for (const [path, status, title] of cases) {
      const res = await get(path);
      assert.equal(res.status, status, path);
      assert.match(res.headers.get('content-type') ?? '', /^text\/html/, path);
      assert.ok(res.text.includes(title), `${path}: ${title}`);
      assert.ok(!/stack|Error:|at .*\.ts/.test(res.text), `${path} shows no internals`);
      assert.ok(!res.text.includes('Dinner for two'), `${path} shows nothing of the session`);
    }
  });

  test('a NUL anywhere in a page’s URL is a 400 page in words, not a failure of ours', async () => {
    const { created, token } = await newSession(t);
    for (const path of [
      '/s/shr_%00',
      '/s/%00',
      `/session/${created.session_id}%00?access=${token}`,
      `/session/${created.session_id}?access=at_%00`,
      `/session/${created.session_id}?access=${token}&embed=1&parent_origin=%00`,
    ]) {
      const res = await get(path, { 'accept-language': 'fr' });
      assert.equal(res.status, 400, path);
      assert.match(res.headers.get('content-type') ?? '', /^text\/html/, path);
      assert.ok(res.text.includes('Ce lien ne fonctionne pas'), `${path}: said in the reader's language`);
      assert.ok(!res.text.includes('Dinner for two'), `${path} shows nothing of the session`);
    }
  });

  test('a broken %-escape in a page’s or the dashboard’s URL is a 400 page, not JSON; the API’s stays JSON', async () => {
    for (const path of [
      '/s/%E0%A4%A',
      '/s/%ff',
      '/session/%zz',
      '/dashboard/%ZZ',
      '/dashboard/sessions/%E0%A4%A',
    ]) {
      // fetch would normalize or refuse these URLs: sent byte for byte.
      const res = await rawHttp(t.baseUrl, { method: 'GET', path, headers: { 'accept-language': 'fr' } });
      assert.equal(res.status, 400, path);
      assert.match(res.headers.get('content-type') ?? '', /^text\/html/, path);
      assert.match(res.headers.get('x-request-id') ?? '', /^req_/, path);
      assert.match(res.headers.get('content-security-policy') ?? '', /frame-ancestors/, path);
      if (path.startsWith('/dashboard')) assert.ok(res.text.includes('broken %-escape'), path);
      else
        assert.ok(res.text.includes('Ce lien ne fonctionne pas'), `${path}: said in the reader's language`);
    }
    for (const path of ['/api/v1/shares/%zz', '/v1/sessions/%zz']) {
      const res = await rawHttp(t.baseUrl, { method: 'GET', path });
      assert.equal(res.status, 400, path);
      assert.equal(res.body.code, 'invalid_request', path);
    }
  });

  test('a page link cut short or run on (/s/, /session) is a 404 page in words, not JSON; the API’s stays JSON', async () => {
    for (const path of ['/s', '/s/', '/session', '/session/', '/s/shr_x/more', '/session/ses_x/y?access=z']) {
      const res = await rawHttp(t.baseUrl, { method: 'GET', path, headers: { 'accept-language': 'fr' } });
      assert.equal(res.status, 404, path);
      assert.match(res.headers.get('content-type') ?? '', /^text\/html/, path);
      assert.match(res.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/, path);
      assert.ok(res.text.includes('Ce lien ne fonctionne pas'), `${path}: said in the reader's language`);
    }
    for (const path of ['/sessions', '/v1/nothing', '/api/v1/nothing']) {
      const res = await rawHttp(t.baseUrl, { method: 'GET', path });
      assert.equal(res.status, 404, path);
      assert.equal(res.body.code, 'route_not_found', path);
    }
  });

  test('the group token opens the group’s page: progress and joining an equal split, no organizer data', async () => {
    const group = await equalGroup(t, ['Ann', 'Bob']);
    const res = await get(`/session/${group.created.session_id}?access=${group.created.group_access_token}`);
    assert.equal(res.status, 200);
    assert.ok(res.text.includes('Join the group'));
    assert.ok(res.text.includes('Bob'));
    assert.ok(!res.text.includes(group.shares[1].shareId), 'no share links for members');
    assert.equal(pageData(res.text).page.role, 'member');
  });

  test('a member’s page shows their share, the fee and what the card is charged, before paying', async () => {
    const group = await equalGroup(t, ['Ann', 'Bob', 'Cy']);
    const bob = group.shares[1];
    const res = await get(`/s/${bob.shareId}`);
    assert.equal(res.status, 200);
    // 100.00 / 3 → 33.33 for Bob; 1 % fee → 0.33; due 33.66.
    assert.ok(res.text.includes('Bob, your share'));
    assert.ok(res.text.includes('$33.33'));
    assert.ok(res.text.includes('$0.33'));
    assert.ok(res.text.includes('Pay $33.66'));
    assert.ok(res.text.includes('$0.00</strong> paid of $100.00'));
  });

  test('amounts follow the browser’s language and the currency’s minor unit', async () => {
    const { url } = await newSession(t);
    const de = await get(pathOf(url), { 'accept-language': 'de-DE,de;q=0.9' });
    assert.ok(de.text.includes('100,00'), 'German decimal comma');
    const yen = await newSession(t, {
      cart: {
        total: 7300,
        currency: 'jpy',
        items: [{ id: 'a', name: 'Tea', quantity: 1, unit_price: 7300 }],
        metadata: { order_ref: 'J-1' },
      },
    });
    const ja = await get(pathOf(yen.url), { 'accept-language': 'en-US' });
    assert.ok(ja.text.includes('¥7,300'), 'yen has no minor unit');
  });

  test('what a merchant or a payer typed is shown as text, never as markup', async () => {
    const cart = sampleCart({
      items: [
        { id: 'a', name: '<img src=x onerror=alert(1)>', quantity: 2, unit_price: 4000 },
        { id: 'b', name: '</script><script>alert(2)</script>', quantity: 1, unit_price: 1000 },
      ],
    });
    const { url } = await newSession(t, { cart });
    const res = await get(pathOf(url));
    assert.ok(res.text.includes('&lt;img src=x onerror=alert(1)&gt;'));
    assert.ok(!res.text.includes('<img src=x'));
    assert.equal((res.text.match(/<\/script>/g) ?? []).length, 2, 'only the page’s own two scripts close');
    assert.equal(pageData(res.text).page.cart.items[1].name, '</script><script>alert(2)</script>');
  });

  test('assets: hashed names, cached for a year, compressed, 304 on a matching ETag; unknown is 404', async () => {
    const { url } = await newSession(t);
    const res = await get(pathOf(url));
    const assets = [...res.text.matchAll(/(?:href|src)="(\/assets\/[^"]+)"/g)].map((m) => m[1] as string);
    assert.equal(assets.length, 2);
    for (const path of assets) {
      const plain = await fetch(t.baseUrl + path, { headers: { 'accept-encoding': 'identity' } });
      const body = Buffer.from(await plain.arrayBuffer());
      assert.equal(plain.status, 200);
      assert.equal(plain.headers.get('cache-control'), 'public, max-age=31536000, immutable');
      const br = await fetch(t.baseUrl + path, { headers: { 'accept-encoding': 'gzip, br' } });
      assert.equal(br.headers.get('content-encoding'), 'br');
      assert.deepEqual(
        Buffer.from(await br.arrayBuffer()),
        body,
        'fetch decodes brotli back to the same bytes',
      );
      const gz = await fetch(t.baseUrl + path, { headers: { 'accept-encoding': 'gzip' } });
      assert.equal(gz.headers.get('content-encoding'), 'gzip');
      const etag = plain.headers.get('etag') as string;
      const again = await fetch(t.baseUrl + path, { headers: { 'if-none-match': etag } });
      assert.equal(again.status, 304);
    }
    assert.equal((await get('/assets/organizer.nope.js')).status, 404);
  });

  test('each page’s critical path (HTML, its stylesheet and script, gzipped) is under 100 kB', async () => {
    const group = await equalGroup(t, ['Ann', 'Bob', 'Cy']);
    const pages = [
      group.created.session_url,
      `${t.baseUrl}/session/${group.created.session_id}?access=${group.created.group_access_token}`,
      `${t.baseUrl}/s/${group.shares[1].shareId}`,
    ];
    for (const url of pages) {
      const html = await (await fetch(url)).text();
      let bytes = gzipSync(html).length;
      for (const m of html.matchAll(/(?:href|src)="(\/assets\/[^"]+)"/g)) {
        const asset = await fetch(t.baseUrl + (m[1] as string), { headers: { 'accept-encoding': 'gzip' } });
        bytes += Number(asset.headers.get('content-length'));
      }
      assert.ok(bytes < 100_000, `${url}: ${bytes} bytes`);
      assert.ok(bytes > 2_000, `${url}: the sum counts something (${bytes} bytes)`);
    }
  });

  test('before the script runs, no form can be sent and no card field has a name to send', async () => {
    const group = await equalGroup(t, ['Ann', 'Bob']);
    for (const url of [group.created.session_url, `${t.baseUrl}/s/${group.shares[1].shareId}`]) {
      const html = await (await fetch(url)).text();
      const submits = [...html.matchAll(/<button type="submit"[^>]*>/g)].map((m) => m[0]);
      assert.ok(submits.length > 0, url);
      for (const button of submits) assert.match(button, / disabled data-needs-script/, `${url}: ${button}`);
      const named = [...html.matchAll(/<input [^>]*name="([^"]+)"/g)].map((m) => m[1]);
      assert.deepEqual(
        [...new Set(named)].filter((n) => n !== 'mode'),
        [],
        `${url}: only the mode radios have names`,
      );
    }
  });
});

describe('hosted pages past the read limit', () => {
  let t: TestApp;
  before(async () => {
    t = await startPagesApp({ env: { RATE_LIMIT_PAY_READ: '2' } });
  });
  after(() => t.close());

  test('a page load past the limit is a 429 page in words, with Retry-After', async () => {
    const group = await equalGroup(t, ['Ann', 'Bob']);
    const url = `${t.baseUrl}/s/${group.shares[1].shareId}`;
    await fetch(url);
    await fetch(url);
    const res = await fetch(url);
    assert.equal(res.status, 429);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    assert.ok(Number(res.headers.get('retry-after')) > 0);
    assert.match(await res.text(), /Too many requests[\s\S]*Wait a minute/);
  });
});

describe('hosted pages, the SDK and the dashboard to a blocked address', () => {
  let t: TestApp;
  before(async () => {
    t = await startPagesApp({ env: { IP_BLOCKLIST: '127.0.0.0/8, ::1/128' } });
  });
  after(() => t.close());

  test('every page answers 403 in words, in the reader’s language; the API 403 ip_blocked', async () => {
    const pages: [string, string][] = [
      ['/s/shr_unknown000000000000000000', 'Zugriff gesperrt'],
      ['/session/gs_unknown?access=at_nope', 'Zugriff gesperrt'],
      ['/sdk/v1/group-checkout.js', 'Zugriff gesperrt'],
      ['/dashboard/sessions', 'Requests from this IP address are blocked.'],
    ];
    for (const [path, words] of pages) {
      const res = await t.request('GET', path, { headers: { 'accept-language': 'de' } });
      assert.equal(res.status, 403, path);
      assert.match(res.headers.get('content-type') ?? '', /^text\/html/, path);
      assert.ok(res.text.includes(words), `${path}: ${words}`);
    }
    const api = await t.request('GET', '/api/v1/session?access=at_nope');
    assert.equal(api.status, 403);
    assert.equal(api.body.code, 'ip_blocked');
  });
});

describe('the Apple Pay domain association file', () => {
  let t: TestApp;
  let bare: TestApp;
  // The file Stripe's dashboard gives is opaque bytes: served exactly as they are.
  const bytes = Buffer.from('7B2270737049…{"apple":"association"}\n\u0000\u00ff', 'utf8');
  before(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'apple-pay-'));
    const file = join(dir, 'apple-developer-merchantid-domain-association');
    writeFileSync(file, bytes);
    [t, bare] = await Promise.all([
      startPagesApp({ env: { APPLE_PAY_DOMAIN_ASSOCIATION: file } }),
      startPagesApp(),
    ]);
  });
  after(async () => {
    await t.close();
    await bare.close();
  });

  const path = '/.well-known/apple-developer-merchantid-domain-association';

  test('served at {pay_url}/.well-known/… byte for byte when APPLE_PAY_DOMAIN_ASSOCIATION names it', async () => {
    const res = await fetch(`${t.baseUrl}${path}`);
    assert.equal(res.status, 200);
    assert.deepEqual(Buffer.from(await res.arrayBuffer()), bytes);
  });

  test('not served without it', async () => {
    const res = await fetch(`${bare.baseUrl}${path}`);
    assert.equal(res.status, 404);
  });
});
