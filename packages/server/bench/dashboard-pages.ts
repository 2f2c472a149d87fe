// What a person signed in to the dashboard waits for and downloads (docs/benchmarks.md#merchant-dashboard-in-chromium):
// each page's critical path (its HTML and its one stylesheet, gzipped; the pages have no script) and its
// first contentful paint in headless Chromium on loopback, signed in by the session cookie, against the
// same bytes served by a bare node:http server (the baseline: none of our work per request). The data is
// made through the API first: 30 sessions (one funded by paying its shares, so its page has payments, a
// ledger and a timeline), which also fill the developers page's request log.
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import os from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { addDashboardUser, issueSignInLink } from '../src/flows/dashboard-access.ts';
import { createMerchant } from '../src/flows/merchants.ts';
import { createLogger, openRuntime } from '../src/runtime.ts';
import { freePort } from './children.ts';
import { firstContentfulPaint, percentile } from './pages.ts';

export interface DashboardPagesBenchResult {
  criticalPathBytes: Record<string, number>;
  fcpMs: Record<string, { p50: number; p95: number; baselineP50: number }>;
  runs: number;
}

const PAGE_LIMIT = 100_000;
const FCP_TARGET_MS = 300;

export async function benchDashboardPages(runs: number): Promise<DashboardPagesBenchResult> {
  const tmp = mkdtempSync(join(os.tmpdir(), 'gc-bench-dashboard-'));
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const config = loadConfig({
    DATABASE_URL: `sqlite:${join(tmp, 'dashboard.db')}`,
    MAIL_OUTBOX_DIR: join(tmp, 'outbox'),
    PUBLIC_BASE_URL: `${origin}/v1`,
    PUBLIC_PAY_URL: origin,
    RATE_LIMIT_PAY_READ: '1000000',
    RATE_LIMIT_PAY_WRITE: '1000000',
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
    const { merchant, secretKey } = await createMerchant(
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
    const api = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${origin}${path}`, {
        method,
        headers: { authorization: `Bearer ${secretKey}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
      return res.json();
    };
    let funded = '';
    for (let i = 0; i < 30; i++) {
      const created = await api('POST', '/v1/sessions', {
        cart: {
          total: 7300,
          currency: 'usd',
          items: [
            { id: 'sku_a', name: 'Lantern', quantity: 2, unit_price: 1150 },
            { id: 'sku_b', name: 'Tent', quantity: 1, unit_price: 5000 },
          ],
          metadata: { order_ref: `ORD-BENCH-${i}` },
        },
      });
      if (i > 0) continue;
      funded = created.session_id;
      const access = new URL(created.session_url).searchParams.get('access');
      const group = await (
        await fetch(`${origin}/api/v1/session/group?access=${access}`, {
          method: 'PUT',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            mode: 'equal',
            members: [{ name: 'Ann' }, { name: 'Bob' }, { name: 'Cy' }],
          }),
        })
      ).json();
      for (const member of group.group.members) {
        const paid = await fetch(`${origin}/api/v1/shares/${member.share_id}/pay`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            card: { number: '4242424242424242', exp_month: 12, exp_year: 2034, cvc: '123' },
          }),
        });
        if (!paid.ok) throw new Error(`pay: ${paid.status} ${await paid.text()}`);
      }
    }

    // Signed in as a viewer, as a browser would be: the link's form, then the cookie it set.
    const user = await addDashboardUser(
      deps.db,
      { merchantId: merchant.id, email: 'bench@shop.example', role: 'viewer' },
      Date.now(),
    );
    const link = await issueSignInLink(deps.db, config.publicPayUrl, user.id, Date.now());
    const signed = await fetch(`${origin}/dashboard/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${new URL(link).searchParams.get('token')}`,
    });
    const [name, value] = (signed.headers.get('set-cookie') ?? '').split(';')[0]?.split('=') ?? [];
    if (!name || !value) throw new Error(`sign-in answered ${signed.status} without a cookie`);
    const cookie = `${name}=${value}`;

    const pages: Record<string, string> = {
      overview: '/dashboard',
      sessions: '/dashboard/sessions',
      session: `/dashboard/sessions/${funded}`,
      webhooks: '/dashboard/webhooks',
      developers: '/dashboard/developers',
      settings: '/dashboard/settings',
    };

    // The baseline serves each page's HTML and its stylesheet as fixed bytes, gzipped like ours.
    const fixed = new Map<string, { type: string; body: Buffer }>();
    const criticalPathBytes: Record<string, number> = {};
    for (const [page, path] of Object.entries(pages)) {
      const res = await fetch(`${origin}${path}`, { headers: { cookie } });
      const html = await res.text();
      if (res.status !== 200) throw new Error(`${path} answered ${res.status}`);
      // The funded session's page is measured whole: its payments, ledger and timeline.
      if (page === 'session' && !(html.includes('id="ledger-h"') && html.includes('group.funded')))
        throw new Error('the funded session page has no ledger or timeline');
      fixed.set(`/${page}`, { type: 'text/html; charset=utf-8', body: gzipSync(html) });
      let bytes = gzipSync(html).length;
      for (const m of html.matchAll(/(?:href|src)="(\/dashboard\/assets\/[^"]+)"/g)) {
        const asset = m[1] as string;
        const got = await fetch(origin + asset, { headers: { 'accept-encoding': 'gzip' } });
        const body = Buffer.from(await got.arrayBuffer());
        bytes += Number(got.headers.get('content-length'));
        fixed.set(asset, { type: got.headers.get('content-type') ?? '', body: gzipSync(body) });
      }
      criticalPathBytes[page] = bytes;
    }
    baseline.on('request', (request, response) => {
      const file = fixed.get((request.url ?? '/').split('?')[0] as string);
      if (!file) return response.writeHead(404).end();
      response.writeHead(200, { 'content-type': file.type, 'content-encoding': 'gzip' }).end(file.body);
    });
    const basePort = await freePort();
    await new Promise<void>((resolve) => baseline.listen(basePort, '127.0.0.1', resolve));

    const cookies = [{ name, value, url: origin }];
    const fcpMs: DashboardPagesBenchResult['fcpMs'] = {};
    for (const [page, path] of Object.entries(pages)) {
      const ours: number[] = [];
      const base: number[] = [];
      await firstContentfulPaint(browser, `${origin}${path}`, cookies); // warm-up
      for (let i = 0; i < runs; i++) {
        ours.push(await firstContentfulPaint(browser, `${origin}${path}`, cookies));
        base.push(await firstContentfulPaint(browser, `http://127.0.0.1:${basePort}/${page}`));
      }
      fcpMs[page] = {
        p50: percentile(ours, 50),
        p95: percentile(ours, 95),
        baselineP50: percentile(base, 50),
      };
    }
    return { criticalPathBytes, fcpMs, runs };
  } finally {
    baseline.close();
    await browser.close();
    await app.close();
    await deps.close();
  }
}

export function dashboardPagesReport(r: DashboardPagesBenchResult): string[] {
  const verdict = (yes: boolean) => (yes ? 'PASS' : 'FAIL');
  const out = ['merchant dashboard pages (signed in, Chromium on loopback)'];
  for (const [page, bytes] of Object.entries(r.criticalPathBytes)) {
    const f = r.fcpMs[page];
    out.push(
      `  ${page.padEnd(10)} critical path ${(bytes / 1000).toFixed(1)} kB gzipped (≤ ${PAGE_LIMIT / 1000} kB: ${verdict(bytes <= PAGE_LIMIT)})` +
        (f
          ? `; first contentful paint over ${r.runs} cold loads p50 ${f.p50.toFixed(0)} ms, p95 ${f.p95.toFixed(0)} ms, bare server p50 ${f.baselineP50.toFixed(0)} ms (p50 < ${FCP_TARGET_MS} ms: ${verdict(f.p50 < FCP_TARGET_MS)})`
          : ''),
    );
  }
  const failed =
    Object.values(r.criticalPathBytes).filter((b) => b > PAGE_LIMIT).length +
    Object.values(r.fcpMs).filter((f) => !(f.p50 < FCP_TARGET_MS)).length;
  out.push(failed === 0 ? '  all dashboard page targets met' : `  ${failed} dashboard page target(s) MISSED`);
  return out;
}
