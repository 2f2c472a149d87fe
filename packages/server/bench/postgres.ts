// The hot paths on PostgreSQL, the production engine (docs/benchmarks.md#hot-paths-on-postgresql), part of
// `npm run bench` (BENCH_ONLY=postgres) when BENCH_POSTGRES_URL (or TEST_DATABASE_URL) names a server. It
// makes two databases there, one for the service and one for its same-statement reference
// (reference-pg.ts: raw `pg`, the service's statements in the service's transactions), each by the
// service's own migrations with the same merchant, and drops them at the end. Each round starts the
// service and the reference as one process each, then as two each on their database; for each target
// (POST /v1/sessions, GET /v1/sessions/{id}, POST /shares/{id}/pay) it warms both up, then loads them in
// turns (four slices of the measured seconds each, service then reference, so that a neighbour's load on
// this shared machine falls on both alike), each process by its own autocannon with its share of the
// connections, and sums the CPU of every process of a side per answered request. It also sums the CPU of the PostgreSQL backends serving
// each side: the same statements should cost the database the same.
//
// Pays spend shares made beforehand, in groups of GROUP_SIZE: on the service over its API (create, then
// the organizer's PUT of the group), on the reference written directly as those requests leave them. The
// last share of each group is left unpaid on both sides: it funds its session and transfers the money,
// which the reference does not mirror (see reference-pg.ts).
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import autocannon, { type RequestParams } from 'autocannon';
import pg from 'pg';
import { DEFAULT_RATE_LIMITS } from '../src/config.ts';
import { ids, sha256 } from '../src/ids.ts';
import { benchCart, sessionBody } from './cart.ts';
import {
  type Child,
  cpuSeconds,
  freePort,
  runCommand,
  startChild,
  stopChildren,
  waitReady,
} from './children.ts';
import { GROUP_SIZE, PAY_BODY, SharePool, seedService } from './shares.ts';

const ROOT = new URL('../../../', import.meta.url).pathname;
const BENCH = new URL('./', import.meta.url).pathname;
/** USER_HZ of /proc/<pid>/stat. */
const CLOCK_TICKS = 100;
/** The goal of issue #17 for each target, service ÷ reference, by req/s and by CPU per request. */
const POSTGRES_GOAL = 0.8;

type Side = 'service' | 'reference';
export type TargetName = 'create' | 'get' | 'pay';
export const POSTGRES_TARGETS: readonly TargetName[] = ['create', 'get', 'pay'];

interface PostgresHotRow {
  side: Side;
  processes: number;
  target: TargetName;
  requestsPerSecond: number;
  latencyP50Ms: number;
  /** CPU of all the side's processes per answered request, microseconds. */
  serverCpuMicrosPerRequest: number | null;
  /** CPU of the PostgreSQL backends connected to the side's database per answered request, microseconds. */
  databaseCpuMicrosPerRequest: number | null;
  non2xx: number;
  errors: number;
}

export interface PostgresHotOptions {
  seconds: number;
  warmupSeconds: number;
  connections: number;
  /** The most pays a second expected of either side: sizes the shares made beforehand. */
  payRate: number;
  /** The environment the processes start from (without the service's own variables). */
  baseEnv: NodeJS.ProcessEnv;
  /** The targets to measure, in this order. */
  targets: readonly TargetName[];
  /** Write a V8 CPU profile of every process to this folder. */
  profileDir?: string;
}

interface Merchant {
  merchant_id: string;
  publishable_key: string;
  secret_key: string;
  signing_secret: string;
}

interface SideSetup {
  side: Side;
  url: string;
  env: NodeJS.ProcessEnv;
  merchant: Merchant;
  /** The shares each round pays, in the order it pays them. */
  pools: SharePool[];
  /** Two shares of a group of their own, for the statement check. */
  checkShares?: string[];
}

/** What each side sent PostgreSQL for one request of a target, and what followed from it. */
interface StatementCheck {
  target: TargetName;
  service: string[];
  reference: string[];
}

export interface PostgresHotResult {
  rows: PostgresHotRow[];
  statements: StatementCheck[];
}

export async function benchPostgresHotPaths(
  adminUrl: string,
  options: PostgresHotOptions,
): Promise<PostgresHotResult> {
  const stem = `gc_bench_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const tmp = mkdtempSync(join(os.tmpdir(), 'gc-bench-pg-hot-'));
  const made: string[] = [];
  const rows: PostgresHotRow[] = [];
  let statements: StatementCheck[] = [];
  try {
    const sides: SideSetup[] = [];
    for (const side of ['service', 'reference'] as const) {
      const name = `${stem}_${side === 'service' ? 'svc' : 'ref'}`;
      await admin.query(`create database ${name}`);
      made.push(name);
      const url = new URL(adminUrl);
      url.pathname = `/${name}`;
      const env: NodeJS.ProcessEnv = {
        ...options.baseEnv,
        DATABASE_URL: url.toString(),
        BENCH_REFERENCE_PG_URL: url.toString(),
        SERVICE_ENV: 'sandbox',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        MAIL_OUTBOX_DIR: join(tmp, `outbox-${side}`),
      };
      for (const limit of Object.keys(DEFAULT_RATE_LIMITS)) env[`RATE_LIMIT_${limit}`] = '1000000';
      // The same merchant, made the same way: the CLI migrates the new database, then writes it and its keys.
      const cli = 'packages/server/bin/group-checkout.js merchant create --name Bench --headless --json';
      const created = await runCommand(cli.split(' '), { env, cwd: ROOT });
      const merchant = JSON.parse(created.trim().split('\n').at(-1) ?? '') as Merchant;
      sides.push({ side, url: url.toString(), env, merchant, pools: [] });
    }
    if (options.profileDir) mkdirSync(options.profileDir, { recursive: true });
    if (options.targets.includes('pay')) for (const setup of sides) await makeShares(setup, options);
    statements = await checkStatements(sides, tmp);
    for (const processes of [1, 2]) rows.push(...(await round(processes, sides, options)));
  } finally {
    await stopChildren();
    for (const name of made)
      await admin.query(`drop database if exists ${name} with (force)`).catch(() => undefined);
    await admin.end();
    rmSync(tmp, { recursive: true, force: true });
  }
  return { rows, statements };
}

/**
 * Checks that the reference still sends what the service sends: one process of each side, each logging
 * every statement it sends (pg-statement-log.ts) with its periodic loops slowed to once a minute, answers
 * one create, GET and pay (and a pay only with shares made) after one of each unlogged; each request's
 * statements are those logged from its start until 1.2 s later (its fan-out and request log included).
 */
async function checkStatements(sides: SideSetup[], tmp: string): Promise<StatementCheck[]> {
  const logged = await Promise.all(
    sides.map(async (setup) => {
      const file = join(tmp, `statements-${setup.side}.log`);
      writeFileSync(file, '');
      const child = startChild(
        `${setup.side}-pg-statements`,
        setup.side === 'service' ? 'packages/server/src/main.ts' : join(BENCH, 'reference-pg.ts'),
        {
          port: await freePort(),
          env: {
            ...setup.env,
            BENCH_PG_STATEMENT_LOG: file,
            SWEEP_INTERVAL_MS: '60000',
            SETTLE_INTERVAL_MS: '60000',
            WEBHOOK_POLL_INTERVAL_MS: '60000',
          },
          cwd: ROOT,
          nodeArgs: ['--import', join(BENCH, 'pg-statement-log.ts')],
        },
      );
      const base = `http://127.0.0.1:${child.port}`;
      await waitReady(child, `${base}/`);
      const createHeaders = {
        authorization: `Bearer ${setup.merchant.publishable_key}`,
        'content-type': 'application/json',
        origin: 'https://shop.example',
      };
      const body = sessionBody(setup.merchant.signing_secret);
      const create = () => fetch(`${base}/v1/sessions`, { method: 'POST', headers: createHeaders, body });
      const made = (await (await create()).json()) as { session_id: string };
      const get = () =>
        fetch(`${base}/v1/sessions/${made.session_id}`, {
          headers: { authorization: `Bearer ${setup.merchant.secret_key}` },
        });
      const [warm, share] = setup.checkShares ?? [];
      const pay = (id: string) => () =>
        fetch(`${base}/api/v1/shares/${id}/pay`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: PAY_BODY,
        });
      await (await get()).text();
      if (warm) await (await pay(warm)()).text();
      const steps: [TargetName, () => Promise<Response>][] = [
        ['create', create],
        ['get', get],
        ...(share ? [['pay', pay(share)] as [TargetName, () => Promise<Response>]] : []),
      ];
      const sent = new Map<TargetName, string[]>();
      await new Promise((resolve) => setTimeout(resolve, 1200));
      for (const [target, request] of steps) {
        const from = readFileSync(file, 'utf8').length;
        const answer = await request();
        await answer.text();
        await new Promise((resolve) => setTimeout(resolve, 1200));
        const lines = readFileSync(file, 'utf8').slice(from).split('\n').filter(Boolean);
        sent.set(target, answer.ok ? lines : [`(answered ${answer.status})`]);
      }
      return sent;
    }),
  ).finally(() => stopChildren());
  const [service, reference] = logged;
  return [...(service?.keys() ?? [])].map((target) => ({
    target,
    service: service?.get(target) ?? [],
    reference: reference?.get(target) ?? [],
  }));
}

/**
 * Groups to make per round so that the pay target of a side never runs out of shares at `payRate`: the
 * seconds loaded, and the requests in flight when each load (the warm-up, each slice) ends, whose shares
 * are spent though their answers are not counted.
 */
const groupsPerRound = (options: PostgresHotOptions) =>
  Math.ceil(
    (options.payRate * (options.seconds + options.warmupSeconds + 1) * 1.2 +
      (SLICES + 2) * options.connections) /
      (GROUP_SIZE - 1),
  );

/**
 * The shares to pay, from shares listed group by group: every share but the last of each group (which
 * would fund its session: see the top of this file), taken across `spread` groups at a time (the first
 * share of each, then the second of each, …), so that the requests in flight pay different sessions
 * rather than queue on one session's lock, as payers of many groups do.
 */
function payOrder(shares: readonly string[], spread: number): string[] {
  const groups = Math.floor(shares.length / GROUP_SIZE);
  const order: string[] = [];
  for (let first = 0; first < groups; first += spread) {
    const block = Math.min(spread, groups - first);
    for (let position = 0; position < GROUP_SIZE - 1; position++)
      for (let g = first; g < first + block; g++) order.push(shares[g * GROUP_SIZE + position] as string);
  }
  return order;
}

/**
 * Both rounds' shares, before any load: on the service over its API, through a process of its own that
 * stops before the rounds start (its CPU profile, if any, is not the measured processes'); on the
 * reference written directly.
 */
async function makeShares(setup: SideSetup, options: PostgresHotOptions): Promise<void> {
  const groups = groupsPerRound(options);
  // One group more: the statement check (checkStatements) pays two of its shares.
  process.stderr.write(`bench: PostgreSQL, ${setup.side}: making ${2 * groups + 1} groups to pay …\n`);
  let shares: string[];
  if (setup.side === 'service') {
    const seeder = startChild('service-pg-seed', 'packages/server/src/main.ts', {
      port: await freePort(),
      env: setup.env,
      cwd: ROOT,
    });
    const base = `http://127.0.0.1:${seeder.port}`;
    try {
      await waitReady(seeder, `${base}/healthz`);
      const createHeaders = {
        authorization: `Bearer ${setup.merchant.publishable_key}`,
        'content-type': 'application/json',
        origin: 'https://shop.example',
      };
      shares = await seedService(base, createHeaders, setup.merchant.signing_secret, 2 * groups + 1);
    } finally {
      await stopChildren();
    }
  } else {
    shares = await seedReference(setup.url, setup.merchant.merchant_id, 2 * groups + 1);
  }
  // The planner's statistics of the new rows, the same on both databases.
  const client = new pg.Client({ connectionString: setup.url });
  await client.connect();
  await client.query('analyze');
  await client.end();
  const half = groups * GROUP_SIZE;
  setup.pools.push(
    new SharePool(payOrder(shares.slice(0, half), options.connections)),
    new SharePool(payOrder(shares.slice(half, 2 * half), options.connections)),
  );
  setup.checkShares = shares.slice(2 * half, 2 * half + 2);
}

/** One round: `processes` processes of each side, each target measured on the service, then the reference. */
async function round(
  processes: number,
  sides: SideSetup[],
  options: PostgresHotOptions,
): Promise<PostgresHotRow[]> {
  const started = new Map<Side, Child[]>();
  for (const setup of sides) {
    const children: Child[] = [];
    for (let i = 0; i < processes; i++) {
      const port = await freePort();
      const name = `${setup.side === 'service' ? 'service' : 'reference'}-pg-${processes}p-${i + 1}`;
      const script =
        setup.side === 'service' ? 'packages/server/src/main.ts' : join(BENCH, 'reference-pg.ts');
      children.push(
        startChild(name, script, {
          port,
          env: setup.env,
          cwd: ROOT,
          nodeArgs: options.profileDir
            ? // A folder per process: its loader thread writes a profile of its own beside the main thread's.
              ['--cpu-prof', `--cpu-prof-dir=${join(options.profileDir, name)}`]
            : [],
        }),
      );
    }
    started.set(setup.side, children);
  }
  try {
    await Promise.all(
      [...started.entries()].flatMap(([side, children]) =>
        children.map((c) =>
          waitReady(c, `http://127.0.0.1:${c.port}${side === 'service' ? '/healthz' : '/'}`),
        ),
      ),
    );
    const base = (c: Child) => `http://127.0.0.1:${c.port}`;
    const bySide = new Map<Side, { children: Child[]; targets: LoadTarget[]; database: string }>();
    for (const setup of sides) {
      const children = started.get(setup.side) as Child[];
      const first = children[0] as Child;
      const createHeaders = {
        authorization: `Bearer ${setup.merchant.publishable_key}`,
        'content-type': 'application/json',
        origin: 'https://shop.example',
      };
      const body = sessionBody(setup.merchant.signing_secret);
      const made = await fetch(`${base(first)}/v1/sessions`, {
        method: 'POST',
        headers: createHeaders,
        body,
      });
      if (!made.ok)
        throw new Error(`${setup.side}: POST /v1/sessions answered ${made.status}: ${await made.text()}`);
      const sessionId = ((await made.json()) as { session_id: string }).session_id;
      const pool = setup.pools[processes - 1] ?? new SharePool([]);
      bySide.set(setup.side, {
        children,
        database: new URL(setup.url).pathname.slice(1),
        targets: [
          { target: 'create', method: 'POST', path: '/v1/sessions', headers: createHeaders, body },
          {
            target: 'get',
            method: 'GET',
            path: `/v1/sessions/${sessionId}`,
            headers: { authorization: `Bearer ${setup.merchant.secret_key}` },
          },
          {
            target: 'pay',
            method: 'POST',
            path: '',
            headers: { 'content-type': 'application/json' },
            body: PAY_BODY,
            pool,
          },
        ],
      });
    }
    const rows: PostgresHotRow[] = [];
    const admin = new pg.Client({ connectionString: sides[0]?.url });
    await admin.connect();
    try {
      for (const target of options.targets) {
        const loads = (['service', 'reference'] as const).map((side) => {
          const { children, targets, database } = bySide.get(side) as {
            children: Child[];
            targets: LoadTarget[];
            database: string;
          };
          return { side, children, database, t: targets.find((x) => x.target === target) as LoadTarget };
        });
        process.stderr.write(`bench: PostgreSQL, ${processes} process(es): ${target} …\n`);
        if (options.warmupSeconds > 0)
          for (const l of loads) await slice(l.children, l.t, processes, options.warmupSeconds, options);
        // The measured seconds in alternating slices, service then reference: a neighbour's load that
        // comes and goes falls on both sides alike.
        const totals = loads.map(() => ({ ...EMPTY, p50s: [] as number[] }));
        for (let k = 0; k < SLICES; k++) {
          for (const [i, l] of loads.entries()) {
            const m = await measured(
              l.children,
              l.t,
              processes,
              options.seconds / SLICES,
              l.database,
              admin,
              options,
            );
            const total = totals[i] as Totals & { p50s: number[] };
            for (const key of Object.keys(EMPTY) as (keyof Totals)[]) total[key] += m[key];
            total.p50s.push(m.p50);
          }
        }
        for (const [i, l] of loads.entries()) {
          const total = totals[i] as Totals & { p50s: number[] };
          rows.push({
            side: l.side,
            processes,
            target,
            requestsPerSecond: total.answered / total.seconds,
            latencyP50Ms: total.p50s.reduce((a, b) => a + b, 0) / total.p50s.length,
            serverCpuMicrosPerRequest: total.answered === 0 ? null : (total.cpu * 1e6) / total.answered,
            databaseCpuMicrosPerRequest: total.answered === 0 ? null : (total.dbCpu * 1e6) / total.answered,
            non2xx: total.non2xx,
            errors: total.errors,
          });
        }
      }
    } finally {
      await admin.end();
    }
    return rows;
  } finally {
    // Let the last answers go out before the processes stop (a stopping process fails what it still has).
    await new Promise((resolve) => setTimeout(resolve, 500));
    await stopChildren();
  }
}

/** Slices each side's measured seconds are cut into, the two sides taking turns. */
const SLICES = 4;

interface LoadTarget {
  target: TargetName;
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
  pool?: SharePool;
}

interface Totals {
  seconds: number;
  answered: number;
  non2xx: number;
  errors: number;
  cpu: number;
  dbCpu: number;
}
const EMPTY: Totals = { seconds: 0, answered: 0, non2xx: 0, errors: 0, cpu: 0, dbCpu: 0 };

/** Loads the side's processes for `seconds`, each by its own autocannon with its share of the connections. */
function slice(
  children: Child[],
  t: LoadTarget,
  processes: number,
  seconds: number,
  options: PostgresHotOptions,
) {
  const base = (c: Child) => `http://127.0.0.1:${c.port}`;
  return Promise.all(
    children.map((c) =>
      autocannon({
        url: t.pool ? base(c) : `${base(c)}${t.path}`,
        method: t.method,
        headers: t.headers,
        body: t.body,
        connections: Math.max(1, Math.round(options.connections / processes)),
        duration: seconds,
        ...(t.pool && {
          requests: [
            { setupRequest: (req: RequestParams) => ({ ...req, path: (t.pool as SharePool).path() }) },
          ],
        }),
      }),
    ),
  );
}

/** One measured slice: what was answered, and the CPU the side's processes and their backends used. */
async function measured(
  children: Child[],
  t: LoadTarget,
  processes: number,
  seconds: number,
  database: string,
  admin: pg.Client,
  options: PostgresHotOptions,
): Promise<Totals & { p50: number }> {
  const backends = await backendPids(admin, database);
  const before = children.map(cpuSeconds);
  const dbBefore = backends.map(pidCpuSeconds);
  const started = performance.now();
  const results = await slice(children, t, processes, seconds, options);
  const elapsed = (performance.now() - started) / 1000;
  const after = children.map(cpuSeconds);
  const dbAfter = backends.map(pidCpuSeconds);
  let cpu = 0;
  after.forEach((a, i) => {
    const b = before[i];
    if (a !== null && b !== null && b !== undefined) cpu += a - b;
  });
  // Backends that lived through the slice (the pools' connections stay open).
  let dbCpu = 0;
  dbAfter.forEach((a, i) => {
    const b = dbBefore[i];
    if (a !== null && b !== null && b !== undefined) dbCpu += a - b;
  });
  return {
    seconds: Math.max(seconds, elapsed),
    answered: results.reduce((sum, r) => sum + r['2xx'] + r.non2xx, 0),
    non2xx: results.reduce((sum, r) => sum + r.non2xx, 0),
    errors: results.reduce((sum, r) => sum + r.errors + r.timeouts, 0),
    cpu,
    dbCpu,
    p50: Math.max(...results.map((r) => r.latency.p50)),
  };
}

/** The PostgreSQL backends connected to `database` now (this bench's own connection excepted). */
async function backendPids(admin: pg.Client, database: string): Promise<number[]> {
  const { rows } = await admin.query<{ pid: number }>(
    'select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
    [database],
  );
  return rows.map((r) => r.pid);
}

/** User + system CPU seconds of a process on this machine, or null (gone, or not readable). */
function pidCpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

/** A multi-row insert of `columns` for `count` rows, numbered from $1. */
function insertRows(table: string, columns: readonly string[], count: number): string {
  const rows = Array.from(
    { length: count },
    (_, r) => `(${columns.map((_, c) => `$${r * columns.length + c + 1}`).join(', ')})`,
  );
  return `insert into "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) values ${rows.join(', ')}`;
}

const SESSION_COLUMNS = [
  'id',
  'merchant_id',
  'status',
  'cart',
  'currency',
  'total_cents',
  'order_ref',
  'group_id',
  'group_mode',
  'group_config',
  'group_set_up_at',
  'customer',
  'success_url',
  'cancel_url',
  'webhook_url',
  'embed_origins',
  'organizer_token_hash',
  'group_token',
  'merchant_fee_ppm',
  'consumer_fee_ppm',
  'charge_step',
  'locale',
  'mail_locale',
  'created_at',
  'updated_at',
  'expires_at',
  'closed_at',
  'funded_at',
  'settled_at',
  'settle_after',
] as const;
const MEMBER_COLUMNS = [
  'id',
  'session_id',
  'merchant_id',
  'position',
  'name',
  'email',
  'amount_cents',
  'basis_points',
  'items',
  'share_id',
  'status',
  'is_organizer',
  'last_reminded_at',
  'paying_attempt_id',
  'failure',
  'created_at',
  'updated_at',
] as const;
const EVENT_COLUMNS = [
  'id',
  'merchant_id',
  'session_id',
  'type',
  'payload',
  'created_at',
  'dispatched_at',
] as const;

/**
 * `sessions` open sessions on the reference's database, written as the service's create and the
 * organizer's PUT of a group in custom amounts leave them (seedService): the session (capture immediate,
 * room for GROUP_SIZE, set up in custom mode), its GROUP_SIZE members, its group.created event fanned
 * out. Answers the share ids, session by session.
 */
async function seedReference(url: string, merchantId: string, sessions: number): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const merchant = (
      await client.query<{ merchant_fee_ppm: number; consumer_fee_ppm: number }>(
        'select merchant_fee_ppm, consumer_fee_ppm from merchants where id = $1',
        [merchantId],
      )
    ).rows[0];
    if (!merchant) throw new Error(`no merchant ${merchantId}`);
    const cart = benchCart();
    const each = Math.floor(cart.total / GROUP_SIZE);
    const groupConfig = JSON.stringify({
      minSize: 2,
      maxSize: GROUP_SIZE,
      defaultMode: 'equal',
      allowedModes: ['equal', 'itemized', 'custom', 'percentage', 'host-pays'],
      expiryHours: 48,
      capture: 'immediate',
    });
    const last = (
      await client.query<{ at: string | null }>(
        'select max(created_at) as at from sessions where merchant_id = $1',
        [merchantId],
      )
    ).rows[0]?.at;
    let now = Math.max(Date.now(), Number(last ?? 0) + 1);
    const shares: string[] = [];
    const BATCH = 20;
    for (let done = 0; done < sessions; done += BATCH) {
      const count = Math.min(BATCH, sessions - done);
      const sessionValues: unknown[] = [];
      const memberValues: unknown[] = [];
      const eventValues: unknown[] = [];
      for (let s = 0; s < count; s++, now++) {
        const id = ids.session();
        const expiresAt = now + 48 * 3_600_000;
        sessionValues.push(
          id,
          merchantId,
          'pending',
          JSON.stringify(cart),
          cart.currency,
          cart.total,
          cart.metadata?.order_ref ?? null,
          ids.group(),
          'custom',
          groupConfig,
          now,
          null,
          null,
          null,
          null,
          '["https://shop.example"]',
          sha256(ids.organizerToken()),
          ids.groupToken(),
          merchant.merchant_fee_ppm,
          merchant.consumer_fee_ppm,
          1,
          'auto',
          'en',
          now,
          now,
          expiresAt,
          null,
          null,
          null,
          null,
        );
        for (let m = 0; m < GROUP_SIZE; m++) {
          const shareId = ids.share();
          memberValues.push(
            ids.member(),
            id,
            merchantId,
            m,
            `Member ${m}`,
            null,
            m === 0 ? cart.total - each * (GROUP_SIZE - 1) : each,
            null,
            null,
            shareId,
            'pending',
            m === 0 ? 1 : 0,
            null,
            null,
            null,
            now,
            now,
          );
          shares.push(shareId);
        }
        const eventId = ids.event();
        const payload = {
          id: eventId,
          type: 'group.created',
          timestamp: new Date(now).toISOString(),
          data: {
            session_id: id,
            order_ref: cart.metadata?.order_ref ?? null,
            status: 'pending',
            total_cents: cart.total,
            currency: cart.currency,
            paid_amount: 0,
            pending_amount: cart.total,
            charges: [],
          },
        };
        eventValues.push(eventId, merchantId, id, 'group.created', JSON.stringify(payload), now, now);
      }
      await client.query('begin');
      await client.query(insertRows('sessions', SESSION_COLUMNS, count), sessionValues);
      await client.query(insertRows('members', MEMBER_COLUMNS, count * GROUP_SIZE), memberValues);
      await client.query(insertRows('events', EVENT_COLUMNS, count), eventValues);
      await client.query('commit');
    }
    return shares;
  } finally {
    await client.end();
  }
}

const fmt = (n: number | null) => (n === null ? 'n/a' : n.toFixed(0));

export function postgresHotReport({ rows, statements }: PostgresHotResult): string[] {
  const out = [
    `hot paths on PostgreSQL: the service against its same-statement reference (raw pg), goal ≥ ${POSTGRES_GOAL} each`,
    '',
  ];
  for (const check of statements) {
    const { service, reference } = check;
    const at = service.findIndex((line, i) => line !== reference[i]);
    const differs = at >= 0 || service.length !== reference.length;
    if (!differs) {
      out.push(`statements of one ${check.target}: the reference sends the service's ${service.length}`);
      continue;
    }
    const i = at >= 0 ? at : service.length;
    out.push(
      `WARNING: statements of one ${check.target} differ (service ${service.length}, reference ${reference.length}); the reference (bench/reference-pg.ts) must follow the service. First difference, statement ${i + 1}:`,
      `  service:   ${(service[i] ?? '(none)').slice(0, 300)}`,
      `  reference: ${(reference[i] ?? '(none)').slice(0, 300)}`,
    );
  }
  out.push('');
  const table: string[][] = [
    [
      'processes',
      'target',
      'service req/s',
      'reference req/s',
      'ratio',
      '',
      'service µs/req',
      'reference µs/req',
      'by CPU',
      '',
      'db µs/req (svc / ref)',
      'p50 ms (svc / ref)',
    ],
  ];
  const find = (side: Side, processes: number, target: TargetName) =>
    rows.find((r) => r.side === side && r.processes === processes && r.target === target);
  const verdict = (value: number | null, invalid: boolean) =>
    invalid ? 'INVALID' : value === null ? 'n/a' : value >= POSTGRES_GOAL ? 'PASS' : 'FAIL';
  for (const processes of [1, 2]) {
    for (const target of ['create', 'get', 'pay'] as const) {
      const s = find('service', processes, target);
      const r = find('reference', processes, target);
      if (!s || !r) continue;
      const invalid = s.non2xx + s.errors + r.non2xx + r.errors > 0;
      const ratio = r.requestsPerSecond > 0 ? s.requestsPerSecond / r.requestsPerSecond : null;
      const byCpu =
        s.serverCpuMicrosPerRequest && r.serverCpuMicrosPerRequest
          ? r.serverCpuMicrosPerRequest / s.serverCpuMicrosPerRequest
          : null;
      table.push([
        String(processes),
        target,
        s.requestsPerSecond.toFixed(0),
        r.requestsPerSecond.toFixed(0),
        ratio === null ? 'n/a' : ratio.toFixed(2),
        verdict(ratio, invalid),
        fmt(s.serverCpuMicrosPerRequest),
        fmt(r.serverCpuMicrosPerRequest),
        byCpu === null ? 'n/a' : byCpu.toFixed(2),
        verdict(byCpu, invalid),
        `${fmt(s.databaseCpuMicrosPerRequest)} / ${fmt(r.databaseCpuMicrosPerRequest)}`,
        `${fmt(s.latencyP50Ms)} / ${fmt(r.latencyP50Ms)}`,
      ]);
    }
  }
  const widths = (table[0] as string[]).map((_, i) =>
    Math.max(...table.map((row) => (row[i] as string).length)),
  );
  for (const row of table)
    out.push(
      row
        .map((cell, i) => (i < 2 ? cell.padEnd(widths[i] as number) : cell.padStart(widths[i] as number)))
        .join('  ')
        .trimEnd(),
    );
  out.push(
    '',
    'ratio: service req/s ÷ reference req/s; by CPU: reference µs/req ÷ service µs/req (all processes of a side);',
    'db µs/req: CPU of the PostgreSQL backends serving each side. Pays leave the last share of each group unpaid.',
  );
  for (const r of rows) {
    if (r.non2xx + r.errors > 0)
      out.push(
        `WARNING: ${r.side} ${r.target} with ${r.processes} process(es): ${r.non2xx} non-2xx, ${r.errors} errors`,
      );
  }
  return out;
}
