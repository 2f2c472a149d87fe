// Webhook delivery (docs/decisions.md#webhook-delivery) against receivers on loopback ports this test
// controls: signed so that the Standard Webhooks reference verifier and our verifyWebhook both accept it,
// retried on the configured schedule with the same webhook-id, a session's events in commit order, a URL's
// queue held by its failing head and caught up in order after an outage, 410 disabling,
// redelivered on request, signed with both secrets during a rotation, a slow receiver delaying nobody
// else, and in production no delivery to an address that is not public.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { verifyWebhook } from '@group-checkout/node';
import { Webhook } from 'standardwebhooks';
import { startDispatcher } from '../../src/jobs/dispatcher.ts';
import type { Loop } from '../../src/jobs/loop.ts';
import { RELAXED_LIMITS, startTestApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { equalGroup, eventually, payOk } from '../helpers/payments.ts';
import { Receiver } from '../helpers/receiver.ts';
import { createSession, eventRows, SESSION_ENV } from '../helpers/sessions.ts';

/** Fast retries: the schedule is configuration, and real hours have no place in a test. */
const FAST = {
  ...RELAXED_LIMITS,
  WEBHOOK_RETRY_SCHEDULE: '50ms,100ms,100ms,100ms,100ms',
  WEBHOOK_TIMEOUT_MS: '1000',
  WEBHOOK_POLL_INTERVAL_MS: '200',
};

async function register(t: TestApp, url: string, events: string[] = ['*'], key = t.merchant.secretKey) {
  const res = await t.request('POST', '/v1/webhooks', { key, body: { url, events } });
  assert.equal(res.status, 200, res.text);
  return res.body as { id: string; secret: string };
}

async function deliveriesOf(t: TestApp, eventId: string) {
  const rows = await t.deps.db.kysely
    .selectFrom('deliveries')
    .selectAll()
    .where('event_id', '=', eventId)
    .execute();
  const attempts = await t.deps.db.kysely
    .selectFrom('delivery_attempts')
    .selectAll()
    .where('delivery_id', 'in', rows.length ? rows.map((r) => r.id) : [''])
    .orderBy('number')
    .execute();
  return rows.map((r) => ({ ...r, attempts: attempts.filter((a) => a.delivery_id === r.id) }));
}

const cancel = async (t: TestApp, sessionId: string, key = t.merchant.secretKey) => {
  const res = await t.request('POST', `/v1/sessions/${sessionId}/cancel`, { key });
  assert.equal(res.status, 200, res.text);
};

for (const dialect of DIALECTS) {
  describe(`webhook delivery on ${dialect.name}`, { skip: dialect.skip }, () => {
    let t: TestApp;
    let dispatcher: Loop;
    before(async () => {
      t = await startTestApp(dialect, { env: FAST });
      dispatcher = await startDispatcher(t.deps);
    });
    after(async () => {
      await dispatcher?.stop();
      await t?.close();
    });

    test('an event reaches its endpoint and the session webhook_url, verifiable by both verifiers', async () => {
      const m = await t.createMerchant({ name: 'Verify Shop' });
      const endpointReceiver = await Receiver.start();
      const sessionReceiver = await Receiver.start();
      try {
        const endpoint = await register(
          t,
          endpointReceiver.url,
          ['group.created', 'group.cancelled'],
          m.secretKey,
        );
        const created = await createSession(
          { request: t.request, merchant: m },
          { via: 'secret', extra: { webhook_url: sessionReceiver.url } },
        );
        const startedAt = Date.now();
        await eventually(
          async () => endpointReceiver.received.length === 1 && sessionReceiver.received.length === 1,
        );
        assert.ok(Date.now() - startedAt < 1000, 'a new event arrives within a second, not at a later poll');

        for (const [receiver, secret] of [
          [endpointReceiver, endpoint.secret],
          [sessionReceiver, m.merchant.sessionWebhookSecret],
        ] as const) {
          const got = receiver.received[0];
          assert.ok(got);
          assert.equal(got.event.type, 'group.created');
          assert.equal(got.event.data.session_id, created.session_id);
          assert.equal(got.event.data.order_ref, 'ORD-1001', 'the cart’s order_ref is echoed');
          assert.equal(got.headers['webhook-id'], got.event.id);
          assert.equal(got.headers['content-type'], 'application/json');
          // The reference implementation of the Standard Webhooks specification.
          const reference = new Webhook(secret.slice('whsec_'.length)).verify(got.body, got.headers) as {
            id: string;
          };
          assert.equal(reference.id, got.event.id);
          const ours = verifyWebhook<{ id: string }>(got.body, got.headers, secret);
          assert.equal(ours.id, got.event.id);
          // And not with another secret.
          assert.throws(() =>
            verifyWebhook(
              got.body,
              got.headers,
              endpointReceiver === receiver ? m.merchant.sessionWebhookSecret : endpoint.secret,
            ),
          );
        }
        const [event] = endpointReceiver.received;
        // Outcomes are recorded once the receivers have answered: a moment after they read the requests.
        await eventually(async () =>
          (await deliveriesOf(t, event?.id as string)).every((d) => d.state === 'delivered'),
        );
        const deliveries = await deliveriesOf(t, event?.id as string);
        assert.equal(deliveries.length, 2);
        for (const d of deliveries) {
          assert.equal(d.state, 'delivered');
          assert.equal(d.attempts.length, 1);
          assert.equal(d.attempts[0]?.status_code, 200);
          assert.equal(d.attempts[0]?.error, null);
        }
        assert.deepEqual(deliveries.map((d) => d.webhook_id).sort(), [endpoint.id, null].sort());
      } finally {
        await endpointReceiver.close();
        await sessionReceiver.close();
      }
    });

    test('a receiver that fails the first 3 times gets the event on the 4th attempt, with the same webhook-id', async () => {
      const m = await t.createMerchant({ name: 'Retry Shop' });
      const receiver = await Receiver.start({ kind: 'fail-first', times: 3, status: 503 });
      try {
        await register(t, receiver.url, ['group.created'], m.secretKey);
        const created = await createSession({ request: t.request, merchant: m }, { via: 'secret' });
        await eventually(async () => receiver.received.length === 1, 10_000, 'the retried delivery');
        assert.equal(receiver.requests, 4);
        const [got] = receiver.received;
        const event = (
          await t.deps.db.kysely
            .selectFrom('events')
            .select('id')
            .where('session_id', '=', created.session_id)
            .executeTakeFirstOrThrow()
        ).id;
        assert.equal(got?.id, event);
        // The outcome is recorded once the receiver has answered: a moment after it read the request.
        await eventually(
          async () => (await deliveriesOf(t, event))[0]?.state === 'delivered',
          10_000,
          'the delivery recorded as delivered',
        );
        const [delivery] = await deliveriesOf(t, event);
        assert.deepEqual(
          delivery?.attempts.map((a) => [a.status_code, a.error]),
          [
            [503, 'the receiver answered 503'],
            [503, 'the receiver answered 503'],
            [503, 'the receiver answered 503'],
            [200, null],
          ],
        );
        for (const a of delivery?.attempts ?? []) assert.ok(a.latency_ms >= 0);
        // Each retry waited at least its place in the schedule (50 ms, then 100 ms).
        const times = delivery?.attempts.map((a) => Number(a.at)) ?? [];
        assert.ok((times[1] as number) - (times[0] as number) >= 50);
        assert.ok((times[2] as number) - (times[1] as number) >= 100);
      } finally {
        await receiver.close();
      }
    });

    test('an event committed while the one before it is failing waits for that one: never delivered first', async () => {
      const m = await t.createMerchant({ name: 'Queue Shop' });
      // The first request is answered 500 after 300 ms: the second event is committed meanwhile.
      const receiver = await Receiver.start({ kind: 'fail-first', times: 1, status: 500, ms: 300 });
      try {
        await register(t, receiver.url, ['group.created'], m.secretKey);
        const first = await createSession({ request: t.request, merchant: m }, { via: 'secret' });
        await eventually(async () => receiver.requests === 1, 5000, 'the first attempt, in flight');
        const second = await createSession({ request: t.request, merchant: m }, { via: 'secret' });
        await eventually(async () => receiver.received.length === 2, 10_000, 'both delivered');
        const idOf = async (sessionId: string) => (await eventRows(t, sessionId))[0]?.id;
        assert.deepEqual(
          receiver.received.map((r) => r.id),
          [await idOf(first.session_id), await idOf(second.session_id)],
          'the failed first event, retried, before the one behind it',
        );
      } finally {
        await receiver.close();
      }
    });

    test('after the last retry a delivery is failed; a 3xx is a failure too', async () => {
      const m = await t.createMerchant({ name: 'Redirect Shop' });
      const receiver = await Receiver.start({ kind: 'status', status: 302 });
      try {
        await register(t, receiver.url, ['group.created'], m.secretKey);
        const created = await createSession({ request: t.request, merchant: m }, { via: 'secret' });
        const [event] = await t.deps.db.kysely
          .selectFrom('events')
          .select('id')
          .where('session_id', '=', created.session_id)
          .execute();
        await eventually(
          async () => (await deliveriesOf(t, event?.id as string))[0]?.state === 'failed',
          10_000,
          'the delivery to fail for good',
        );
        const [delivery] = await deliveriesOf(t, event?.id as string);
        // The first attempt and the five retries of the schedule.
        assert.equal(delivery?.attempts.length, 6);
        assert.ok(delivery?.attempts.every((a) => a.status_code === 302));
        assert.equal(delivery?.next_attempt_at, null);
        assert.equal(receiver.received.length, 0);
      } finally {
        await receiver.close();
      }
    });

    test('100 events produced while the receiver is down wait behind the first, and all arrive in order once it is back', async () => {
      // Its own app: retries spread over seconds, so that the outage ends before the schedule does.
      const app = await startTestApp(dialect, {
        env: { ...FAST, WEBHOOK_RETRY_SCHEDULE: '100ms,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s' },
      });
      const worker = await startDispatcher(app.deps);
      const receiver = await Receiver.start();
      const port = receiver.port;
      try {
        await register(app, receiver.url, ['group.created']);
        await receiver.down();
        const sessions: string[] = [];
        for (let i = 0; i < 100; i++) sessions.push((await createSession(app, { via: 'secret' })).session_id);
        // The URL's queue: its first delivery is retried, and holds the 99 behind it (docs/api.md#webhook-delivery).
        const attempted = () =>
          app.deps.db.kysely
            .selectFrom('deliveries')
            .select(['attempt_count'])
            .where('attempt_count', '>=', 1)
            .execute();
        await eventually(async () => (await attempted()).some((d) => d.attempt_count >= 2), 20_000);
        assert.equal((await attempted()).length, 1, 'only the head of the queue was attempted');
        await receiver.listen(port);
        await eventually(
          async () => new Set(receiver.received.map((r) => r.id)).size === 100,
          20_000,
          '100 events',
        );
        assert.deepEqual(
          receiver.received.map((r) => r.event.data.session_id),
          sessions,
          'every session’s group.created arrived once, in the order the sessions were made',
        );
        await eventually(async () => {
          const states = await app.deps.db.kysely.selectFrom('deliveries').select('state').execute();
          return states.every((d) => d.state === 'delivered');
        });
      } finally {
        await worker.stop();
        await receiver.close();
        await app.close();
      }
    });

    test("a session's events arrive in commit order: group.funded after the last group.share_paid", async () => {
      // Its own app: the pay flow reads the public URLs.
      const app = await startTestApp(dialect, { env: { ...FAST, ...SESSION_ENV } });
      const worker = await startDispatcher(app.deps);
      const receiver = await Receiver.start();
      try {
        await register(app, receiver.url);
        const groups = [];
        for (let i = 0; i < 5; i++) groups.push(await equalGroup(app, ['Ada', 'Ben'], { via: 'secret' }));
        // The last payment of each group commits group.share_paid and group.funded in one transaction.
        await Promise.all(groups.flatMap((g) => g.shares.map((share) => payOk(app, share.shareId))));
        await eventually(async () => receiver.received.length >= 5 * 4, 10_000, '20 events');
        for (const g of groups) {
          const committed = await app.deps.db.kysely
            .selectFrom('events')
            .select('id')
            .where('session_id', '=', g.created.session_id)
            .orderBy('seq')
            .execute();
          const arrived = receiver.received.filter((r) => r.event.data.session_id === g.created.session_id);
          assert.deepEqual(
            arrived.map((r) => r.id),
            committed.map((e) => e.id),
          );
          assert.deepEqual(
            arrived.map((r) => r.event.type),
            ['group.created', 'group.share_paid', 'group.share_paid', 'group.funded'],
          );
        }
      } finally {
        await worker.stop();
        await receiver.close();
        await app.close();
      }
    });

    test('410 disables the endpoint: no more deliveries, and GET /webhooks shows disabled_at', async () => {
      const m = await t.createMerchant({ name: 'Gone Shop' });
      const gone = await Receiver.start({ kind: 'status', status: 410 });
      try {
        const endpoint = await register(t, gone.url, ['*'], m.secretKey);
        const first = await createSession({ request: t.request, merchant: m }, { via: 'secret' });
        await eventually(async () => {
          const row = await t.deps.db.kysely
            .selectFrom('webhook_endpoints')
            .select('disabled_at')
            .where('id', '=', endpoint.id)
            .executeTakeFirstOrThrow();
          return row.disabled_at !== null;
        });
        assert.equal(gone.requests, 1, 'a 410 is not retried');
        const listed = await t.request('GET', '/v1/webhooks', { key: m.secretKey });
        const shown = listed.body.data.find((e: { id: string }) => e.id === endpoint.id);
        assert.ok(shown, listed.text);
        assert.equal(typeof shown.disabled_at, 'string');
        assert.ok(Math.abs(Date.parse(shown.disabled_at) - Date.now()) < 60_000);

        await cancel(t, first.session_id, m.secretKey);
        await createSession({ request: t.request, merchant: m }, { via: 'secret' });
        await new Promise((r) => setTimeout(r, 500));
        assert.equal(gone.requests, 1, 'a disabled endpoint gets nothing new');
      } finally {
        await gone.close();
      }
    });

    test('redeliver sends the event again, with the same webhook-id', async () => {
      const m = await t.createMerchant({ name: 'Again Shop' });
      const receiver = await Receiver.start();
      try {
        await register(t, receiver.url, ['group.created'], m.secretKey);
        await createSession({ request: t.request, merchant: m }, { via: 'secret' });
        await eventually(async () => receiver.received.length === 1);
        const id = receiver.received[0]?.id as string;
        const res = await t.request('POST', `/v1/events/${id}/redeliver`, { key: m.secretKey });
        assert.equal(res.status, 200, res.text);
        await eventually(async () => receiver.received.length === 2);
        assert.equal(receiver.received[1]?.id, id);
        assert.equal(receiver.received[1]?.body, receiver.received[0]?.body, 'the same payload');
      } finally {
        await receiver.close();
      }
    });

    test('two spellings of one URL are one queue: the receiver still gets one delivery at a time', async () => {
      const m = await t.createMerchant({ name: 'Spelling Shop' });
      const receiver = await Receiver.start({ kind: 'slow', ms: 150 });
      try {
        const base = `127.0.0.1:${receiver.port}`;
        // As a merchant may type it: the scheme in capitals, a dot segment, a fragment, an empty query.
        for (const url of [`http://${base}/hooks`, `HTTP://${base}/./hooks#a`, `http://${base}/hooks?`])
          await register(t, url, ['group.created'], m.secretKey);
        const webhookUrl = `http://${base}/x/../hooks#session`;
        for (let i = 0; i < 3; i++)
          await createSession(
            { request: t.request, merchant: m },
            { via: 'secret', extra: { webhook_url: webhookUrl } },
          );
        await eventually(async () => receiver.received.length === 12, 10_000);
        assert.deepEqual(receiver.overlaps, [], 'no request came while another to the same URL was open');
        assert.deepEqual([...new Set(receiver.received.map((r) => r.path))], ['/hooks']);
        const urls = await t.deps.db.kysely
          .selectFrom('deliveries')
          .select('url')
          .distinct()
          .where('merchant_id', '=', m.merchant.id)
          .execute();
        assert.deepEqual(
          urls.map((r) => r.url),
          [`http://${base}/hooks`],
        );
      } finally {
        await receiver.close();
      }
    });

    test('a receiver that never answers does not delay another endpoint’s deliveries', async () => {
      const m = await t.createMerchant({ name: 'Slow Shop' });
      const other = await t.createMerchant({ name: 'Healthy Shop' });
      const hanging = await Receiver.start({ kind: 'hang' });
      const healthy = await Receiver.start();
      try {
        await register(t, hanging.url, ['group.created'], m.secretKey);
        await register(t, healthy.url, ['group.created'], other.secretKey);
        for (let i = 0; i < 5; i++)
          await createSession({ request: t.request, merchant: m }, { via: 'secret' });
        await eventually(async () => hanging.requests >= 1);
        const start = Date.now();
        for (let i = 0; i < 5; i++)
          await createSession({ request: t.request, merchant: other }, { via: 'secret' });
        await eventually(async () => healthy.received.length === 5, 5000);
        const slowest = Math.max(...healthy.received.map((r) => r.at)) - start;
        assert.ok(
          slowest < 900,
          `the healthy endpoint got everything in ${slowest} ms, within the hung one's 1 s timeout`,
        );
        assert.equal(hanging.requests, 1, 'one attempt at a time to the hung receiver');
      } finally {
        await hanging.close();
        await healthy.close();
      }
    });
  });
}

// A queue whose head waits for a retry an hour away: a redelivery asked for is sent now, not in an hour,
// and the queue stays in order (docs/api.md#webhook-delivery).
for (const dialect of DIALECTS) {
  describe(`redelivery behind a waiting retry on ${dialect.name}`, { skip: dialect.skip }, () => {
    let t: TestApp;
    let dispatcher: Loop;
    before(async () => {
      t = await startTestApp(dialect, {
        env: { ...FAST, WEBHOOK_RETRY_SCHEDULE: '1h,1h', WEBHOOK_POLL_INTERVAL_MS: '100' },
      });
      dispatcher = await startDispatcher(t.deps);
    });
    after(async () => {
      await dispatcher?.stop();
      await t?.close();
    });

    test('redeliver tries the URL now: the waiting head, the events behind it, then the redelivery', async () => {
      const m = await t.createMerchant({ name: 'Back Again Shop' });
      const receiver = await Receiver.start({ kind: 'fail-first', times: 1, status: 500 });
      try {
        await register(t, receiver.url, ['group.created'], m.secretKey);
        const first = await createSession({ request: t.request, merchant: m }, { via: 'secret' });
        await eventually(async () => receiver.requests === 1, 5000, 'the first attempt, answered 500');
        const second = await createSession({ request: t.request, merchant: m }, { via: 'secret' });
        const eventOf = async (sessionId: string) => {
          const res = await t.request('GET', `/v1/events?session_id=${sessionId}`, { key: m.secretKey });
          assert.equal(res.status, 200, res.text);
          return (res.body as { data: { id: string }[] }).data[0]?.id as string;
        };
        const [one, two] = [await eventOf(first.session_id), await eventOf(second.session_id)];
        // The second event waits behind the first's retry, an hour away.
        await new Promise((resolve) => setTimeout(resolve, 500));
        assert.equal(receiver.received.length, 0);

        const res = await t.request('POST', `/v1/events/${one}/redeliver`, { key: m.secretKey });
        assert.equal(res.status, 200, res.text);
        await eventually(async () => receiver.received.length === 3, 5000, 'the queue, sent now');
        assert.deepEqual(
          receiver.received.map((r) => r.id),
          [one, two, one],
        );
      } finally {
        await receiver.close();
      }
    });
  });
}
