// The hot paths on PostgreSQL, the production engine (docs/benchmarks.md#hot-paths-on-postgresql), part of
// `npm run bench` (BENCH_ONLY=postgres) when BENCH_POSTGRES_URL (or TEST_DATABASE_URL) names a server: it
// makes its own database there and drops it at the end. The service runs as one process, then as two on
// the same database (each loaded by its own autocannon with half the connections), and each round measures
// POST /v1/sessions, GET /v1/sessions/{id} and POST /shares/{id}/pay, with the server CPU of every process
// summed per answered request. No same-statement reference on PostgreSQL exists yet: the figures are the
// service's alone, for the ratios to come and to compare one process with two.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import autocannon, { type RequestParams } from 'autocannon';
import pg from 'pg';
import { DEFAULT_RATE_LIMITS } from '../src/config.ts';
import { sessionBody } from './cart.ts';
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

export interface PostgresHotRow {
  processes: number;
  target: 'create' | 'get' | 'pay';
  requestsPerSecond: number;
  latencyP50Ms: number;
  /** Server CPU of all the service's processes per answered request, microseconds. */
  serverCpuMicrosPerRequest: number | null;
  non2xx: number;
  errors: number;
}

export interface PostgresHotOptions {
  seconds: number;
  warmupSeconds: number;
  connections: number;
  /** The most pays a second expected: sizes the shares made beforehand. */
  payRate: number;
  /** The environment the service's processes start from (without the service's own variables). */
  baseEnv: NodeJS.ProcessEnv;
}

interface Merchant {
  publishable_key: string;
  secret_key: string;
  signing_secret: string;
}

export async function benchPostgresHotPaths(
  adminUrl: string,
  options: PostgresHotOptions,
): Promise<PostgresHotRow[]> {
  const name = `gc_bench_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const tmp = mkdtempSync(join(os.tmpdir(), 'gc-bench-pg-hot-'));
  const env: NodeJS.ProcessEnv = {
    ...options.baseEnv,
    DATABASE_URL: url.toString(),
    SERVICE_ENV: 'sandbox',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    MAIL_OUTBOX_DIR: join(tmp, 'outbox'),
  };
  for (const limit of Object.keys(DEFAULT_RATE_LIMITS)) env[`RATE_LIMIT_${limit}`] = '1000000';
  const rows: PostgresHotRow[] = [];
  try {
    const cli = 'packages/server/bin/group-checkout.js merchant create --name Bench --headless --json';
    const created = await runCommand(cli.split(' '), { env, cwd: ROOT });
    const merchant = JSON.parse(created.trim().split('\n').at(-1) ?? '') as Merchant;
    for (const processes of [1, 2]) rows.push(...(await round(processes, env, merchant, options)));
  } finally {
    await stopChildren();
    await admin.query(`drop database if exists ${name} with (force)`).catch(() => undefined);
    await admin.end();
    rmSync(tmp, { recursive: true, force: true });
  }
  return rows;
}

/** One round: `processes` service processes on the database, each target loaded across all of them. */
async function round(
  processes: number,
  env: NodeJS.ProcessEnv,
  merchant: Merchant,
  options: PostgresHotOptions,
): Promise<PostgresHotRow[]> {
  const services: Child[] = [];
  for (let i = 0; i < processes; i++) {
    const port = await freePort();
    services.push(startChild(`service-pg-${i + 1}`, 'packages/server/src/main.ts', { port, env, cwd: ROOT }));
  }
  try {
    await Promise.all(services.map((s) => waitReady(s, `http://127.0.0.1:${s.port}/healthz`)));
    const base = (s: Child) => `http://127.0.0.1:${s.port}`;
    const first = services[0] as Child;
    const body = sessionBody(merchant.signing_secret);
    const createHeaders = {
      authorization: `Bearer ${merchant.publishable_key}`,
      'content-type': 'application/json',
      origin: 'https://shop.example',
    };
    const secretHeaders = { authorization: `Bearer ${merchant.secret_key}` };
    const made = await fetch(`${base(first)}/v1/sessions`, { method: 'POST', headers: createHeaders, body });
    if (!made.ok) throw new Error(`POST /v1/sessions answered ${made.status}: ${await made.text()}`);
    const sessionId = ((await made.json()) as { session_id: string }).session_id;
    const { seconds, warmupSeconds, payRate } = options;
    const groups = Math.ceil((payRate * (seconds + warmupSeconds + 1) * 1.2) / GROUP_SIZE);
    process.stderr.write(`bench: PostgreSQL, ${processes} process(es): making ${groups} groups to pay …\n`);
    const pool = new SharePool(
      await seedService(base(first), createHeaders, merchant.signing_secret, groups),
    );
    const targets = [
      { target: 'create' as const, method: 'POST', path: '/v1/sessions', headers: createHeaders, body },
      { target: 'get' as const, method: 'GET', path: `/v1/sessions/${sessionId}`, headers: secretHeaders },
      {
        target: 'pay' as const,
        method: 'POST',
        path: '',
        headers: { 'content-type': 'application/json' },
        body: PAY_BODY,
        pool,
      },
    ];
    const rows: PostgresHotRow[] = [];
    for (const t of targets) {
      const load = (duration: number) =>
        Promise.all(
          services.map((s) =>
            autocannon({
              url: t.pool ? base(s) : `${base(s)}${t.path}`,
              method: t.method as 'GET' | 'POST',
              headers: t.headers,
              body: t.body,
              connections: Math.max(1, Math.round(options.connections / processes)),
              duration,
              ...(t.pool && {
                requests: [{ setupRequest: (req: RequestParams) => ({ ...req, path: t.pool.path() }) }],
              }),
            }),
          ),
        );
      process.stderr.write(`bench: PostgreSQL, ${processes} process(es): ${t.target} …\n`);
      if (warmupSeconds > 0) await load(warmupSeconds);
      const before = services.map(cpuSeconds);
      const results = await load(seconds);
      const after = services.map(cpuSeconds);
      const cpu =
        before.every((b) => b !== null) && after.every((a) => a !== null)
          ? after.reduce((sum: number, a, i) => sum + (a as number) - (before[i] as number), 0)
          : null;
      const answered = results.reduce((sum, r) => sum + r['2xx'] + r.non2xx, 0);
      rows.push({
        processes,
        target: t.target,
        requestsPerSecond: results.reduce((sum, r) => sum + r.requests.mean, 0),
        latencyP50Ms: Math.max(...results.map((r) => r.latency.p50)),
        serverCpuMicrosPerRequest: cpu === null || answered === 0 ? null : (cpu * 1e6) / answered,
        non2xx: results.reduce((sum, r) => sum + r.non2xx, 0),
        errors: results.reduce((sum, r) => sum + r.errors + r.timeouts, 0),
      });
    }
    return rows;
  } finally {
    await stopChildren();
  }
}

export function postgresHotReport(rows: readonly PostgresHotRow[]): string[] {
  const out = ['hot paths on PostgreSQL (service only: no same-statement reference yet)', ''];
  const table = [
    ['processes', 'target', 'req/s', 'p50 ms', 'server µs/req', 'non-2xx', 'errors'],
    ...rows.map((r) => [
      String(r.processes),
      r.target,
      r.requestsPerSecond.toFixed(0),
      r.latencyP50Ms < 1 ? '<1' : r.latencyP50Ms.toFixed(0),
      r.serverCpuMicrosPerRequest === null ? 'n/a' : r.serverCpuMicrosPerRequest.toFixed(0),
      String(r.non2xx),
      String(r.errors),
    ]),
  ];
  const widths = (table[0] as string[]).map((_, i) =>
    Math.max(...table.map((row) => (row[i] as string).length)),
  );
  for (const row of table)
    out.push(
      row
        .map((cell, i) => (i < 2 ? cell.padEnd(widths[i] as number) : cell.padStart(widths[i] as number)))
        .join('  '),
    );
  for (const r of rows) {
    if (r.non2xx + r.errors > 0)
      out.push(
        `WARNING: ${r.target} with ${r.processes} process(es): ${r.non2xx} non-2xx, ${r.errors} errors`,
      );
  }
  return out;
}
