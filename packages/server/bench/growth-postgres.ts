// How cost grows with the tables (docs/benchmarks.md#how-cost-grows-17), on PostgreSQL, part of
// `BENCH_ONLY=growth` when BENCH_POSTGRES_URL or TEST_DATABASE_URL names a server: a database of its own
// (dropped at the end), filled to each size in turn (bench/growth-seed.ts), VACUUM ANALYZE as autovacuum
// would after a load, then, in this process on the service's own code (no socket):
//
// - the session list, GET /v1/sessions (Fastify's inject: key, query, answer), first page and a page
//   halfway down the largest merchant's history by cursor;
// - the expiry sweeper's step (jobs/expiry.ts) with nothing due, and with 25 sessions due (planted);
// - the dispatcher's claim of due deliveries (flows/deliveries.ts claimChains), each claim given back, and
//   the read of the head of the queue with the most pending deliveries (store/deliveries.ts queueHeads);
// - reconcile of the sessions changed since its mark (reconcile --changed), the mark put 100 sessions back,
//   and the whole database (the default) up to BENCH_GROWTH_FULL_RECONCILE sessions (default 100000: it reads
//   every row, a few milliseconds a session).
//
// Each is timed BENCH_GROWTH_RUNS times (20) after 3 unmeasured calls; p50 and p95 in milliseconds of
// wall time. Then every statement each one sends is caught on its way to the driver and run again under
// EXPLAIN (ANALYZE, BUFFERS), in a transaction rolled back, and the plans are written to
// data/bench-growth-plans-<size>.txt with a line each in the report: the plan's nodes and whether it
// reads an index.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import type { Deps } from '../src/deps.ts';
import { claimChains } from '../src/flows/deliveries.ts';
import { reconcile } from '../src/flows/reconcile.ts';
import { expireDueSessions } from '../src/jobs/expiry.ts';
import { createLogger, openRuntime } from '../src/runtime.ts';
import { queueHeads, releaseUrl } from '../src/store/deliveries.ts';
import { seedCopies, seedTemplates } from './growth-seed.ts';
import { columns } from './load.ts';

const ROOT = new URL('../../../', import.meta.url).pathname;

export interface TableSizeOptions {
  sizes: number[];
  runs: number;
  /** Whole-database reconcile only up to this many sessions. */
  fullReconcileUpTo: number;
  /** Sessions a changed-only reconcile run may check. */
  reconcileLimit: number;
}

type TableTarget =
  | 'list-first'
  | 'list-later'
  | 'sweep-idle'
  | 'sweep-25'
  | 'claim'
  | 'queue-head'
  | 'reconcile-changed'
  | 'reconcile-full';

interface Timing {
  p50: number;
  p95: number;
  /** What one call did: pages, sessions closed, deliveries claimed, sessions checked. */
  work: string;
}

interface PlanLine {
  target: TableTarget;
  statement: string;
  /** The plan's node lines, in order, without costs. */
  nodes: string[];
  executionMs: number;
  buffers: string;
  readsIndex: boolean;
  seqScans: string[];
}

export interface TableSizeRow {
  sessions: number;
  rows: Record<string, number>;
  seedSeconds: number;
  timings: Partial<Record<TableTarget, Timing>>;
  plans: PlanLine[];
}

/** Statements sent through `pg` while capturing (the driver under Kysely), with their values. */
let captured: { text: string; values: unknown[] }[] | undefined;

/** Makes `pg` tell `captured` of every statement sent while it is set; answers how to undo it. */
function installCapture(): () => void {
  // biome-ignore lint/suspicious/noExplicitAny: the driver's overloads
  const prototype = pg.Client.prototype as any;
  const query = prototype.query;
  // biome-ignore lint/suspicious/noExplicitAny: the driver's overloads
  prototype.query = function (this: pg.Client, ...args: any[]) {
    if (captured && typeof args[0] === 'string' && !/^\s*(begin|commit|rollback)\b/i.test(args[0]))
      captured.push({ text: args[0], values: Array.isArray(args[1]) ? args[1] : [] });
    return query.apply(this, args);
  };
  return () => {
    prototype.query = query;
  };
}

async function capture(use: () => Promise<unknown>) {
  captured = [];
  try {
    await use();
    return captured;
  } finally {
    captured = undefined;
  }
}

export async function benchTableSizes(adminUrl: string, options: TableSizeOptions): Promise<TableSizeRow[]> {
  const name = `gc_growth_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const tmp = mkdtempSync(join(os.tmpdir(), 'gc-bench-growth-pg-'));
  const sql = new pg.Client({ connectionString: url.toString() });
  const results: TableSizeRow[] = [];
  let deps: Awaited<ReturnType<typeof openRuntime>> | undefined;
  const uninstall = installCapture();
  try {
    await sql.connect();
    const config = loadConfig({
      DATABASE_URL: url.toString(),
      PUBLIC_PAY_URL: 'http://127.0.0.1:4000',
      MAIL_OUTBOX_DIR: join(tmp, 'outbox'),
      RATE_LIMIT_SESSIONS_LIST: '1000000',
    });
    deps = await openRuntime(config, { logger: createLogger('warn') });
    const app = await buildApp(deps);
    const seed = await seedTemplates(deps, app, sql);
    let made = 0;
    for (const size of options.sizes) {
      const started = performance.now();
      process.stderr.write(`bench: growth on PostgreSQL: seeding to ${size} sessions …\n`);
      await seedCopies(sql, seed, made, size, (line) => process.stderr.write(`  ${line}\n`));
      made = size;
      await sql.query('vacuum analyze');
      const seedSeconds = (performance.now() - started) / 1000;
      const counts: Record<string, number> = {};
      for (const table of ['sessions', 'members', 'attempts', 'ledger_lines', 'events', 'deliveries']) {
        const { rows } = await sql.query<{ n: string }>(`select count(*) as n from ${table}`);
        counts[table] = Number(rows[0]?.n);
      }
      const pending = await sql.query<{ n: string; urls: string }>(
        `select count(*) as n, count(distinct url) as urls from deliveries where state = 'pending'`,
      );
      counts.pending_deliveries = Number(pending.rows[0]?.n);
      counts.pending_urls = Number(pending.rows[0]?.urls);
      process.stderr.write(`bench: growth on PostgreSQL: ${size} sessions, measuring …\n`);
      const row = await measureSize(deps, app, sql, seed.merchants[0] as { id: string; secretKey: string }, {
        ...options,
        size,
      });
      results.push({ sessions: size, rows: counts, seedSeconds, ...row });
      const file = join(ROOT, 'data', `bench-growth-plans-${size}.txt`);
      mkdirSync(join(ROOT, 'data'), { recursive: true });
      writeFileSync(file, row.planText);
      process.stderr.write(`bench: growth on PostgreSQL: plans written to ${file}\n`);
    }
    await app.close();
  } finally {
    uninstall();
    await deps?.close();
    await sql.end().catch(() => undefined);
    await admin.query(`drop database if exists ${name} with (force)`).catch(() => undefined);
    await admin.end();
    rmSync(tmp, { recursive: true, force: true });
  }
  return results;
}

async function measureSize(
  deps: Deps,
  app: Awaited<ReturnType<typeof buildApp>>,
  sql: pg.Client,
  merchant: { id: string; secretKey: string },
  options: TableSizeOptions & { size: number },
): Promise<Pick<TableSizeRow, 'timings' | 'plans'> & { planText: string }> {
  const timings: Partial<Record<TableTarget, Timing>> = {};
  const statements: { target: TableTarget; text: string; values: unknown[] }[] = [];
  const headers = { authorization: `Bearer ${merchant.secretKey}` };
  const list = async (query: string) => {
    const res = await app.inject({ method: 'GET', url: `/v1/sessions?limit=25${query}`, headers });
    if (res.statusCode !== 200) throw new Error(`GET /v1/sessions${query}: ${res.statusCode} ${res.body}`);
    return (JSON.parse(res.body) as { data: unknown[] }).data.length;
  };
  // Halfway down the merchant's history.
  const { rows: middle } = await sql.query<{ created_at: string }>(
    `select created_at from sessions where merchant_id = $1 order by created_at desc
     offset (select count(*) / 2 from sessions where merchant_id = $1) limit 1`,
    [merchant.id],
  );
  const cursor = `&cursor=${middle[0]?.created_at}`;

  /** Times `call` (after `before`, untimed) `runs` times after 3 unmeasured calls; keeps its statements. */
  const time = async (
    target: TableTarget,
    call: () => Promise<string>,
    options2: { runs?: number; warm?: number; before?: () => Promise<void> } = {},
  ) => {
    const runs = options2.runs ?? options.runs;
    const warm = options2.warm ?? 3;
    const ms: number[] = [];
    let work = '';
    for (let i = 0; i < warm + runs; i++) {
      await options2.before?.();
      if (i === warm) {
        // One call with its statements caught, not timed.
        for (const s of await capture(call)) statements.push({ target, ...s });
        await options2.before?.();
      }
      const t0 = performance.now();
      work = await call();
      if (i >= warm) ms.push(performance.now() - t0);
    }
    ms.sort((a, b) => a - b);
    const at = (q: number) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))] as number;
    timings[target] = { p50: at(0.5), p95: at(0.95), work };
  };

  await time('list-first', async () => `${await list('')} sessions`);
  await time('list-later', async () => `${await list(cursor)} sessions`);
  // Reconcile of the changed sessions, the CLI's default: its mark put before the 100 sessions that last
  // changed more than 10 minutes ago (those changed since are read as well, as every run reads them).
  const plantMark = async () => {
    const { rows } = await sql.query<{ updated_at: string; id: string }>(
      `select updated_at, id from sessions where updated_at < $1 order by updated_at desc, id desc offset 100 limit 1`,
      [Date.now() - 10 * 60_000],
    );
    const mark = rows[0] as { updated_at: string; id: string };
    await sql.query(
      `insert into reconcile_marks (name, changed_at, session_id, ran_at) values ('sessions', $1, $2, $3)
       on conflict (name) do update set changed_at = excluded.changed_at, session_id = excluded.session_id`,
      [mark.updated_at, mark.id, Date.now()],
    );
  };
  await time(
    'reconcile-changed',
    async () => {
      const report = await reconcile(deps, { changed: { limit: options.reconcileLimit } });
      if (!report.ok)
        throw new Error(`reconcile found mismatches: ${JSON.stringify(report.mismatches.slice(0, 5))}`);
      return `${report.checked.sessions} sessions`;
    },
    { runs: Math.min(options.runs, 10), warm: 1, before: plantMark },
  );
  await time('sweep-idle', async () => `${await expireDueSessions(deps)} closed`);
  const plantDue = async () => {
    await sql.query(
      `update sessions set expires_at = $1 where id in (
         select id from sessions where status = 'pending' and expires_at > $2 order by id limit 25)`,
      [Date.now() - 1000, Date.now() + 60_000],
    );
  };
  await time('sweep-25', async () => `${await expireDueSessions(deps)} closed`, {
    runs: 5,
    warm: 1,
    before: plantDue,
  });
  let claimed: { url: string; holder: string }[] = [];
  await time(
    'claim',
    async () => {
      const chains = await claimChains(deps, {
        targets: deps.config.webhookConcurrency,
        perTarget: 20,
        busy: [],
      });
      claimed = chains;
      return `${chains.length} URLs, ${chains.reduce((n, c) => n + c.deliveries.length, 0)} deliveries`;
    },
    {
      before: async () => {
        for (const c of claimed) await releaseUrl(deps.db.kysely, deps.db.dialect, c.url, c.holder);
        // The head of the queue with the most pending deliveries (the largest merchant's endpoint, whose receiver
        // is behind): what a claim of that URL, or a chain going on, reads.
        const { rows: busiest } = await sql.query<{ url: string; n: string }>(
          `select url, count(*) as n from deliveries where state = 'pending' group by url order by 2 desc limit 1`,
        );
        const backlog = busiest[0];
        if (backlog)
          await time('queue-head', async () => {
            const heads = await queueHeads(deps.db.kysely, [backlog.url], Date.now(), 20);
            return `20 of ${backlog.n} pending (read ${heads.get(backlog.url)?.length ?? 0})`;
          });
        claimed = [];
      },
    },
  );
  for (const c of claimed) await releaseUrl(deps.db.kysely, deps.db.dialect, c.url, c.holder);
  // The head of the queue with the most pending deliveries (the largest merchant's endpoint, whose receiver
  // is behind): what a claim of that URL, or a chain going on, reads.
  const { rows: busiest } = await sql.query<{ url: string; n: string }>(
    `select url, count(*) as n from deliveries where state = 'pending' group by url order by 2 desc limit 1`,
  );
  const backlog = busiest[0];
  if (backlog)
    await time('queue-head', async () => {
      const heads = await queueHeads(deps.db.kysely, [backlog.url], Date.now(), 20);
      return `20 of ${backlog.n} pending (read ${heads.get(backlog.url)?.length ?? 0})`;
    });
  if (options.size <= options.fullReconcileUpTo) {
    await time(
      'reconcile-full',
      async () => {
        const report = await reconcile(deps);
        if (!report.ok)
          throw new Error(`reconcile found mismatches: ${JSON.stringify(report.mismatches.slice(0, 5))}`);
        return `${report.checked.sessions} sessions`;
      },
      { runs: 1, warm: 0 },
    );
  }

  // Every statement caught, once per text, under EXPLAIN (ANALYZE, BUFFERS), rolled back.
  const plans: PlanLine[] = [];
  const text: string[] = [`${options.size} sessions\n`];
  const seen = new Set<string>();
  for (const s of statements) {
    const key = `${s.target}\n${s.text}`;
    if (seen.has(key)) continue;
    seen.add(key);
    // An insert already made would collide with itself: its plan is shown without running it.
    const analyze = /^\s*insert\b/i.test(s.text) ? '' : '(analyze, buffers) ';
    await sql.query('begin');
    let plan: string[];
    try {
      const { rows } = await sql.query<{ 'QUERY PLAN': string }>(`explain ${analyze}${s.text}`, s.values);
      plan = rows.map((r) => r['QUERY PLAN']);
    } finally {
      await sql.query('rollback');
    }
    const nodes = plan
      .filter((l) => /->|^\S/.test(l) && !/^(Planning|Execution)/.test(l.trim()))
      .map((l) =>
        l
          .replace(/\s*\(cost=.*$/, '')
          .replace(/^\s*->\s*/, '')
          .trim(),
      );
    const execution = plan.find((l) => l.startsWith('Execution Time'));
    const buffers = plan.find((l) => l.trim().startsWith('Buffers'))?.trim() ?? '';
    plans.push({
      target: s.target,
      statement: s.text.replace(/\s+/g, ' ').trim(),
      nodes,
      executionMs: Number(/([\d.]+) ms/.exec(execution ?? '')?.[1] ?? Number.NaN),
      buffers,
      readsIndex: nodes.some((n) => /Index (Only )?Scan|Bitmap Index Scan|^Insert|^Result/.test(n)),
      seqScans: nodes.filter((n) => n.startsWith('Seq Scan')),
    });
    text.push(
      `-- ${s.target}\n${s.text.trim()}\n-- values: ${JSON.stringify(s.values).slice(0, 300)}\n${plan.join('\n')}\n`,
    );
  }
  return { timings, plans, planText: text.join('\n') };
}

const LABELS: Record<TableTarget, string> = {
  'list-first': 'GET /v1/sessions, first page',
  'list-later': 'GET /v1/sessions, page by cursor (halfway)',
  'sweep-idle': 'sweeper step, nothing due',
  'sweep-25': 'sweeper step, 25 sessions due',
  claim: "dispatcher's claim of due deliveries",
  'queue-head': 'queue head of the URL with most pending',
  'reconcile-changed': 'reconcile --changed',
  'reconcile-full': 'reconcile (every session)',
};

export function tableSizeReport(rows: readonly TableSizeRow[]): string[] {
  const out = [
    'cost against table size (PostgreSQL, in process; ms of wall time per call; information, no goal)',
    '',
  ];
  const header = ['', ...rows.map((r) => `${r.sessions} sessions: p50 (p95)`), 'work per call (largest)'];
  const table = [header];
  for (const target of Object.keys(LABELS) as TableTarget[]) {
    const cells = rows.map((r) => {
      const t = r.timings[target];
      return t ? `${t.p50.toFixed(2)} (${t.p95.toFixed(2)})` : 'n/a';
    });
    const last = [...rows].reverse().find((r) => r.timings[target]);
    table.push([LABELS[target], ...cells, last?.timings[target]?.work ?? '']);
  }
  out.push(...columns(table));
  out.push('');
  for (const r of rows)
    out.push(
      `${r.sessions} sessions: ${Object.entries(r.rows)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}; seeded in ${r.seedSeconds.toFixed(0)} s`,
    );
  const largest = rows.at(-1);
  if (largest) {
    out.push(
      '',
      `plans at ${largest.sessions} sessions (EXPLAIN (ANALYZE, BUFFERS); all in data/bench-growth-plans-*.txt):`,
    );
    for (const p of largest.plans) {
      out.push(
        `${p.readsIndex ? 'index' : 'NO INDEX'}  ${LABELS[p.target]}: ${p.statement.slice(0, 140)}`,
        `    ${p.nodes.join(' → ')}; ${p.executionMs} ms; ${p.buffers}`,
      );
    }
  }
  return out;
}
