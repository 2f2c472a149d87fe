// Order and exclusivity of webhook delivery across processes (docs/api.md#webhook-delivery): two real
// service processes, each with its own workers, on one PostgreSQL database, paying and delivering at the
// same time. A receiver that records when each request came and when it ended checks that a session's
// events arrive at every URL in the order they were committed, and that no two requests to one URL are
// ever in progress together; then the process holding a slow URL is killed (SIGKILL) and the other URLs
// go on while that one resumes within twice the send timeout.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type ApiClient, RELAXED_LIMITS, requestOver } from '../helpers/app.ts';
import { postgresCase } from '../helpers/databases.ts';
import { CARDS, equalGroup, eventually, pay } from '../helpers/payments.ts';
import { type Received, Receiver } from '../helpers/receiver.ts';
import { type CrashFixture, crashFixture, freePort, ServerProcess } from '../helpers/server-process.ts';
import { createSession } from '../helpers/sessions.ts';

const TIMEOUT_MS = 1000;
const ENV = {
  ...RELAXED_LIMITS,
  WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
  WEBHOOK_RETRY_SCHEDULE: '100ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms',
  WEBHOOK_POLL_INTERVAL_MS: '200',
};

/** The events of each session as committed (events.seq), by session id. */
async function committedOrder(f: CrashFixture): Promise<Map<string, string[]>> {
  const rows = await f.db.kysely.selectFrom('events').select(['id', 'session_id']).orderBy('seq').execute();
  const order = new Map<string, string[]>();
  for (const row of rows) {
    const ids = order.get(row.session_id as string) ?? [];
    ids.push(row.id);
    order.set(row.session_id as string, ids);
  }
  return order;
}

/** Event ids as they first arrived at `path`, by session id (at least once: a repeat is not a new arrival). */
function arrivals(received: readonly Received[], path: string): Map<string, string[]> {
  const seen = new Set<string>();
  const bySession = new Map<string, string[]>();
  for (const r of received) {
    if (r.path !== path || seen.has(r.id)) continue;
    seen.add(r.id);
    const session = r.event.data.session_id as string;
    bySession.set(session, [...(bySession.get(session) ?? []), r.id]);
  }
  return bySession;
}

describe('webhook delivery across two service processes on one PostgreSQL', {
  skip: postgresCase.skip,
}, () => {
  let f: CrashFixture;
  let second: ServerProcess;
  let receiver: Receiver;
  let clients: ApiClient[];
  const PATHS = ['/a', '/b', '/c', '/d'];

  before(async () => {
    f = await crashFixture(postgresCase, ENV);
    const port = await freePort();
    second = new ServerProcess({ ...f.server.env, PORT: String(port) }, `http://127.0.0.1:${port}`);
    // A few milliseconds per answer: long enough that two senders to one URL would overlap.
    receiver = await Receiver.start({ kind: 'slow', ms: 3 });
    await Promise.all([f.server.start(), second.start()]);
    clients = [f.server, second].map((server) => ({
      merchant: f.merchant,
      request: (method, path, o) => requestOver(server.baseUrl, method, path, o),
    }));
    for (const path of PATHS) {
      const res = await (clients[0] as ApiClient).request('POST', '/v1/webhooks', {
        key: f.merchant.secretKey,
        body: { url: `http://127.0.0.1:${receiver.port}${path}`, events: ['*'] },
      });
      assert.equal(res.status, 200, res.text);
    }
  });
  after(async () => {
    await second?.stop();
    await receiver?.close();
    await f?.close();
  });

  test("a session's events arrive in commit order at every URL, and no two requests to one URL overlap", async () => {
    const client = (i: number) => clients[i % 2] as ApiClient;
    // Twelve groups of two, made and paid through both processes at once: each session commits
    // group.created, two group.share_paid, and group.funded (in the last payment's transaction).
    const groups = await Promise.all(
      Array.from({ length: 12 }, (_, i) => equalGroup(client(i), ['Ada', 'Ben'], { via: 'secret' })),
    );
    await Promise.all(
      groups.flatMap((g, i) => [
        pay(client(i), g.shares[0].shareId, CARDS.ok),
        pay(client(i + 1), g.shares[1].shareId, CARDS.ok),
      ]),
    );
    const order = await committedOrder(f);
    const expected = [...order.values()].reduce((n, ids) => n + ids.length, 0);
    assert.equal(expected, 12 * 4);
    await eventually(
      async () => PATHS.every((p) => new Set(receiver.ofPath(p).map((r) => r.id)).size === expected),
      30_000,
      `${expected} events at each of ${PATHS.length} URLs`,
    );
    for (const path of PATHS) {
      const got = arrivals(receiver.received, path);
      for (const [session, ids] of order) {
        assert.deepEqual(got.get(session), ids, `${path}: session ${session}'s events in commit order`);
      }
    }
    assert.deepEqual(receiver.overlaps, [], 'never two requests to one URL at once');
  });

  test('after a SIGKILL of the process holding a URL, the other URLs go on and that URL resumes within twice the send timeout', async () => {
    const slowPath = '/slow';
    const fastPath = '/fast';
    receiver.byPath.set(slowPath, { kind: 'slow', ms: 300 });
    for (const path of [slowPath, fastPath]) {
      const res = await (clients[0] as ApiClient).request('POST', '/v1/webhooks', {
        key: f.merchant.secretKey,
        body: { url: `http://127.0.0.1:${receiver.port}${path}`, events: ['group.created'] },
      });
      assert.equal(res.status, 200, res.text);
    }
    const slowUrl = `http://127.0.0.1:${receiver.port}${slowPath}`;
    // Ten events queue at the slow URL (3 s of work); the fast URL takes its ten at once.
    for (let i = 0; i < 10; i++) await createSession(clients[i % 2] as ApiClient, { via: 'secret' });
    await eventually(async () => receiver.ofPath(fastPath).length >= 10, 10_000, 'the fast URL’s ten');
    await eventually(async () => receiver.ofPath(slowPath).length >= 2, 10_000, 'the slow URL under way');
    const lease = await f.db.kysely
      .selectFrom('delivery_urls')
      .select(['holder'])
      .where('url', '=', slowUrl)
      .executeTakeFirstOrThrow();
    const pid = Number(String(lease.holder).split('.')[0]);
    const [holder, other] = f.server.child?.pid === pid ? [f.server, second] : [second, f.server];
    assert.equal(holder.child?.pid, pid, 'the slow URL is held by one of the two processes');
    const otherClient = clients[other === f.server ? 0 : 1] as ApiClient;

    const killedAt = Date.now();
    await holder.stop(); // SIGKILL, most likely mid-request to the slow URL
    // The other URL goes on at once: new events reach it long before the dead lease runs out.
    const fastBefore = receiver.ofPath(fastPath).length;
    const createdAt = Date.now();
    for (let i = 0; i < 3; i++) await createSession(otherClient, { via: 'secret' });
    await eventually(async () => receiver.ofPath(fastPath).length >= fastBefore + 3, 10_000, 'the fast URL');
    // Not held up by the dead process: well inside what its lease could have cost (on a busy test
    // machine a delivery may take a few hundred milliseconds).
    const fastLatest = Math.max(...receiver.ofPath(fastPath).map((r) => r.at));
    assert.ok(fastLatest - createdAt < 2 * TIMEOUT_MS, `the fast URL went on (${fastLatest - createdAt} ms)`);

    // The slow URL resumes within twice the send timeout of the kill, sent by the surviving process.
    await eventually(
      async () => receiver.received.some((r) => r.path === slowPath && r.startedAt > killedAt),
      10_000,
      'the slow URL resumed',
    );
    const resumedAt = Math.min(
      ...receiver.received
        .filter((r) => r.path === slowPath && r.startedAt > killedAt)
        .map((r) => r.startedAt),
    );
    assert.ok(
      resumedAt - killedAt <= 2 * TIMEOUT_MS,
      `resumed ${resumedAt - killedAt} ms after the kill (at most ${2 * TIMEOUT_MS})`,
    );
    // Every event reaches the slow URL (at least once), and never two requests to it at once.
    await eventually(
      async () => new Set(receiver.ofPath(slowPath).map((r) => r.id)).size === 13,
      30_000,
      '13 events at the slow URL',
    );
    assert.deepEqual(receiver.overlaps, [], 'never two requests to one URL at once, across the kill');
  });
});
