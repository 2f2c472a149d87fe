// What a person waits for and downloads (docs/benchmarks.md#hosted-pages-and-sdk): the SDK's gzipped size,
// each hosted page's critical path (its HTML, stylesheet and script, gzipped), and the time to first
// contentful paint of the organizer's and a member's page in headless Chromium on loopback, against the
// same bytes served by a bare node:http server (the baseline: the same page, none of our work per request).
// Each page carries its one language's catalogue in its data, so the critical path is measured in each of
// the eight languages (the reader's Accept-Language) as well.
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import os from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { signCart } from '@group-checkout/node';
import { type Browser, chromium } from 'playwright-core';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createMerchant } from '../src/flows/merchants.ts';
import { LOCALES, type Locale } from '../src/i18n/locales.ts';
import { createLogger, openRuntime } from '../src/runtime.ts';
import { freePort } from './children.ts';

export interface PagesBenchResult {
  sdkGzipBytes: { js: number; mjs: number };
  criticalPathBytes: Record<string, number>;
  /** The same, per language of the page. */
  criticalPathBytesByLanguage: Record<Locale, Record<string, number>>;
  fcpMs: Record<string, { p50: number; p95: number; baselineP50: number }>;
  runs: number;
}

const SDK_LIMIT = 10_240;
const PAGE_LIMIT = 100_000;
const FCP_TARGET_MS = 300;

export const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
};

export async function benchPages(runs: number): Promise<PagesBenchResult> {
  const require = createRequire(import.meta.url);
  const sdkDir = join(require.resolve('@group-checkout/sdk/package.json'), '..', 'dist');
  const sdkGzipBytes = {
    js: gzipSync(readFileSync(join(sdkDir, 'group-checkout.js'))).length,
    mjs: gzipSync(readFileSync(join(sdkDir, 'group-checkout.mjs'))).length,
  };

  const tmp = mkdtempSync(join(os.tmpdir(), 'gc-bench-pages-'));
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const config = loadConfig({
    DATABASE_URL: `sqlite:${join(tmp, 'pages.db')}`,
    MAIL_OUTBOX_DIR: join(tmp, 'outbox'),
    PUBLIC_BASE_URL: `${origin}/v1`,
    PUBLIC_PAY_URL: origin,
    RATE_LIMIT_PAY_READ: '1000000',
  });
  const deps = await openRuntime(config, { logger: createLogger('warn') });
  const app = await buildApp(deps);
  await app.listen({ port, host: '127.0.0.1' });
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu'],
  });
  const baseline = createServer();
  try {
    const { merchant, publishableKey } = await createMerchant(
      deps.db,
      {
        name: 'Bench Shop',
        environment: 'test',
        headlessApiEnabled: true,
        payoutCurrency: null,
        allowedOrigins: [],
      },
      Date.now(),
    );
    const cart = {
      total: 7300,
      currency: 'usd',
      items: [
        { id: 'sku_a', name: 'Lantern', quantity: 2, unit_price: 1150 },
        { id: 'sku_b', name: 'Tent', quantity: 1, unit_price: 5000 },
      ],
      metadata: { order_ref: 'ORD-BENCH' },
    };
    const created = await (
      await fetch(`${origin}/v1/sessions`, {
        method: 'POST',
        // From a shop's page, as browser sessions are (docs/api.md#origins).
        headers: {
          authorization: `Bearer ${publishableKey}`,
          'content-type': 'application/json',
          origin: 'https://shop.example',
        },
        body: JSON.stringify({ cart, signature: signCart(cart, merchant.signingSecret) }),
      })
    ).json();
    const access = new URL(created.session_url).searchParams.get('access');
    const group = await (
      await fetch(`${origin}/api/v1/session/group?access=${access}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ mode: 'equal', members: [{ name: 'Ann' }, { name: 'Bob' }, { name: 'Cy' }] }),
      })
    ).json();
    const pages: Record<string, string> = {
      organizer: created.session_url,
      member: group.group.members[1].share_url,
    };

    // The baseline serves each page's HTML and assets as fixed bytes, gzipped like ours.
    const fixed = new Map<string, { type: string; body: Buffer }>();
    const criticalPathBytes: Record<string, number> = {};
    for (const [name, url] of Object.entries(pages)) {
      const html = await (await fetch(url)).text();
      fixed.set(`/${name}`, { type: 'text/html; charset=utf-8', body: gzipSync(html) });
      let bytes = gzipSync(html).length;
      for (const m of html.matchAll(/(?:href|src)="(\/assets\/[^"]+)"/g)) {
        const path = m[1] as string;
        const res = await fetch(origin + path, { headers: { 'accept-encoding': 'gzip' } });
        const body = Buffer.from(await res.arrayBuffer());
        bytes += Number(res.headers.get('content-length'));
        fixed.set(path, { type: res.headers.get('content-type') ?? '', body: gzipSync(body) });
      }
      criticalPathBytes[name] = bytes;
    }
    // Per language: the page's HTML (its catalogue inside) and the assets it names, as a browser asking
    // for that language downloads them gzipped.
    const criticalPathBytesByLanguage = {} as PagesBenchResult['criticalPathBytesByLanguage'];
    for (const lang of LOCALES) {
      criticalPathBytesByLanguage[lang] = {};
      for (const [name, url] of Object.entries(pages)) {
        const html = await (await fetch(url, { headers: { 'accept-language': lang } })).text();
        if (!html.includes(`<html lang="${lang}"`)) throw new Error(`${name} page is not in ${lang}`);
        let bytes = gzipSync(html).length;
        for (const m of html.matchAll(/(?:href|src)="(\/assets\/[^"]+)"/g)) {
          const res = await fetch(origin + (m[1] as string), { headers: { 'accept-encoding': 'gzip' } });
          await res.arrayBuffer();
          bytes += Number(res.headers.get('content-length'));
        }
        criticalPathBytesByLanguage[lang][name] = bytes;
      }
    }
    baseline.on('request', (request, response) => {
      const file = fixed.get((request.url ?? '/').split('?')[0] as string);
      if (!file) return response.writeHead(404).end();
      response.writeHead(200, { 'content-type': file.type, 'content-encoding': 'gzip' }).end(file.body);
    });
    const basePort = await freePort();
    await new Promise<void>((resolve) => baseline.listen(basePort, '127.0.0.1', resolve));

    const fcp = (url: string) => firstContentfulPaint(browser, url);
    const fcpMs: PagesBenchResult['fcpMs'] = {};
    for (const [name, url] of Object.entries(pages)) {
      const ours: number[] = [];
      const base: number[] = [];
      await fcp(url); // warm-up: the first page of a browser pays for its start
      for (let i = 0; i < runs; i++) {
        ours.push(await fcp(url));
        base.push(await fcp(`http://127.0.0.1:${basePort}/${name}`));
      }
      fcpMs[name] = {
        p50: percentile(ours, 50),
        p95: percentile(ours, 95),
        baselineP50: percentile(base, 50),
      };
    }
    return { sdkGzipBytes, criticalPathBytes, criticalPathBytesByLanguage, fcpMs, runs };
  } finally {
    baseline.close();
    await browser.close();
    await app.close();
    await deps.close();
  }
}

/**
 * Loads `url` in a fresh browser context (nothing cached; `cookies` set first) and answers its first
 * contentful paint, ms, from the page's own Performance timeline.
 */
export async function firstContentfulPaint(
  browser: Browser,
  url: string,
  cookies: { name: string; value: string; url: string }[] = [],
): Promise<number> {
  const context = await browser.newContext();
  if (cookies.length > 0) await context.addCookies(cookies);
  const page = await context.newPage();
  await page.goto(url, { waitUntil: 'load' });
  const ms = await page.evaluate(
    () =>
      new Promise<number>((resolve) => {
        const entry = performance.getEntriesByName('first-contentful-paint')[0];
        if (entry) return resolve(entry.startTime);
        new PerformanceObserver((list) => resolve(list.getEntries()[0]?.startTime ?? Number.NaN)).observe({
          type: 'paint',
          buffered: true,
        });
      }),
  );
  await context.close();
  return ms;
}

export function pagesReport(r: PagesBenchResult): string[] {
  const ok = (yes: boolean) => (yes ? 'met' : 'MISSED');
  const out = ['hosted pages and SDK'];
  out.push(
    `  SDK gzipped: group-checkout.js ${r.sdkGzipBytes.js} B, .mjs ${r.sdkGzipBytes.mjs} B (goal ≤ ${SDK_LIMIT} B: ${ok(r.sdkGzipBytes.js <= SDK_LIMIT && r.sdkGzipBytes.mjs <= SDK_LIMIT)})`,
  );
  for (const [name, bytes] of Object.entries(r.criticalPathBytes)) {
    out.push(
      `  ${name} page critical path, gzipped: ${bytes} B (goal ≤ ${PAGE_LIMIT} B: ${ok(bytes <= PAGE_LIMIT)})`,
    );
  }
  for (const [lang, sizes] of Object.entries(r.criticalPathBytesByLanguage)) {
    const largest = Math.max(...Object.values(sizes));
    out.push(
      `  ${lang}: ${Object.entries(sizes)
        .map(([name, bytes]) => `${name} ${bytes} B`)
        .join(', ')} (goal ≤ ${PAGE_LIMIT} B: ${ok(largest <= PAGE_LIMIT)})`,
    );
  }
  for (const [name, f] of Object.entries(r.fcpMs)) {
    out.push(
      `  ${name} page first contentful paint over ${r.runs} cold loads: p50 ${f.p50.toFixed(0)} ms, p95 ${f.p95.toFixed(0)} ms; same bytes from a bare server p50 ${f.baselineP50.toFixed(0)} ms, ratio ${(f.p50 / f.baselineP50).toFixed(2)} (goal p50 < ${FCP_TARGET_MS} ms: ${ok(f.p50 < FCP_TARGET_MS)})`,
    );
  }
  return out;
}
