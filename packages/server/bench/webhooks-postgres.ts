// The webhook delivery benchmark on PostgreSQL (docs/benchmarks.md#webhook-delivery), part of `npm run
// bench` when BENCH_POSTGRES_URL (or TEST_DATABASE_URL) names a PostgreSQL server: it makes its own
// database there and drops it at the end.
//
// Deliveries go to URLS receiver URLs (one endpoint each, every event to every endpoint), one request at a
// time per URL across all processes (a lease per URL, docs/decisions.md#webhook-delivery). Measured:
// - the same-writes loop: one loop per URL, side by side, each doing per delivery the least durable work
//   (read the outbox row, commit a delivery row, POST, commit the attempt and the outcome) with raw SQL;
// - real service processes (src/main.ts, workers included), one and then two, idle when the events are
//   committed (announced as the service announces them) and measured until the receiver has them all;
// - commit to receipt, one event at a time, with the two processes idle.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { createSender } from '../src/events/send.ts';
import { createMerchant } from '../src/flows/merchants.ts';
import { createWebhookEndpoint } from '../src/flows/webhooks.ts';
import { ids } from '../src/ids.ts';
import { createLogger, openRuntime } from '../src/runtime.ts';
import { insertEvent } from '../src/store/events.ts';
import { type Child, freePort, startChild, waitReady } from './children.ts';
import { eventBody, percentile } from './webhooks.ts';

/** Receiver URLs: enough for two processes to share, as merchants' endpoints are many. */
const URLS = 8;

export interface PostgresWebhookBenchResult {
  deliveries: number;
  urls: number;
  sameWritesPerSecond: number;
  oneProcessPerSecond: number;
  twoProcessesPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  latencySamples: number;
  /** Commit to receipt with one process (information). */
  oneProcessLatencyP50Ms: number;
}

const ROOT = new URL('../../../', import.meta.url).pathname;

export async function benchWebhooksPostgres(
  adminUrl: string,
  deliveries: number,
): Promise<PostgresWebhookBenchResult> {
  const name = `gc_bench_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  const tmp = mkdtempSync(join(os.tmpdir(), 'gc-bench-pg-hooks-'));
  const port = await freePort();
  const receiver = startChild('receiver', 'packages/server/bench/webhook-receiver.ts', {
    port,
    env: { ...process.env },
    cwd: ROOT,
  });
  const base = `http://127.0.0.1:${port}`;
  const services: Child[] = [];
  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    MAIL_OUTBOX_DIR: join(tmp, 'outbox'),
  });
  const deps = await openRuntime(config, { logger: createLogger('warn') });
  const pool = new pg.Pool({ connectionString: databaseUrl, max: URLS });
  try {
    await waitReady(receiver, `${base}/stats`);
    const count = async () => Number(await (await fetch(`${base}/count`)).text());
    const reset = () => fetch(`${base}/stats`, { method: 'DELETE' });
    const { merchant } = await createMerchant(
      deps.db,
      {
        name: 'Bench',
        environment: 'test',
        headlessApiEnabled: true,
        payoutCurrency: null,
        allowedOrigins: [],
      },
      Date.now(),
    );
    const endpoints = [];
    for (let i = 0; i < URLS; i++) {
      endpoints.push(
        await createWebhookEndpoint(deps, merchant.id, { url: `${base}/hooks/${i}`, events: ['*'] }),
      );
    }
    const events = Math.ceil(deliveries / URLS);
    const total = events * URLS;

    // The same-writes loop, one per URL side by side, over events already marked dispatched (the
    // service leaves them alone).
    const copies = Array.from({ length: events }, (_, i) => {
      const id = ids.event();
      return { id, body: eventBody(id, i) };
    });
    const now = Date.now();
    await deps.db.kysely.transaction().execute(async (trx) => {
      for (const [i, c] of copies.entries()) {
        await insertEvent(trx, {
          id: c.id,
          merchantId: merchant.id,
          sessionId: null,
          type: 'group.share_paid',
          payload: c.body,
          createdAt: now + i,
        });
      }
      await trx.updateTable('events').set({ dispatched_at: now }).execute();
    });
    const sender = createSender({ timeoutMs: config.webhookTimeoutMs, publicOnly: false });
    const started = performance.now();
    await Promise.all(
      endpoints.map(async (endpoint) => {
        for (const c of copies) {
          const client = await pool.connect();
          try {
            const at = Date.now();
            const { rows } = await client.query('select payload from events where id = $1', [c.id]);
            const deliveryId = ids.delivery();
            await client.query(
              `insert into deliveries (id, event_id, merchant_id, webhook_id, url, state, attempt_count,
                 next_attempt_at, created_at, updated_at) values ($1, $2, $3, $4, $5, 'pending', 0, $6, $6, $6)`,
              [deliveryId, c.id, merchant.id, endpoint.id, endpoint.url, at],
            );
            const result = await sender.send({
              url: endpoint.url,
              eventId: c.id,
              body: rows[0].payload,
              secrets: [endpoint.secret],
              timestamp: Math.floor(at / 1000),
            });
            if (result.statusCode !== 200) throw new Error(`same-writes delivery failed: ${result.error}`);
            await client.query('begin');
            await client.query(
              'insert into delivery_attempts (delivery_id, number, at, status_code, latency_ms, error) values ($1, 1, $2, $3, $4, $5)',
              [deliveryId, Date.now(), result.statusCode, result.latencyMs, result.error],
            );
            await client.query(
              "update deliveries set state = 'delivered', attempt_count = 1, next_attempt_at = null, updated_at = $1 where id = $2",
              [Date.now(), deliveryId],
            );
            await client.query('commit');
          } finally {
            client.release();
          }
        }
      }),
    );
    const sameWritesPerSecond = total / ((performance.now() - started) / 1000);
    sender.close();

    const serviceEnv = {
      ...process.env,
      DATABASE_URL: databaseUrl,
      SERVICE_ENV: 'sandbox',
      DEMO_SHOP: '0',
      LOG_LEVEL: 'warn',
      MAIL_OUTBOX_DIR: join(tmp, 'outbox'),
    };
    const startService = async () => {
      const servicePort = await freePort();
      const child = startChild(`service ${services.length + 1}`, 'packages/server/src/main.ts', {
        port: servicePort,
        env: serviceEnv,
        cwd: ROOT,
      });
      services.push(child);
      await waitReady(child, `http://127.0.0.1:${servicePort}/healthz`);
    };
    /** Commits the events in one transaction, announced as the service announces its own. */
    const commitEvents = async (n: number, sample = 0) => {
      const ids_ = Array.from({ length: n }, () => ids.event());
      await deps.db.kysely.transaction().execute(async (trx) => {
        for (const [i, id] of ids_.entries()) {
          await insertEvent(trx, {
            id,
            merchantId: merchant.id,
            sessionId: null,
            type: 'group.share_paid',
            payload: eventBody(id, sample + i),
            createdAt: Date.now(),
          });
        }
        await deps.db.events.announce(trx);
      });
      return ids_;
    };
    /** Commits `n` events and waits until the receiver has all their deliveries; answers deliveries/s. */
    const deliverAll = async (n: number) => {
      await reset();
      const start = performance.now();
      await commitEvents(n);
      while ((await count()) < n * URLS) await sleep(10);
      return (n * URLS) / ((performance.now() - start) / 1000);
    };

    // Commit to receipt (first arrival of each event), one event at a time, the processes idle.
    const latency = async (samples: number) => {
      await reset();
      const committed = new Map<string, number>();
      for (let i = 0; i < samples; i++) {
        const [id] = await commitEvents(1, i);
        committed.set(id as string, performance.timeOrigin + performance.now());
        await sleep(10);
      }
      while ((await count()) < samples * URLS) await sleep(20);
      const { arrivals } = (await (await fetch(`${base}/stats`)).json()) as {
        arrivals: Record<string, number>;
      };
      return [...committed].map(([id, at]) => (arrivals[id] ?? Number.NaN) - at).sort((a, b) => a - b);
    };
    // Each process warms up first (its first deliveries compile what they run), then is measured.
    await startService();
    await deliverAll(20);
    const oneProcessPerSecond = await deliverAll(events);
    const oneLatencies = await latency(100);
    await startService();
    await deliverAll(20);
    const twoProcessesPerSecond = await deliverAll(events);
    const latencies = await latency(200);
    return {
      deliveries: total,
      urls: URLS,
      sameWritesPerSecond,
      oneProcessPerSecond,
      twoProcessesPerSecond,
      latencyP50Ms: percentile(latencies, 50),
      latencyP99Ms: percentile(latencies, 99),
      latencySamples: latencies.length,
      oneProcessLatencyP50Ms: percentile(oneLatencies, 50),
    };
  } finally {
    for (const child of services) {
      child.process.kill('SIGTERM');
      await child.exited;
    }
    await pool.end();
    await deps.close();
    receiver.process.kill('SIGTERM');
    await receiver.exited;
    rmSync(tmp, { recursive: true, force: true });
    const cleanup = new pg.Client({ connectionString: adminUrl });
    await cleanup.connect();
    await cleanup.query(`drop database if exists ${name} with (force)`);
    await cleanup.end();
  }
}

/** The report's lines. */
export function postgresWebhookReport(r: PostgresWebhookBenchResult): string[] {
  const verdict = (pass: boolean) => (pass ? 'PASS' : 'FAIL');
  const one = r.oneProcessPerSecond / r.sameWritesPerSecond;
  const two = r.twoProcessesPerSecond / r.sameWritesPerSecond;
  return [
    `webhook deliveries on PostgreSQL, ${r.urls} URLs, ${r.deliveries} deliveries: same-writes loop ${r.sameWritesPerSecond.toFixed(0)}/s, one process ${r.oneProcessPerSecond.toFixed(0)}/s, two processes ${r.twoProcessesPerSecond.toFixed(0)}/s`,
    `${'one process ÷ same writes'.padEnd(28)} ${one.toFixed(2).padStart(5)}   target ≥ 0.80   ${verdict(one >= 0.8)}`,
    `${'two processes ÷ same writes'.padEnd(28)} ${two.toFixed(2).padStart(5)}   target ≥ 0.80   ${verdict(two >= 0.8)}`,
    `${'commit → receipt p50 (ms)'.padEnd(28)} ${r.latencyP50Ms.toFixed(1).padStart(5)}   target < 50     ${verdict(r.latencyP50Ms < 50)}   (p99 ${r.latencyP99Ms.toFixed(1)} ms, ${r.latencySamples} events, two processes; one process: p50 ${r.oneProcessLatencyP50Ms.toFixed(1)} ms)`,
  ];
}
