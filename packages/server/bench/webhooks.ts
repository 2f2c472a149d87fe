// The webhook delivery benchmark (docs/benchmarks.md#webhook-delivery), part of `npm run bench`.
//
// Throughput: N events are written to the outbox of a fresh SQLite database, then the dispatcher delivers
// them to a loopback receiver (its own process) that answers 200. The baseline is a bare loop that signs
// and POSTs the same bodies, one after another, with the same HTTP client and keep-alive pool: exactly
// the network and crypto work, without the outbox, the claims and the attempt records. Deliveries to one
// URL go one at a time, in order (docs/decisions.md#webhook-delivery), so the loop is sequential too.
//
// For information, a third loop adds to the bare one the least durable work a delivery needs (read the
// outbox row, commit a delivery row before sending, commit the attempt after) with raw prepared
// statements: the fair "same writes" reference, as the other benchmarks have.
//
// Latency: with the dispatcher idle, events are committed one at a time; the time from each commit to the
// receiver reading the request's body, on the machine's clock, gives p50 and p99.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import SQLite from 'better-sqlite3';
import { loadConfig } from '../src/config.ts';
import { createSender } from '../src/events/send.ts';
import { createMerchant } from '../src/flows/merchants.ts';
import { createWebhookEndpoint } from '../src/flows/webhooks.ts';
import { ids } from '../src/ids.ts';
import { startDispatcher } from '../src/jobs/dispatcher.ts';
import { createLogger, openRuntime } from '../src/runtime.ts';
import { insertEvent } from '../src/store/events.ts';
import { freePort, startChild, waitReady } from './children.ts';

export interface WebhookBenchResult {
  events: number;
  dispatcherPerSecond: number;
  baselinePerSecond: number;
  ratio: number;
  /** The bare loop plus the least durable work (raw statements): what a hand-written dispatcher would do. */
  sameWritesPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  latencySamples: number;
}

const ROOT = new URL('../../../', import.meta.url).pathname;

/** A body the size and shape of a real group.share_paid event. */
export function eventBody(id: string, i: number): string {
  return JSON.stringify({
    id,
    type: 'group.share_paid',
    timestamp: new Date().toISOString(),
    data: {
      session_id: `cs_${String(i).padStart(16, '0')}`,
      order_ref: `ORD-${i}`,
      status: 'pending',
      total_cents: 12_000,
      currency: 'USD',
      paid_amount: 4000,
      pending_amount: 8000,
      charges: [`ch_sandbox_${String(i).padStart(20, '0')}`],
      member: { id: `mem_${i}`, name: 'Ana', amount_cents: 4000, status: 'paid', is_organizer: false },
    },
  });
}

export const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;

export async function benchWebhooks(events: number): Promise<WebhookBenchResult> {
  const tmp = mkdtempSync(join(os.tmpdir(), 'gc-bench-hooks-'));
  const port = await freePort();
  const receiver = startChild('receiver', 'packages/server/bench/webhook-receiver.ts', {
    port,
    env: { ...process.env },
    cwd: ROOT,
  });
  const base = `http://127.0.0.1:${port}`;
  await waitReady(receiver, `${base}/stats`);
  const stats = async () =>
    (await (await fetch(`${base}/stats`)).json()) as { count: number; arrivals: Record<string, number> };
  const count = async () => Number(await (await fetch(`${base}/count`)).text());
  const reset = () => fetch(`${base}/stats`, { method: 'DELETE' });

  const config = loadConfig({
    DATABASE_URL: `sqlite:${join(tmp, 'hooks.db')}`,
    MAIL_OUTBOX_DIR: join(tmp, 'outbox'),
    WEBHOOK_POLL_INTERVAL_MS: '1000',
  });
  const deps = await openRuntime(config, { logger: createLogger('warn') });
  try {
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
    const url = `${base}/hooks`;
    const endpoint = await createWebhookEndpoint(deps, merchant.id, { url, events: ['*'] });
    const bodies = Array.from({ length: events }, (_, i) => {
      const id = ids.event();
      return { id, body: eventBody(id, i) };
    });

    // Baseline: sign and POST each body in turn, warmed up on the first tenth.
    const sender = createSender({ timeoutMs: config.webhookTimeoutMs, publicOnly: false });
    const post = (b: { id: string; body: string }) =>
      sender.send({
        url,
        eventId: b.id,
        body: b.body,
        secrets: [endpoint.secret],
        timestamp: Math.floor(Date.now() / 1000),
      });
    for (const b of bodies.slice(0, events / 10)) await post(b);
    let started = performance.now();
    for (const b of bodies) {
      const result = await post(b);
      if (result.statusCode !== 200) throw new Error(`baseline delivery failed: ${result.error}`);
    }
    const baselinePerSecond = events / ((performance.now() - started) / 1000);

    // Information: the same loop doing the least durable work a delivery needs, with raw prepared
    // statements on the same database: read the outbox row, commit a delivery row before sending, then
    // commit the attempt and the outcome. Its events are other copies of the bodies, marked dispatched so
    // the dispatcher below leaves them alone.
    const raw = new SQLite(join(tmp, 'hooks.db'));
    raw.pragma('journal_mode = WAL');
    raw.pragma('synchronous = NORMAL');
    const copies = bodies.map((_, i) => {
      const id = ids.event();
      return { id, body: eventBody(id, i) };
    });
    const insertOutbox = raw.prepare(
      'insert into events (id, merchant_id, session_id, type, payload, created_at) values (?, ?, null, ?, ?, ?)',
    );
    raw.transaction(() => {
      for (const [i, c] of copies.entries())
        insertOutbox.run(c.id, merchant.id, 'group.share_paid', c.body, Date.now() + i);
    })();
    const readPayload = raw.prepare('select payload from events where id = ?').pluck();
    const markDispatched = raw.prepare('update events set dispatched_at = ? where id = ?');
    const insertDelivery = raw.prepare(
      `insert into deliveries (id, event_id, merchant_id, webhook_id, url, state, attempt_count, next_attempt_at,
        created_at, updated_at) values (?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?)`,
    );
    const insertAttempt = raw.prepare(
      'insert into delivery_attempts (delivery_id, number, at, status_code, latency_ms, error) values (?, 1, ?, ?, ?, ?)',
    );
    const settle = raw.prepare(
      "update deliveries set state = 'delivered', attempt_count = 1, next_attempt_at = null, updated_at = ? where id = ?",
    );
    const fanOut = raw.transaction((eventId: string, deliveryId: string, now: number) => {
      insertDelivery.run(deliveryId, eventId, merchant.id, endpoint.id, url, now, now, now);
      markDispatched.run(now, eventId);
    });
    const record = raw.transaction(
      (deliveryId: string, now: number, status: number | null, ms: number, error: string | null) => {
        insertAttempt.run(deliveryId, now, status, ms, error);
        settle.run(now, deliveryId);
      },
    );
    started = performance.now();
    for (const c of copies) {
      const now = Date.now();
      const body = readPayload.get(c.id) as string;
      const deliveryId = ids.delivery();
      fanOut(c.id, deliveryId, now);
      const result = await post({ id: c.id, body });
      if (result.statusCode !== 200) throw new Error(`same-writes delivery failed: ${result.error}`);
      record(deliveryId, Date.now(), result.statusCode, result.latencyMs, result.error);
    }
    const sameWritesPerSecond = events / ((performance.now() - started) / 1000);
    raw.close();
    sender.close();
    await reset();

    // The dispatcher: the same bodies as outbox rows, delivered from a cold start of the dispatcher.
    const now = Date.now();
    await deps.db.kysely.transaction().execute(async (trx) => {
      for (const [i, b] of bodies.entries()) {
        await insertEvent(trx, {
          id: b.id,
          merchantId: merchant.id,
          sessionId: null,
          type: 'group.share_paid',
          payload: b.body,
          createdAt: now + i,
        });
      }
    });
    started = performance.now();
    const { Session } = await import('node:inspector/promises');
    const session = new Session();
    if (process.env.PROF) {
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
    }
    const dispatcher = await startDispatcher(deps);
    while ((await count()) < events) await sleep(20);
    const dispatcherPerSecond = events / ((performance.now() - started) / 1000);
    if (process.env.PROF) {
      const { profile } = await session.post('Profiler.stop');
      (await import('node:fs')).writeFileSync('/tmp/disp.cpuprofile', JSON.stringify(profile));
    }

    // Commit to receipt, one event at a time on an idle dispatcher.
    await reset();
    const committed = new Map<string, number>();
    const samples = Math.min(200, events);
    for (let i = 0; i < samples; i++) {
      const id = ids.event();
      await deps.db.kysely.transaction().execute(async (trx) => {
        await insertEvent(trx, {
          id,
          merchantId: merchant.id,
          sessionId: null,
          type: 'group.share_paid',
          payload: eventBody(id, i),
          createdAt: Date.now(),
        });
        await deps.db.events.announce(trx);
      });
      committed.set(id, performance.timeOrigin + performance.now());
      await sleep(10);
    }
    while ((await count()) < samples) await sleep(20);
    const { arrivals } = await stats();
    const latencies = [...committed]
      .map(([id, at]) => (arrivals[id] ?? Number.NaN) - at)
      .sort((a, b) => a - b);
    await dispatcher.stop();
    return {
      events,
      dispatcherPerSecond,
      baselinePerSecond,
      ratio: dispatcherPerSecond / baselinePerSecond,
      sameWritesPerSecond,
      latencyP50Ms: percentile(latencies, 50),
      latencyP99Ms: percentile(latencies, 99),
      latencySamples: latencies.length,
    };
  } finally {
    await deps.close();
    receiver.process.kill('SIGTERM');
    await receiver.exited;
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** The report's lines. */
export function webhookReport(r: WebhookBenchResult): string[] {
  const verdict = (pass: boolean) => (pass ? 'PASS' : 'FAIL');
  return [
    `webhook deliveries: ${r.dispatcherPerSecond.toFixed(0)}/s from the outbox, ${r.baselinePerSecond.toFixed(0)}/s bare sign-and-POST loop (${r.events} events)`,
    `${'deliveries ÷ bare loop'.padEnd(28)} ${r.ratio.toFixed(2).padStart(5)}   target ≥ 0.70   ${verdict(r.ratio >= 0.7)}`,
    `${'deliveries ÷ same writes'.padEnd(28)} ${(r.dispatcherPerSecond / r.sameWritesPerSecond).toFixed(2).padStart(5)}   no target      information (same-writes loop ${r.sameWritesPerSecond.toFixed(0)}/s)`,
    `${'commit → receipt p50 (ms)'.padEnd(28)} ${r.latencyP50Ms.toFixed(1).padStart(5)}   target < 50     ${verdict(r.latencyP50Ms < 50)}   (p99 ${r.latencyP99Ms.toFixed(1)} ms, ${r.latencySamples} events)`,
  ];
}
