// The dispatcher as it runs in production: inside real server processes (src/main.ts). Two processes on
// one PostgreSQL database share the deliveries and send each attempt once; a process killed in the middle
// of a batch loses nothing, its claims running out and the next process taking them (at least once: a
// delivery sent just before the kill may come twice, with the same webhook-id).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DIALECTS, postgresCase } from '../helpers/databases.ts';
import { eventually } from '../helpers/payments.ts';
import { Receiver } from '../helpers/receiver.ts';
import { type CrashFixture, crashFixture, freePort, ServerProcess } from '../helpers/server-process.ts';
import { sampleCart } from '../helpers/sessions.ts';

const ENV = {
  // A URL's lease lasts 1.75 timeouts: long enough that a process stalled for a moment on a busy test
  // machine keeps its URLs (a lease lost to a stall means a delivery sent twice, which is allowed but
  // is not what these tests count).
  WEBHOOK_TIMEOUT_MS: '1000',
  WEBHOOK_RETRY_SCHEDULE: '100ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms',
  WEBHOOK_POLL_INTERVAL_MS: '200',
  RATE_LIMIT_SESSIONS_CREATE: '100000',
  RATE_LIMIT_WEBHOOKS_WRITE: '100000',
};

// biome-ignore lint/suspicious/noExplicitAny: the API answer as JSON
type Json = any;

async function call(
  baseUrl: string,
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<Json> {
  const res = await fetch(`${baseUrl}/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json();
  assert.equal(res.status, 200, JSON.stringify(json));
  return json;
}

const createSession = (baseUrl: string, key: string) =>
  call(baseUrl, key, 'POST', '/sessions', { cart: sampleCart() });

async function attemptsPerDelivery(f: CrashFixture) {
  return f.db.kysely
    .selectFrom('deliveries')
    .leftJoin('delivery_attempts', 'delivery_attempts.delivery_id', 'deliveries.id')
    .select([
      'deliveries.id',
      'deliveries.state',
      (eb) => eb.fn.count<number>('delivery_attempts.number').as('n'),
    ])
    .groupBy(['deliveries.id', 'deliveries.state'])
    .execute();
}

describe('two dispatcher processes on one PostgreSQL database', { skip: postgresCase.skip }, () => {
  let f: CrashFixture;
  let second: ServerProcess;
  let receiver: Receiver;
  before(async () => {
    f = await crashFixture(postgresCase, ENV);
    const port = await freePort();
    second = new ServerProcess({ ...f.server.env, PORT: String(port) }, `http://127.0.0.1:${port}`);
    receiver = await Receiver.start({ kind: 'slow', ms: 5 });
  });
  after(async () => {
    await second?.stop();
    await receiver?.close();
    await f?.close();
  });

  test('send every attempt once between them', async () => {
    await f.server.start();
    await second.start();
    const key = f.merchant.secretKey;
    // Eight endpoints: eight URLs, so that both processes have deliveries to make at the same time.
    for (let i = 0; i < 8; i++) {
      await call(f.server.baseUrl, key, 'POST', '/webhooks', { url: `${receiver.url}/${i}`, events: ['*'] });
    }
    const servers = [f.server, second];
    await Promise.all(
      Array.from({ length: 40 }, (_, i) => createSession((servers[i % 2] as ServerProcess).baseUrl, key)),
    );
    await eventually(async () => receiver.received.length >= 320, 30_000, '320 deliveries');
    await new Promise((r) => setTimeout(r, 500));
    const seen = receiver.received.map((r) => `${r.id} ${r.path}`);
    assert.equal(seen.length, 320, 'nothing arrived twice');
    assert.equal(new Set(seen).size, 320);
    const deliveries = await attemptsPerDelivery(f);
    assert.equal(deliveries.length, 320);
    assert.ok(
      deliveries.every((d) => d.state === 'delivered' && Number(d.n) === 1),
      'one attempt each',
    );
  });
});

for (const dialect of DIALECTS) {
  describe(`a dispatcher killed mid-batch on ${dialect.name}`, { skip: dialect.skip }, () => {
    let f: CrashFixture;
    let receiver: Receiver;
    before(async () => {
      f = await crashFixture(dialect, ENV);
      receiver = await Receiver.start({ kind: 'slow', ms: 40 });
    });
    after(async () => {
      await receiver?.close();
      await f?.close();
    });

    test('loses nothing: every event arrives after a restart', async () => {
      await f.server.start();
      const key = f.merchant.secretKey;
      await call(f.server.baseUrl, key, 'POST', '/webhooks', {
        url: receiver.url,
        events: ['group.created'],
      });
      const sessions: string[] = [];
      for (let i = 0; i < 30; i++) sessions.push((await createSession(f.server.baseUrl, key)).session_id);
      await eventually(async () => receiver.received.length >= 3, 10_000);
      await f.server.stop(); // SIGKILL, mid-chain: a delivery is in flight.
      const beforeRestart = receiver.received.length;
      assert.ok(beforeRestart < 30, `the kill came mid-batch (${beforeRestart} of 30 had arrived)`);
      await f.server.start();
      // The killed process's lease on the URL runs out 1.75 timeouts after it was last renewed; then the
      // new process takes it.
      await eventually(
        async () => new Set(receiver.received.map((r) => r.id)).size === 30,
        30_000,
        '30 events',
      );
      assert.deepEqual(new Set(receiver.received.map((r) => r.event.data.session_id)), new Set(sessions));
      await eventually(async () => (await attemptsPerDelivery(f)).every((d) => d.state === 'delivered'));
    });

    test('a kill between sending and recording sends that delivery again, with the same webhook-id', async () => {
      await f.server.stop();
      await f.server.start({ SANDBOX_CRASH_AT: 'delivery-sent' });
      const start = receiver.received.length;
      const created = await createSession(f.server.baseUrl, f.merchant.secretKey);
      assert.equal(await f.server.exited, 'SIGKILL');
      await f.server.start();
      await eventually(async () => receiver.received.length === start + 2, 30_000, 'the second send');
      const [first, again] = receiver.received.slice(start);
      assert.equal(first?.id, again?.id);
      assert.equal(first?.event.data.session_id, created.session_id);
      const deliveryOf = () =>
        f.db.kysely
          .selectFrom('deliveries')
          .select(['state', 'attempt_count'])
          .where('event_id', '=', first?.id as string)
          .executeTakeFirstOrThrow();
      await eventually(async () => (await deliveryOf()).state === 'delivered');
      const event = await deliveryOf();
      assert.equal(event.attempt_count, 1, 'the attempt the crash cut off was never recorded');
    });
  });
}
