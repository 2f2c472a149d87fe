// `npm run bench`: throughput of Group Checkout routes as ratios against bare-Fastify baselines measured
// in the same run, on the same machine. Each server runs in its own child process, pinned to loopback;
// autocannon runs here. Benchmarks report, never assert: the exit code is 0 even when a target is missed.
//
// Environment: BENCH_SECONDS (10) per measurement, BENCH_WARMUP_SECONDS (2) unmeasured load before each,
// BENCH_ROUNDS (1): every selected target measured that many times in turn, the rounds summed,
// BENCH_CONNECTIONS (50), BENCH_LOG_LEVEL (warn) for the service, BENCH_CPU_PROF=1 to write a V8 CPU
// profile of the service to data/bench-prof/ (summarize it with profile-summary.ts), BENCH_ONLY=name,…
// to run some of the measurements (hello, hello-same, merchants-me, reference, reference-full, sessions-create,
// session-get, reference-pay, share-pay, mixed, mixed-reference, webhooks, postgres, pages), BENCH_POSTGRES_URL also
// for the hot paths on PostgreSQL against their same-statement reference, one and two processes each
// (bench/postgres.ts and reference-pg.ts, BENCH_ONLY=postgres; BENCH_PG_SECONDS (8) per measurement there,
// BENCH_PG_PAY_RATE (600) sizes its shares, BENCH_PG_TARGETS=create,get,pay; with BENCH_CPU_PROF=1 a
// profile of every process in data/bench-prof/<process>/), BENCH_MIXED_WRITES (100): creates and
// as many pays a second beside the `mixed` GETs (bench/mixed.ts; 0 for none), BENCH_MIXED_KINDS (create,pay):
// which of the two are sent, BENCH_MIXED_POLL_RATE (0: uncapped): the most GETs a second, so that with a
// low cap the server's CPU is the writes', over BENCH_MIXED_SESSIONS (1000), BENCH_PAY_RATE (3000): the most req/s a pay
// target is expected to reach, which sizes the shares made for it beforehand, BENCH_WEBHOOK_EVENTS (3000):
// events delivered by the webhook benchmark (bench/webhooks.ts), BENCH_POSTGRES_URL (or TEST_DATABASE_URL):
// a PostgreSQL server for the webhook benchmark's multi-process part (bench/webhooks-postgres.ts,
// BENCH_ONLY=webhooks-postgres; skipped without one), BENCH_PAGE_RUNS (20): cold page loads per page in the
// hosted pages' benchmark (bench/pages.ts) and the dashboard pages' (bench/dashboard-pages.ts,
// BENCH_ONLY=dashboard-pages), which run last.
//
// Two benchmarks run only when BENCH_ONLY names them, being too long for the default run (docs/benchmarks.md,
// "How cost grows (#17)"): `growth` (bench/growth.ts: cost against group size, BENCH_GROWTH_GROUPS (2,10,50),
// on SQLite; against table size, BENCH_GROWTH_SESSIONS (10000,100000,1000000), on PostgreSQL with EXPLAIN of
// each statement, BENCH_GROWTH_RUNS (20), BENCH_GROWTH_FULL_RECONCILE (100000): the largest size a whole
// reconcile runs at, BENCH_GROWTH_RECONCILE_LIMIT (10000); about 30 minutes) and `soak` (bench/soak.ts: the
// mixed load for BENCH_SOAK_SECONDS (600, the documented run) with the service's RSS sampled every
// BENCH_SOAK_SAMPLE_SECONDS (10)).
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon, { type RequestParams, type Result } from 'autocannon';
import { DEFAULT_RATE_LIMITS } from '../src/config.ts';
import { sessionBody } from './cart.ts';
import {
  type Child,
  cpuSeconds,
  freePort,
  installCleanup,
  runCommand,
  startChild,
  stopChildren,
  waitReady,
} from './children.ts';
import {
  benchDashboardPages,
  type DashboardPagesBenchResult,
  dashboardPagesReport,
} from './dashboard-pages.ts';
import { benchGroupSizes, type GroupSizeRow, groupSizeReport } from './growth.ts';
import { benchTableSizes, type TableSizeRow, tableSizeReport } from './growth-postgres.ts';
import {
  SessionCycle,
  seedPolled,
  startWrites,
  WRITE_KINDS,
  type WriteKind,
  type WritesDone,
} from './mixed.ts';
import { benchPages, type PagesBenchResult, pagesReport } from './pages.ts';
import {
  benchPostgresHotPaths,
  POSTGRES_TARGETS,
  type PostgresHotResult,
  postgresHotReport,
  type TargetName,
} from './postgres.ts';
import { GROUP_SIZE, PAY_BODY, SharePool, seedReference, seedService } from './shares.ts';
import { benchSoak, type SoakResult, soakReport } from './soak.ts';
import { benchWebhooks, type WebhookBenchResult, webhookReport } from './webhooks.ts';
import {
  benchWebhooksPostgres,
  type PostgresWebhookBenchResult,
  postgresWebhookReport,
} from './webhooks-postgres.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const BENCH = fileURLToPath(new URL('./', import.meta.url));
const RESULTS_FILE = join(ROOT, 'data', 'bench-latest.json');

function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0)
    throw new Error(`${name} must be a non-negative number, got "${raw}"`);
  return value;
}

const SECONDS = envNumber('BENCH_SECONDS', 10);
const WARMUP_SECONDS = envNumber('BENCH_WARMUP_SECONDS', 2);
/**
 * Rounds of every selected target, taken in turn (BENCH_ROUNDS, default 1): on a machine whose load
 * drifts, a service and its baseline measured in alternating rounds see the same conditions, and their
 * sums make the ratio. Each round is a warm-up and BENCH_SECONDS measured.
 */
const ROUNDS = Math.max(1, Math.floor(envNumber('BENCH_ROUNDS', 1)));
const CONNECTIONS = envNumber('BENCH_CONNECTIONS', 50);
const ONLY = (process.env.BENCH_ONLY ?? '').split(',').filter(Boolean);
const PAY_RATE = envNumber('BENCH_PAY_RATE', 3000);
const WEBHOOK_EVENTS = envNumber('BENCH_WEBHOOK_EVENTS', 3000);
const PAGE_RUNS = envNumber('BENCH_PAGE_RUNS', 20);
const MIXED_WRITES = envNumber('BENCH_MIXED_WRITES', 100);
const MIXED_SESSIONS = envNumber('BENCH_MIXED_SESSIONS', 1000);
const MIXED_KINDS = (process.env.BENCH_MIXED_KINDS ?? WRITE_KINDS.join(','))
  .split(',')
  .filter((k): k is WriteKind => (WRITE_KINDS as readonly string[]).includes(k));
/** Caps the `mixed` polls a second (0: as fast as the connections go); a low cap leaves the writes' CPU. */
const MIXED_POLL_RATE = envNumber('BENCH_MIXED_POLL_RATE', 0);
const MIXED_WRITES_LABEL =
  (MIXED_KINDS.length === WRITE_KINDS.length
    ? `${MIXED_WRITES}+${MIXED_WRITES} writes/s`
    : `${MIXED_WRITES} ${MIXED_KINDS.map((k) => `${k}s`).join('')}/s`) +
  (MIXED_POLL_RATE > 0 ? `, polls capped at ${MIXED_POLL_RATE}/s` : '');
/** The PostgreSQL mode measures 12 loads (2 rounds × 3 targets × 2 sides): shorter ones keep it near 3 minutes. */
const PG_SECONDS = envNumber('BENCH_PG_SECONDS', 8);
const PG_PAY_RATE = envNumber('BENCH_PG_PAY_RATE', 600);
const PG_TARGETS = (process.env.BENCH_PG_TARGETS ?? POSTGRES_TARGETS.join(','))
  .split(',')
  .filter((t): t is TargetName => (POSTGRES_TARGETS as readonly string[]).includes(t));
const selected = (name: string) => ONLY.length === 0 || ONLY.includes(name);
/** Targets too long for the default run: only when BENCH_ONLY names them. */
const named = (name: string) => ONLY.includes(name);

function envList(name: string, fallback: string): number[] {
  const raw = process.env[name] ?? fallback;
  const values = raw
    .split(',')
    .filter((v) => v.trim() !== '')
    .map(Number);
  if (values.some((v) => !Number.isInteger(v) || v < 0))
    throw new Error(`${name} must be a comma-separated list of whole numbers, got "${raw}"`);
  return values;
}

/** Variables of the service that would change what is measured; the children never inherit them. */
const SERVICE_VARIABLES = [
  'DATABASE_URL',
  'REDIS_URL',
  'SMTP_URL',
  'STRIPE_SECRET_KEY',
  'IP_BLOCKLIST',
  'TRUST_PROXY',
  'PUBLIC_BASE_URL',
  'PUBLIC_PAY_URL',
  'SERVICE_ENV',
  'HOST',
  'PORT',
  'LOG_LEVEL',
  'SWEEP_INTERVAL_MS',
  'MAIL_OUTBOX_DIR',
  'REDIS_KEY_PREFIX',
  'SECRETS_KEY',
  'SECRETS_KEY_PREVIOUS',
];

interface Target {
  name: string;
  label: string;
  server: Child;
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** A path per request (each pays another share), instead of `path` every time. */
  pool?: { path(): string; used?: number; size?: number };
  /** Load run beside the measurement (from the warm-up to its end); answers what it did. */
  beside?: () => { stop: () => Promise<WritesDone> };
  /** The most requests a second the load sends, all connections together (unset: as fast as they go). */
  rate?: number;
}

interface Measurement {
  name: string;
  label: string;
  method: string;
  path: string;
  requestsPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  /** Share of one core the server process used during the measurement (1 = one core saturated). */
  serverCpu: number | null;
  /** Share of one core this process (autocannon) used: near 1, the client may be the limit. */
  clientCpu: number;
  /** Server CPU time per answered request, microseconds. */
  serverCpuMicrosPerRequest: number | null;
  /** Pay targets: shares taken (check, warm-up, measurement) and shares made for the target. */
  shares?: { used: number; made: number };
  /** The mixed target: the writes sent beside it, warm-up included. */
  writes?: WritesDone;
  /** What the figures above are made of, so that rounds add up. */
  totals: { seconds: number; answered: number; serverSeconds: number | null; clientSeconds: number };
}

/** One target's rounds as one measurement: sums for the rates and costs, the worst p99, the median p50. */
function merged(rounds: Measurement[]): Measurement {
  const [first] = rounds;
  if (!first) throw new Error('no round was measured');
  if (rounds.length === 1) return first;
  const sum = (of: (m: Measurement) => number) => rounds.reduce((total, m) => total + of(m), 0);
  const seconds = sum((m) => m.totals.seconds);
  const answered = sum((m) => m.totals.answered);
  const serverSeconds = rounds.some((m) => m.totals.serverSeconds === null)
    ? null
    : sum((m) => m.totals.serverSeconds ?? 0);
  const clientSeconds = sum((m) => m.totals.clientSeconds);
  const statusCodes: Record<string, number> = {};
  for (const m of rounds)
    for (const [code, count] of Object.entries(m.statusCodes))
      statusCodes[code] = (statusCodes[code] ?? 0) + count;
  const p50s = rounds.map((m) => m.latencyP50Ms).sort((a, b) => a - b);
  const writes = rounds.every((m) => m.writes)
    ? {
        creates: sum((m) => m.writes?.creates ?? 0),
        pays: sum((m) => m.writes?.pays ?? 0),
        failed: sum((m) => m.writes?.failed ?? 0),
        skipped: sum((m) => m.writes?.skipped ?? 0),
      }
    : undefined;
  const last = rounds[rounds.length - 1] as Measurement;
  return {
    ...first,
    requestsPerSecond: sum((m) => m.requests) / seconds,
    latencyP50Ms: p50s[Math.floor(p50s.length / 2)] as number,
    latencyP99Ms: Math.max(...rounds.map((m) => m.latencyP99Ms)),
    requests: sum((m) => m.requests),
    non2xx: sum((m) => m.non2xx),
    errors: sum((m) => m.errors),
    timeouts: sum((m) => m.timeouts),
    statusCodes,
    serverCpu: serverSeconds === null ? null : serverSeconds / seconds,
    clientCpu: clientSeconds / seconds,
    serverCpuMicrosPerRequest:
      serverSeconds === null || answered === 0 ? null : (serverSeconds * 1e6) / answered,
    ...(last.shares && { shares: last.shares }),
    ...(writes && { writes }),
    totals: { seconds, answered, serverSeconds, clientSeconds },
  };
}

interface Ratio {
  name: string;
  numerator: string;
  denominator: string;
  /** Goal from the issue; null for ratios printed for information. */
  target: number | null;
}

const RATIOS: Ratio[] = [
  { name: 'merchants/me ÷ hello', numerator: 'merchants-me', denominator: 'hello', target: 0.5 },
  {
    name: 'POST sessions ÷ same writes',
    numerator: 'sessions-create',
    denominator: 'reference-full',
    target: 0.8,
  },
  { name: 'GET session ÷ hello', numerator: 'session-get', denominator: 'hello', target: 0.45 },
  // Information, no goal: against the same bytes and the same key hash from memory (docs/benchmarks.md).
  { name: 'GET session ÷ same bytes', numerator: 'session-get', denominator: 'hello-same', target: null },
  { name: 'pay share ÷ same writes', numerator: 'share-pay', denominator: 'reference-pay', target: 0.8 },
  { name: 'GET under writes ÷ hello', numerator: 'mixed', denominator: 'hello', target: 0.4 },
  // Information, no goal: against the same bytes from memory with the same writes beside (docs/benchmarks.md).
  { name: 'GET under writes ÷ same work', numerator: 'mixed', denominator: 'mixed-reference', target: null },
  // Information, no goal: against a bare server writing one row, the old goal's baseline (docs/benchmarks.md).
  {
    name: 'POST sessions ÷ one-row ref.',
    numerator: 'sessions-create',
    denominator: 'reference',
    target: null,
  },
];

interface RatioResult extends Ratio {
  /** Throughput ratio, the one the target applies to. */
  value: number | null;
  pass: boolean | null;
  /** The same comparison by server CPU per request: steadier when the client or a neighbour is the limit. */
  cpuValue: number | null;
  /** A side answered something else than 2xx: its req/s are not successes, so there is no ratio. */
  invalid: boolean;
}

interface Environment {
  date: string;
  node: string;
  cpu: string;
  cores: number;
  platform: string;
  /** One-minute load average when the run began: high means other work shared the CPUs. */
  loadAverage: number;
  seconds: number;
  warmupSeconds: number;
  connections: number;
}

interface Merchant {
  merchant_id: string;
  publishable_key: string;
  secret_key: string;
  signing_secret: string;
}

async function main(): Promise<void> {
  const loadAverage = os.loadavg()[0] ?? 0;
  const tmp = mkdtempSync(join(os.tmpdir(), 'gc-bench-'));
  const cleanupTmp = () => rmSync(tmp, { recursive: true, force: true });
  process.once('exit', cleanupTmp);

  const baseEnv: NodeJS.ProcessEnv = { ...process.env };
  for (const name of SERVICE_VARIABLES) delete baseEnv[name];
  for (const name of Object.keys(baseEnv)) if (name.startsWith('RATE_LIMIT_')) delete baseEnv[name];

  const servicePort = await freePort();
  const serviceEnv: NodeJS.ProcessEnv = {
    ...baseEnv,
    DATABASE_URL: `sqlite:${join(tmp, 'bench.db')}`,
    SERVICE_ENV: 'sandbox',
    HOST: '127.0.0.1',
    PORT: String(servicePort),
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL || 'warn',
    MAIL_OUTBOX_DIR: join(tmp, 'outbox'),
  };
  for (const name of Object.keys(DEFAULT_RATE_LIMITS)) serviceEnv[`RATE_LIMIT_${name}`] = '1000000';

  // The merchant is made before the server starts, by the CLI, on the same fresh database. Its JSON is
  // the last line of stdout (a log line may come before it at LOG_LEVEL=info).
  const cli = 'packages/server/bin/group-checkout.js merchant create --name Bench --headless --json';
  const created = await runCommand(cli.split(' '), { env: { ...serviceEnv, LOG_LEVEL: 'warn' }, cwd: ROOT });
  const merchant = JSON.parse(created.trim().split('\n').at(-1) ?? '') as Merchant;

  const profileDir = join(ROOT, 'data', 'bench-prof');
  const profiling = process.env.BENCH_CPU_PROF === '1';
  if (profiling) mkdirSync(profileDir, { recursive: true });
  const helloPort = await freePort();
  const referencePort = await freePort();
  const referenceFullPort = await freePort();
  const children: [Child, string][] = [
    [
      startChild('service', 'packages/server/src/main.ts', {
        port: servicePort,
        env: serviceEnv,
        cwd: ROOT,
        nodeArgs: profiling ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
      }),
      '/healthz',
    ],
    [startChild('hello', join(BENCH, 'hello-server.ts'), { port: helloPort, env: baseEnv, cwd: ROOT }), '/'],
    [
      startChild('reference', join(BENCH, 'reference-server.ts'), {
        port: referencePort,
        env: {
          ...baseEnv,
          BENCH_REFERENCE_DB: join(tmp, 'reference.db'),
          BENCH_SIGNING_SECRET: merchant.signing_secret,
        },
        cwd: ROOT,
      }),
      '/',
    ],
    [
      startChild('reference-full', join(BENCH, 'reference-server.ts'), {
        port: referenceFullPort,
        env: {
          ...baseEnv,
          BENCH_REFERENCE_DB: join(tmp, 'reference-full.db'),
          BENCH_REFERENCE_MODE: 'full',
          BENCH_SIGNING_SECRET: merchant.signing_secret,
        },
        cwd: ROOT,
      }),
      '/',
    ],
  ];
  await Promise.all(
    children.map(([child, path]) => waitReady(child, `http://127.0.0.1:${child.port}${path}`)),
  );

  const body = sessionBody(merchant.signing_secret);
  const createHeaders = {
    authorization: `Bearer ${merchant.publishable_key}`,
    'content-type': 'application/json',
    origin: 'https://shop.example',
  };
  const secretHeaders = { authorization: `Bearer ${merchant.secret_key}` };
  // The session GET /v1/sessions/{id} reads, created before any load.
  const first = await check(`http://127.0.0.1:${servicePort}/v1/sessions`, 'POST', createHeaders, body);
  const sessionId = (JSON.parse(first) as { session_id: string }).session_id;

  const [service, hello, reference, referenceFull] = children.map(([child]) => child) as [
    Child,
    Child,
    Child,
    Child,
  ];
  // The session's answer, copied to the same-bytes baselines: body and headers as the service sends them.
  if (selected('hello-same') || selected('mixed-reference')) {
    const answer = await fetch(`http://127.0.0.1:${servicePort}/v1/sessions/${sessionId}`, {
      headers: secretHeaders,
    });
    const copied: Record<string, string> = {};
    const perConnection = new Set(['date', 'content-length', 'connection', 'keep-alive', 'content-type']);
    answer.headers.forEach((value, name) => {
      if (!perConnection.has(name)) copied[name] = value;
    });
    const same = JSON.stringify({ headers: copied, body: await answer.json() });
    for (const server of [hello, referenceFull])
      await check(
        `http://127.0.0.1:${server.port}/bench/same-bytes`,
        'PUT',
        { 'content-type': 'application/json' },
        same,
      );
  }

  // Pending shares for the pay targets, as many on both servers: enough for the check, the warm-up and
  // the measurement at PAY_RATE, with a margin.
  const groups = Math.ceil((PAY_RATE * ROUNDS * (SECONDS + WARMUP_SECONDS + 1) * 1.2) / GROUP_SIZE);
  const payTargets = ['share-pay', 'reference-pay'].filter(selected);
  let servicePool = new SharePool([]);
  let referencePool = new SharePool([]);
  if (payTargets.length > 0) {
    process.stderr.write(`bench: making ${groups} groups of ${GROUP_SIZE} shares on each server …
`);
    [servicePool, referencePool] = await Promise.all([
      seedService(`http://127.0.0.1:${servicePort}`, createHeaders, merchant.signing_secret, groups),
      seedReference(`http://127.0.0.1:${referenceFullPort}`, groups),
    ]).then(([a, b]) => [new SharePool(a), new SharePool(b)]);
  }
  // The mixed target: sessions to poll, and shares for the pays written beside the polling.
  let polled = new SessionCycle([sessionId]);
  let mixedPays = new SharePool([]);
  let mixedReferencePays = new SharePool([]);
  // Shares for the pays written beside the mixed GETs, on each side: every round's warm-up and measurement.
  const payGroups = Math.ceil((MIXED_WRITES * ROUNDS * (SECONDS + WARMUP_SECONDS + 1) * 1.2) / GROUP_SIZE);
  if (selected('mixed-reference')) {
    mixedReferencePays = new SharePool(
      await seedReference(`http://127.0.0.1:${referenceFull.port}`, payGroups),
    );
  }
  if (selected('mixed')) {
    process.stderr.write(
      `bench: making ${MIXED_SESSIONS} sessions to poll and ${payGroups} groups to pay …\n`,
    );
    const base = `http://127.0.0.1:${servicePort}`;
    polled = new SessionCycle(await seedPolled(base, createHeaders, body, MIXED_SESSIONS));
    mixedPays = new SharePool(await seedService(base, createHeaders, merchant.signing_secret, payGroups));
  }
  const targets: Target[] = [
    { name: 'hello', label: 'hello (bare Fastify)', server: hello, method: 'GET', path: '/', headers: {} },
    {
      name: 'hello-same',
      label: 'same bytes, key hashed (bare)',
      server: hello,
      method: 'GET',
      path: '/same-bytes',
      headers: secretHeaders,
    },
    {
      name: 'merchants-me',
      label: 'GET /v1/merchants/me',
      server: service,
      method: 'GET',
      path: '/v1/merchants/me',
      headers: secretHeaders,
    },
    {
      name: 'reference',
      label: 'reference POST (bare)',
      server: reference,
      method: 'POST',
      path: '/v1/sessions',
      headers: { 'content-type': 'application/json' },
      body,
    },
    {
      name: 'reference-full',
      label: 'same-writes reference (bare)',
      server: referenceFull,
      method: 'POST',
      path: '/v1/sessions',
      headers: { 'content-type': 'application/json' },
      body,
    },
    {
      name: 'sessions-create',
      label: 'POST /v1/sessions',
      server: service,
      method: 'POST',
      path: '/v1/sessions',
      headers: createHeaders,
      body,
    },
    {
      name: 'session-get',
      label: 'GET /v1/sessions/{id}',
      server: service,
      method: 'GET',
      path: `/v1/sessions/${sessionId}`,
      headers: secretHeaders,
    },
    {
      name: 'reference-pay',
      label: 'same-writes reference pay (bare)',
      server: referenceFull,
      method: 'POST',
      path: '/api/v1/shares/{id}/pay',
      headers: { 'content-type': 'application/json' },
      body: PAY_BODY,
      pool: referencePool,
    },
    {
      name: 'share-pay',
      label: 'POST /shares/{id}/pay',
      server: service,
      method: 'POST',
      path: '/api/v1/shares/{id}/pay',
      headers: { 'content-type': 'application/json' },
      body: PAY_BODY,
      pool: servicePool,
    },
    {
      name: 'mixed',
      label: `GET over ${MIXED_SESSIONS} sessions, ${MIXED_WRITES_LABEL}`,
      server: service,
      method: 'GET',
      path: '/v1/sessions/{id}',
      headers: secretHeaders,
      pool: polled,
      beside: () =>
        startWrites(
          `http://127.0.0.1:${servicePort}`,
          { headers: createHeaders, body },
          mixedPays,
          PAY_BODY,
          MIXED_WRITES,
          MIXED_KINDS,
        ),
      rate: MIXED_POLL_RATE,
    },
    {
      name: 'mixed-reference',
      label: `same bytes from memory, same writes/s (bare)`,
      server: referenceFull,
      method: 'GET',
      path: '/v1/sessions/{id}',
      headers: secretHeaders,
      pool: polled,
      beside: () =>
        startWrites(
          `http://127.0.0.1:${referenceFull.port}`,
          { headers: { 'content-type': 'application/json' }, body },
          mixedReferencePays,
          PAY_BODY,
          MIXED_WRITES,
          MIXED_KINDS,
        ),
      rate: MIXED_POLL_RATE,
    },
  ];

  process.stderr.write(
    `bench: ${CONNECTIONS} connections, ${WARMUP_SECONDS} s warm-up + ${SECONDS} s per measurement\n`,
  );
  const measurements: Measurement[] = [];
  const rounds = new Map<string, Measurement[]>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const target of targets) {
      if (!selected(target.name)) continue;
      const taken = rounds.get(target.name) ?? [];
      taken.push(await measure(target));
      rounds.set(target.name, taken);
    }
  }
  for (const taken of rounds.values()) measurements.push(merged(taken));

  const ratios = RATIOS.map((ratio): RatioResult => {
    const top = measurements.find((m) => m.name === ratio.numerator);
    const bottom = measurements.find((m) => m.name === ratio.denominator);
    const failed = (m: Measurement | undefined) => m !== undefined && m.non2xx + m.errors + m.timeouts > 0;
    const invalid = failed(top) || failed(bottom);
    const value =
      top && bottom && bottom.requestsPerSecond > 0 && !invalid
        ? top.requestsPerSecond / bottom.requestsPerSecond
        : null;
    const cost = (m: Measurement | undefined) => m?.serverCpuMicrosPerRequest ?? null;
    const [topCost, bottomCost] = [cost(top), cost(bottom)];
    const cpuValue = topCost && bottomCost && !invalid ? bottomCost / topCost : null;
    const pass = value === null || ratio.target === null ? null : value >= ratio.target;
    return { ...ratio, value, pass, cpuValue, invalid };
  });

  const environment: Environment = {
    date: new Date().toISOString(),
    node: process.version,
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length,
    platform: `${os.platform()} ${os.release()}`,
    loadAverage,
    seconds: SECONDS,
    warmupSeconds: WARMUP_SECONDS,
    connections: CONNECTIONS,
  };
  printReport(environment, measurements, ratios);
  let soak: SoakResult | undefined;
  if (named('soak')) {
    soak = await benchSoak({
      baseUrl: `http://127.0.0.1:${servicePort}`,
      service,
      databaseFile: join(tmp, 'bench.db'),
      createHeaders,
      createBody: body,
      secretHeaders,
      signingSecret: merchant.signing_secret,
      seconds: envNumber('BENCH_SOAK_SECONDS', 600),
      sampleSeconds: envNumber('BENCH_SOAK_SAMPLE_SECONDS', 10),
      writesPerSecond: MIXED_WRITES,
      sessions: MIXED_SESSIONS,
      connections: CONNECTIONS,
    });
    process.stdout.write(`\n${soakReport(soak).join('\n')}\n`);
  }
  await stopChildren();
  let webhooks: WebhookBenchResult | undefined;
  if (selected('webhooks')) {
    webhooks = await benchWebhooks(WEBHOOK_EVENTS);
    process.stdout.write(`\n${webhookReport(webhooks).join('\n')}\n`);
  }
  let webhooksPostgres: PostgresWebhookBenchResult | undefined;
  const postgresUrl = process.env.BENCH_POSTGRES_URL || process.env.TEST_DATABASE_URL;
  if (selected('webhooks') || selected('webhooks-postgres')) {
    if (postgresUrl) {
      webhooksPostgres = await benchWebhooksPostgres(postgresUrl, WEBHOOK_EVENTS);
      process.stdout.write(`\n${postgresWebhookReport(webhooksPostgres).join('\n')}\n`);
    } else {
      process.stdout.write('\nwebhook deliveries on PostgreSQL: skipped (set BENCH_POSTGRES_URL)\n');
    }
  }
  let postgres: PostgresHotResult | undefined;
  if (selected('postgres')) {
    if (postgresUrl) {
      postgres = await benchPostgresHotPaths(postgresUrl, {
        seconds: PG_SECONDS,
        warmupSeconds: WARMUP_SECONDS,
        connections: CONNECTIONS,
        payRate: PG_PAY_RATE,
        targets: PG_TARGETS,
        baseEnv,
        profileDir: process.env.BENCH_CPU_PROF === '1' ? join(ROOT, 'data', 'bench-prof') : undefined,
      });
      process.stdout.write(`\n${postgresHotReport(postgres).join('\n')}\n`);
    } else {
      process.stdout.write('\nhot paths on PostgreSQL: skipped (set BENCH_POSTGRES_URL)\n');
    }
  }
  let growth: { groups: GroupSizeRow[]; tables?: TableSizeRow[] } | undefined;
  if (named('growth')) {
    growth = {
      groups: await benchGroupSizes({
        sizes: envList('BENCH_GROWTH_GROUPS', '2,10,50'),
        seconds: SECONDS,
        warmupSeconds: WARMUP_SECONDS,
        connections: CONNECTIONS,
        payRate: process.env.BENCH_PAY_RATE ? PAY_RATE : 1500,
        baseEnv,
      }),
    };
    if (growth.groups.length > 0) process.stdout.write(`\n${groupSizeReport(growth.groups).join('\n')}\n`);
    const sizes = envList('BENCH_GROWTH_SESSIONS', '10000,100000,1000000');
    if (!postgresUrl) {
      process.stdout.write('\ncost against table size: skipped (set BENCH_POSTGRES_URL)\n');
    } else if (sizes.length > 0) {
      growth.tables = await benchTableSizes(postgresUrl, {
        sizes,
        runs: envNumber('BENCH_GROWTH_RUNS', 20),
        fullReconcileUpTo: envNumber('BENCH_GROWTH_FULL_RECONCILE', 100_000),
        reconcileLimit: envNumber('BENCH_GROWTH_RECONCILE_LIMIT', 10_000),
      });
      process.stdout.write(`\n${tableSizeReport(growth.tables).join('\n')}\n`);
    }
  }
  let pages: PagesBenchResult | undefined;
  if (selected('pages')) {
    pages = await benchPages(PAGE_RUNS);
    process.stdout.write(`\n${pagesReport(pages).join('\n')}\n`);
  }
  let dashboardPages: DashboardPagesBenchResult | undefined;
  if (selected('dashboard-pages')) {
    dashboardPages = await benchDashboardPages(PAGE_RUNS);
    process.stdout.write(`\n${dashboardPagesReport(dashboardPages).join('\n')}\n`);
  }
  mkdirSync(join(ROOT, 'data'), { recursive: true });
  writeFileSync(
    RESULTS_FILE,
    `${JSON.stringify({ ...environment, measurements, ratios, webhooks, webhooksPostgres, postgres, growth, soak, pages, dashboardPages }, null, 2)}\n`,
  );
  process.stdout.write(`\nresults written to ${RESULTS_FILE}\n`);

  await stopChildren();
  if (profiling) {
    // Named CPU.<date>.<time>.<pid>.<thread>.<n>.cpuprofile; thread 0 is the main thread.
    const mine = readdirSync(profileDir).filter((f) => f.includes(`.${service.process.pid}.0.`));
    for (const name of mine) {
      const path = join(profileDir, name);
      process.stdout.write(
        `CPU profile of the service: ${path}\n  summary: node --import tsx ${join(BENCH, 'profile-summary.ts')} ${path}\n`,
      );
    }
  }
}

/** One request, which must answer 2xx: a wrong key or signature would make the numbers meaningless. */
async function check(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: string,
): Promise<string> {
  const response = await fetch(url, { method, headers, body });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${url} answered ${response.status}: ${text}`);
  return text;
}

async function measure(target: Target): Promise<Measurement> {
  const base = `http://127.0.0.1:${target.server.port}`;
  const url = `${base}${target.path}`;
  const { pool } = target;
  const request = {
    url: pool ? base : url,
    method: target.method,
    headers: target.headers,
    body: target.body,
    connections: CONNECTIONS,
    ...(target.rate && { overallRate: target.rate }),
    // Each request takes the next share (autocannon builds the request again before each send).
    ...(pool && {
      requests: [{ setupRequest: (req: RequestParams) => ({ ...req, path: pool.path() }) }],
    }),
  };
  await check(pool ? `${base}${pool.path()}` : url, target.method, target.headers, target.body);
  const beside = target.beside?.();
  if (WARMUP_SECONDS > 0) await autocannon({ ...request, duration: WARMUP_SECONDS });
  process.stderr.write(`bench: ${target.label} …\n`);
  const serverBefore = cpuSeconds(target.server);
  const clientBefore = process.cpuUsage();
  const started = performance.now();
  const result: Result = await autocannon({ ...request, duration: SECONDS, title: target.name });
  const elapsed = (performance.now() - started) / 1000;
  const serverAfter = cpuSeconds(target.server);
  const client = process.cpuUsage(clientBefore);
  const serverSeconds = serverBefore === null || serverAfter === null ? null : serverAfter - serverBefore;
  const writes = await beside?.stop();
  const answered = result['2xx'] + result.non2xx;
  return {
    name: target.name,
    label: target.label,
    method: target.method,
    path: target.path,
    requestsPerSecond: result.requests.mean,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes: Object.fromEntries(
      Object.entries(result.statusCodeStats).map(([code, stat]) => [code, stat.count]),
    ),
    serverCpu: serverSeconds === null ? null : serverSeconds / elapsed,
    clientCpu: (client.user + client.system) / 1e6 / elapsed,
    serverCpuMicrosPerRequest:
      serverSeconds === null || answered === 0 ? null : (serverSeconds * 1e6) / answered,
    ...(pool?.used !== undefined && { shares: { used: pool.used, made: pool.size ?? 0 } }),
    ...(writes && { writes }),
    totals: {
      seconds: elapsed,
      answered,
      serverSeconds,
      clientSeconds: (client.user + client.system) / 1e6,
    },
  };
}

function printReport(environment: Environment, measurements: Measurement[], ratios: RatioResult[]): void {
  const out: string[] = [];
  out.push('');
  out.push(
    `node ${environment.node} · ${environment.cpu} · ${environment.cores} cores · ${environment.date} · ` +
      `${environment.connections} connections × ${environment.seconds} s`,
  );
  if (environment.loadAverage > 0.5) {
    out.push(
      `NOTE: load average was ${environment.loadAverage.toFixed(2)} at start: other work shares the CPUs, so ` +
        'req/s and ratios are noisy; server µs/req is the steadier figure',
    );
  }
  out.push('');
  const rows = [
    ['name', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx', 'errors', 'server CPU', 'client CPU', 'server µs/req'],
    ...measurements.map((m) => [
      m.label,
      m.requestsPerSecond.toFixed(0),
      m.latencyP50Ms < 1 ? '<1' : m.latencyP50Ms.toFixed(0),
      m.latencyP99Ms < 1 ? '<1' : m.latencyP99Ms.toFixed(0),
      String(m.non2xx),
      String(m.errors + m.timeouts),
      m.serverCpu === null ? 'n/a' : `${(m.serverCpu * 100).toFixed(0)}%`,
      `${(m.clientCpu * 100).toFixed(0)}%`,
      m.serverCpuMicrosPerRequest === null ? 'n/a' : m.serverCpuMicrosPerRequest.toFixed(0),
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  for (const row of rows) {
    out.push(
      row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  '),
    );
  }
  for (const m of measurements) {
    if (m.non2xx > 0 || m.errors > 0 || m.timeouts > 0) {
      out.push(
        `WARNING: ${m.label}: ${m.non2xx} non-2xx answers, ${m.errors} errors, ${m.timeouts} timeouts ` +
          `(status codes ${JSON.stringify(m.statusCodes)}); its numbers are not comparable`,
      );
    }
    if (m.shares && m.shares.used > m.shares.made) {
      out.push(
        `WARNING: ${m.label}: ran out of shares (${m.shares.made} made, ${m.shares.used} wanted): ` +
          'raise BENCH_PAY_RATE',
      );
    }
  }
  for (const m of measurements) {
    if (!m.writes) continue;
    const { creates, pays, failed, skipped } = m.writes;
    out.push(
      `${m.label}: beside it ${creates} creates and ${pays} pays answered 2xx (warm-up included), ` +
        `${failed} failed, ${skipped} ticks skipped (server behind); its server CPU includes those writes`,
    );
    if (failed > 0) out.push(`WARNING: ${m.label}: ${failed} writes beside it failed`);
  }
  const pays = measurements.filter((m) => m.shares);
  if (pays.length > 0) {
    out.push(
      `pay targets: every request pays another pending share of a group of ${GROUP_SIZE} (1 in ${GROUP_SIZE} ` +
        'is the last share: the service then funds the session); non-2xx must be 0; shares used ' +
        pays.map((m) => `${m.name} ${m.shares?.used}/${m.shares?.made}`).join(', '),
    );
  }
  out.push('');
  for (const r of ratios) {
    const value = r.value === null ? 'n/a' : r.value.toFixed(2);
    const verdict = r.invalid
      ? 'INVALID: non-2xx answers'
      : r.target === null
        ? 'information'
        : r.pass === null
          ? 'not measured'
          : r.pass
            ? 'PASS'
            : 'FAIL';
    const byCpu = r.cpuValue === null ? '' : `   (by server CPU per request: ${r.cpuValue.toFixed(2)})`;
    out.push(
      `${r.name.padEnd(28)} ${value.padStart(5)}   ${r.target === null ? 'no target    ' : `target ≥ ${r.target.toFixed(2)}`}   ${verdict}${byCpu}`,
    );
  }
  const missed = ratios.filter((r) => r.pass === false).length;
  const measured = ratios.filter((r) => r.pass !== null).length;
  const invalid = ratios.filter((r) => r.invalid).length;
  out.push('');
  if (invalid > 0) out.push(`${invalid} ratio(s) INVALID: a side answered non-2xx (see the warnings above)`);
  if (measured === 0) out.push('no ratio measured (BENCH_ONLY)');
  else
    out.push(
      missed === 0 ? `all ${measured} measured targets met` : `${missed} of ${measured} targets MISSED`,
    );
  out.push('latency resolution is 1 ms (autocannon); CPU is a share of one core, from /proc');
  process.stdout.write(`${out.join('\n')}\n`);
}

function fatal(error: unknown): void {
  process.stderr.write(
    `bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  void stopChildren(2000).finally(() => process.exit(1));
}

installCleanup(fatal);
main().catch(fatal);
