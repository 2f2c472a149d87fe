// How cost grows (docs/benchmarks.md#how-cost-grows-17), `BENCH_ONLY=growth`. Information, no goals: it
// reports, it asserts nothing. Two tables:
//
// 1. Against group size (BENCH_GROWTH_GROUPS, default 2,10,50 members), on SQLite: for each size a fresh
//    service process on a fresh file, sessions made over the API with a group of that size (custom amounts,
//    capture immediate), then with autocannon, as run.ts measures: paying a share that leaves its group
//    pending, paying the last share (which funds the session and makes its transfer), GET
//    /v1/sessions/{id} and the organizer's hosted page, both of one session whose group is half paid
//    (polled: the SDK's case, served from the read cache). req/s and the server's CPU per request.
//    Expectation: flat where the work is per payment (a pay that leaves the group pending reads sums of the
//    group, not its rows), linear in the group where it is per member (the last share reads the whole
//    group; the GET and the page carry every member).
//
// 2. Against table size (BENCH_GROWTH_SESSIONS, default 10000,100000,1000000 sessions), on PostgreSQL
//    (BENCH_POSTGRES_URL or TEST_DATABASE_URL; skipped without one): see bench/growth-postgres.ts.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { DEFAULT_RATE_LIMITS } from '../src/config.ts';
import { freePort, runCommand, startChild, stopChildren, waitReady } from './children.ts';
import { columns, type Measured, measureLoad } from './load.ts';
import { PAY_BODY, type SeededGroup, seedGroups } from './shares.ts';

const ROOT = new URL('../../../', import.meta.url).pathname;

export interface GroupSizeOptions {
  sizes: number[];
  seconds: number;
  warmupSeconds: number;
  connections: number;
  /** The most pays a second expected: sizes the shares made beforehand. */
  payRate: number;
  /** The environment the service starts from (without the service's own variables). */
  baseEnv: NodeJS.ProcessEnv;
}

type GroupTarget = 'pay' | 'pay-last' | 'session-get' | 'organizer-page';

export interface GroupSizeRow extends Measured {
  size: number;
  target: GroupTarget;
}

interface Merchant {
  publishable_key: string;
  secret_key: string;
  signing_secret: string;
}

export async function benchGroupSizes(options: GroupSizeOptions): Promise<GroupSizeRow[]> {
  const rows: GroupSizeRow[] = [];
  for (const size of options.sizes) rows.push(...(await oneSize(size, options)));
  return rows;
}

async function oneSize(size: number, options: GroupSizeOptions): Promise<GroupSizeRow[]> {
  const tmp = mkdtempSync(join(os.tmpdir(), 'gc-bench-growth-'));
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...options.baseEnv,
    DATABASE_URL: `sqlite:${join(tmp, 'growth.db')}`,
    SERVICE_ENV: 'sandbox',
    HOST: '127.0.0.1',
    PORT: String(port),
    LOG_LEVEL: 'warn',
    MAIL_OUTBOX_DIR: join(tmp, 'outbox'),
  };
  for (const limit of Object.keys(DEFAULT_RATE_LIMITS)) env[`RATE_LIMIT_${limit}`] = '1000000';
  try {
    const cli = 'packages/server/bin/group-checkout.js merchant create --name Bench --headless --json';
    const created = await runCommand(cli.split(' '), { env, cwd: ROOT });
    const merchant = JSON.parse(created.trim().split('\n').at(-1) ?? '') as Merchant;
    const service = startChild(`service-g${size}`, 'packages/server/src/main.ts', { port, env, cwd: ROOT });
    await waitReady(service, `http://127.0.0.1:${port}/healthz`);
    const base = `http://127.0.0.1:${port}`;
    const createHeaders = {
      authorization: `Bearer ${merchant.publishable_key}`,
      'content-type': 'application/json',
      origin: 'https://shop.example',
    };
    // Shares that leave their group pending: every share but the last of each group, for the check, the
    // warm-up and the measurement at payRate, with a margin; one more group for the polled session.
    const { seconds, warmupSeconds, connections, payRate } = options;
    const sessions = Math.ceil((payRate * (seconds + warmupSeconds + 1) * 1.2) / (size - 1)) + 1;
    process.stderr.write(`bench: growth, groups of ${size}: making ${sessions} sessions …\n`);
    const groups = await seedGroups(base, createHeaders, merchant.signing_secret, sessions, size);
    const polled = groups.pop() as SeededGroup;
    const payHeaders = { 'content-type': 'application/json' };
    for (const share of polled.shares.slice(0, Math.floor(size / 2))) {
      const paid = await fetch(`${base}/api/v1/shares/${share}/pay`, {
        method: 'POST',
        headers: payHeaders,
        body: PAY_BODY,
      });
      if (!paid.ok)
        throw new Error(`paying a share of the polled session: ${paid.status} ${await paid.text()}`);
    }

    const rows: GroupSizeRow[] = [];
    const measure = async (target: GroupTarget, load: Parameters<typeof measureLoad>[1], amount?: number) => {
      process.stderr.write(`bench: growth, groups of ${size}: ${target} …\n`);
      const measured = await measureLoad(service, load, { connections, warmupSeconds, seconds, amount });
      rows.push({ size, target, ...measured });
    };

    let taken = 0;
    const notLast = groups.flatMap((g) => g.shares.slice(0, -1));
    await measure('pay', {
      method: 'POST',
      path: '',
      headers: payHeaders,
      body: PAY_BODY,
      next: () => `/api/v1/shares/${notLast[taken++] ?? 'shr_pool_exhausted'}/pay`,
    });
    // The last shares of the groups whose other shares were all paid (requests still in flight when the
    // measurement ended may have paid a few more, or not: a margin of groups is left out).
    const complete = Math.max(0, Math.floor(taken / (size - 1)) - Math.ceil(connections / (size - 1)) - 1);
    const lasts = groups.slice(0, complete).map((g) => g.shares.at(-1) as string);
    if (lasts.length > 1) {
      let next = 0;
      await measure(
        'pay-last',
        {
          method: 'POST',
          path: '',
          headers: payHeaders,
          body: PAY_BODY,
          next: () => `/api/v1/shares/${lasts[next++] ?? 'shr_pool_exhausted'}/pay`,
        },
        Math.min(lasts.length - 1, Math.round(payRate * seconds)),
      );
    }
    await measure('session-get', {
      method: 'GET',
      path: `/v1/sessions/${polled.sessionId}`,
      headers: { authorization: `Bearer ${merchant.secret_key}` },
    });
    await measure('organizer-page', { method: 'GET', path: polled.organizerPath, headers: {} });
    return rows;
  } finally {
    await stopChildren();
    rmSync(tmp, { recursive: true, force: true });
  }
}

const TARGET_LABELS: Record<GroupTarget, string> = {
  pay: 'POST /shares/{id}/pay, group stays pending',
  'pay-last': 'POST /shares/{id}/pay, last share (funds)',
  'session-get': 'GET /v1/sessions/{id} (polled)',
  'organizer-page': 'organizer page GET /session/{id}',
};

export function groupSizeReport(rows: readonly GroupSizeRow[]): string[] {
  const sizes = [...new Set(rows.map((r) => r.size))];
  const out = ['cost against group size (SQLite, one service process; information, no goal)', ''];
  const table = [['target', ...sizes.flatMap((s) => [`${s}: req/s`, `${s}: µs/req`])]];
  for (const target of Object.keys(TARGET_LABELS) as GroupTarget[]) {
    const cells = sizes.flatMap((size) => {
      const r = rows.find((row) => row.size === size && row.target === target);
      if (!r) return ['n/a', 'n/a'];
      const cpu = r.serverCpuMicrosPerRequest;
      return [r.requestsPerSecond.toFixed(0), cpu === null ? 'n/a' : cpu.toFixed(0)];
    });
    table.push([TARGET_LABELS[target], ...cells]);
  }
  // A pay in the order the shares come (one in `size` is the last): what run.ts's share-pay measures.
  table.push([
    'pay, in order (1 in size funds; derived)',
    ...sizes.flatMap((size) => {
      const pay = rows.find((r) => r.size === size && r.target === 'pay')?.serverCpuMicrosPerRequest;
      const last = rows.find((r) => r.size === size && r.target === 'pay-last')?.serverCpuMicrosPerRequest;
      if (pay == null || last == null) return ['', 'n/a'];
      return ['', (((size - 1) * pay + last) / size).toFixed(0)];
    }),
  ]);
  out.push(...columns(table));
  for (const r of rows) {
    if (r.non2xx + r.errors > 0)
      out.push(
        `WARNING: ${TARGET_LABELS[r.target]}, groups of ${r.size}: ${r.non2xx} non-2xx, ${r.errors} errors`,
      );
  }
  const lastCounts = rows.filter((r) => r.target === 'pay-last').map((r) => `${r.size}: ${r.requests}`);
  if (lastCounts.length > 0)
    out.push(`last-share pays measured (one per group paid by the first target): ${lastCounts.join(', ')}`);
  return out;
}
