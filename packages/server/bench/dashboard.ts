// The dashboard's server time with many sessions on PostgreSQL (docs/benchmarks.md#merchant-dashboard):
// one merchant with BENCH_DASHBOARD_SESSIONS sessions (100000) spread over the last 30 days in every status,
// then the overview (/dashboard), the sessions list (first page, a status filter, the tenth page by cursor)
// and an order_ref search, each requested BENCH_DASHBOARD_RUNS times (30) through the app in process
// (Fastify's inject: routing, the session cookie, the queries and the rendering; no socket). Reports p50,
// p95 and max in milliseconds. Needs BENCH_DATABASE_URL or TEST_DATABASE_URL (a PostgreSQL server it may
// create a scratch database on, dropped at the end).
//
//   node --conditions=@group-checkout/source --import tsx packages/server/bench/dashboard.ts
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { addDashboardUser, issueSignInLink } from '../src/flows/dashboard-access.ts';
import { createMerchant } from '../src/flows/merchants.ts';
import { createLogger, openRuntime } from '../src/runtime.ts';

const SESSIONS = Number(process.env.BENCH_DASHBOARD_SESSIONS ?? 100_000);
const RUNS = Number(process.env.BENCH_DASHBOARD_RUNS ?? 30);
const BATCH = 2000;
const DAY = 24 * 60 * 60 * 1000;

const adminUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
if (!adminUrl?.startsWith('postgres')) {
  console.error('bench/dashboard.ts needs BENCH_DATABASE_URL or TEST_DATABASE_URL (PostgreSQL)');
  process.exit(2);
}
const name = `gc_bench_dashboard_${randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
await admin.query(`create database ${name}`);
const url = new URL(adminUrl);
url.pathname = `/${name}`;

try {
  const config = loadConfig({ DATABASE_URL: url.toString(), PUBLIC_PAY_URL: 'http://127.0.0.1:4000' });
  const deps = await openRuntime(config, { logger: createLogger('warn') });
  const app = await buildApp(deps);
  const now = Date.now();
  const { merchant, secretKey } = await createMerchant(
    deps.db,
    {
      name: 'Bench Shop',
      environment: 'test',
      headlessApiEnabled: true,
      payoutCurrency: null,
      allowedOrigins: [],
    },
    now,
  );
  // One session made through the API, copied as the template of every other.
  const made = await app.inject({
    method: 'POST',
    url: '/v1/sessions',
    headers: { authorization: `Bearer ${secretKey}`, 'content-type': 'application/json' },
    payload: {
      cart: {
        total: 10_000,
        currency: 'usd',
        items: [{ id: 'sku', name: 'Dinner', quantity: 2, unit_price: 5000 }],
        metadata: { order_ref: 'ORD-template' },
      },
    },
  });
  if (made.statusCode !== 200) throw new Error(`template session: ${made.body}`);
  const template = await deps.db.kysely.selectFrom('sessions').selectAll().executeTakeFirstOrThrow();
  const seeded = performance.now();
  const statuses = ['funded', 'funded', 'pending', 'expired', 'cancelled'] as const;
  for (let start = 0; start < SESSIONS; start += BATCH) {
    const rows = [];
    for (let i = start; i < Math.min(SESSIONS, start + BATCH); i++) {
      const created = now - Math.floor((i / SESSIONS) * 30 * DAY) - 1;
      const status = statuses[i % statuses.length] as (typeof statuses)[number];
      const ended = created + 60_000 + (i % 97) * 60_000;
      rows.push({
        ...template,
        id: `gs_bench${i.toString(36).padStart(8, '0')}`,
        group_id: `grp_bench${i.toString(36)}`,
        group_token: `gat_bench${i.toString(36)}`,
        organizer_token_hash: `hash${i}`,
        order_ref: `ORD-${i}`,
        currency: i % 7 === 0 ? 'eur' : 'usd',
        status,
        created_at: created,
        updated_at: ended,
        funded_at: status === 'funded' ? ended : null,
        closed_at: status === 'expired' || status === 'cancelled' ? ended : null,
      });
    }
    await deps.db.kysely.insertInto('sessions').values(rows).execute();
  }
  await admin.end();
  const seedClient = new pg.Client({ connectionString: url.toString() });
  await seedClient.connect();
  // As autovacuum would after a bulk load: statistics, and the visibility map index-only scans need.
  await seedClient.query('vacuum analyze sessions');
  await seedClient.end();
  console.log(`seeded ${SESSIONS} sessions in ${((performance.now() - seeded) / 1000).toFixed(1)} s`);

  const user = await addDashboardUser(
    deps.db,
    { merchantId: merchant.id, email: 'bench@shop.example', role: 'viewer' },
    now,
  );
  const link = await issueSignInLink(deps.db, config.publicPayUrl, user.id, now);
  const signedIn = await app.inject({
    method: 'POST',
    url: '/dashboard/sign-in',
    headers: { origin: 'http://127.0.0.1:4000', 'content-type': 'application/x-www-form-urlencoded' },
    payload: `token=${new URL(link).searchParams.get('token')}`,
  });
  const cookie = String(signedIn.headers['set-cookie']).split(';')[0] as string;

  // The tenth page's cursor, found by following "Older sessions".
  let tenth = '/dashboard/sessions';
  for (let i = 0; i < 9; i++) {
    const page = await app.inject({ method: 'GET', url: tenth, headers: { cookie } });
    const next = /href="([^"]+)" rel="next"/.exec(page.body)?.[1]?.replace(/&amp;/g, '&');
    if (!next) throw new Error('no next page');
    tenth = next;
  }

  const targets: [string, string][] = [
    ['overview', '/dashboard'],
    ['sessions, first page', '/dashboard/sessions'],
    ['sessions, status=expired', '/dashboard/sessions?status=expired'],
    ['sessions, tenth page', tenth],
    ['sessions, search order_ref', `/dashboard/sessions?q=ORD-${Math.floor(SESSIONS / 2)}`],
  ];
  const report: Record<string, { p50: number; p95: number; max: number }> = {};
  for (const [label, path] of targets) {
    const times: number[] = [];
    for (let i = 0; i < RUNS + 3; i++) {
      const t0 = performance.now();
      const res = await app.inject({ method: 'GET', url: path, headers: { cookie } });
      const ms = performance.now() - t0;
      if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode}`);
      if (i >= 3) times.push(ms); // the first three warm the caches and the JIT
    }
    times.sort((a, b) => a - b);
    const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] as number;
    report[label] = {
      p50: +at(0.5).toFixed(1),
      p95: +at(0.95).toFixed(1),
      max: +(times.at(-1) as number).toFixed(1),
    };
  }
  console.log(JSON.stringify({ sessions: SESSIONS, runs: RUNS, ms: report }, null, 2));
  await app.close();
  await deps.close();
} finally {
  const cleanup = new pg.Client({ connectionString: adminUrl });
  await cleanup.connect();
  await cleanup.query(`drop database if exists ${name} with (force)`);
  await cleanup.end();
}
