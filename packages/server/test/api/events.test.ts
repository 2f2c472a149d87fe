// The events API (docs/api.md#events-api) and endpoint secret rotation over HTTP: paging that never skips or
// repeats (events of one millisecond included), the type and session_id filters, refusals in the documented
// shape, another merchant's events out of reach, an event's deliveries with every attempt, redelivery, and
// rotate_secret answering its new secret once (a replay of the same Idempotency-Key answers the same).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ids } from '../../src/ids.ts';
import { startDispatcher } from '../../src/jobs/dispatcher.ts';
import type { Loop } from '../../src/jobs/loop.ts';
import { insertEvent } from '../../src/store/events.ts';
import { RELAXED_LIMITS, startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { assertError } from '../helpers/errors.ts';
import { eventually } from '../helpers/payments.ts';
import { Receiver } from '../helpers/receiver.ts';
import { createSession } from '../helpers/sessions.ts';

const ENV = {
  ...RELAXED_LIMITS,
  WEBHOOK_RETRY_SCHEDULE: '50ms,50ms,50ms',
  WEBHOOK_TIMEOUT_MS: '1000',
  WEBHOOK_POLL_INTERVAL_MS: '100',
};

for (const dialect of DIALECTS) {
  describe(`events API on ${dialect.name}`, { skip: dialect.skip }, () => {
    let t: TestApp;
    let dispatcher: Loop;
    before(async () => {
      t = await startTestApp(dialect, { env: ENV });
      dispatcher = await startDispatcher(t.deps);
    });
    after(async () => {
      await dispatcher?.stop();
      await t?.close();
    });

    const get = (m: TestMerchant, path: string) => t.request('GET', `/v1${path}`, { key: m.secretKey });
    const as = (m: TestMerchant) => ({ request: t.request, merchant: m });

    /** Every event of the merchant, page by page with `limit`; fails on a repeat. */
    async function readAll(
      m: TestMerchant,
      limit: number,
      filter = '',
    ): Promise<{ id: string; type: string }[]> {
      const all: { id: string; type: string }[] = [];
      let cursor: string | null = null;
      for (let pages = 0; pages < 100; pages++) {
        const res = await get(m, `/events?limit=${limit}${filter}${cursor ? `&cursor=${cursor}` : ''}`);
        assert.equal(res.status, 200, res.text);
        assert.ok(res.body.data.length <= limit);
        all.push(...res.body.data);
        assert.equal(res.body.has_more, res.body.next_cursor !== null);
        if (!res.body.has_more) return all;
        cursor = res.body.next_cursor;
        assert.match(cursor as string, /^evt_/);
      }
      throw new Error('more than 100 pages');
    }

    test('pages newest first, never skipping or repeating, even within one millisecond', async () => {
      const m = await t.createMerchant({ name: 'Paging Shop' });
      const sessions: { session_id: string }[] = [];
      for (let i = 0; i < 3; i++) sessions.push(await createSession(as(m), { via: 'secret' }));
      // Five events in one millisecond: outbox rows as another session's transitions would write them.
      const at = Date.now() + 60_000;
      const sameMs: string[] = [];
      await t.deps.db.kysely.transaction().execute(async (trx) => {
        for (let i = 0; i < 5; i++) {
          const id = ids.event();
          sameMs.push(id);
          const payload = {
            id,
            type: 'group.share_paid',
            timestamp: new Date(at).toISOString(),
            data: {
              session_id: sessions[0]?.session_id,
              order_ref: null,
              status: 'pending',
              total_cents: 100,
              currency: 'USD',
              paid_amount: 0,
              pending_amount: 100,
              charges: [],
            },
          };
          await insertEvent(trx, {
            id,
            merchantId: m.merchant.id,
            sessionId: sessions[0]?.session_id as string,
            type: 'group.share_paid',
            payload: JSON.stringify(payload),
            createdAt: at,
          });
        }
      });
      const whole = await readAll(m, 100);
      assert.equal(whole.length, 8);
      assert.deepEqual(new Set(whole.slice(0, 5).map((e) => e.id)), new Set(sameMs), 'newest first');
      assert.deepEqual(
        whole.slice(5).map((e) => e.type),
        ['group.created', 'group.created', 'group.created'],
      );
      for (const limit of [1, 2, 3]) {
        const paged = await readAll(m, limit);
        assert.deepEqual(
          paged.map((e) => e.id),
          whole.map((e) => e.id),
          `limit ${limit}`,
        );
      }
      const [first] = whole;
      const event = await get(m, `/events/${first?.id}`);
      assert.equal(event.status, 200, event.text);
      assert.deepEqual(event.body.deliveries, [], 'no target: no delivery');
    });

    test('filters by type and by session', async () => {
      const m = await t.createMerchant({ name: 'Filter Shop' });
      const a = await createSession(as(m), { via: 'secret' });
      const b = await createSession(as(m), { via: 'secret' });
      const cancelled = await t.request('POST', `/v1/sessions/${a.session_id}/cancel`, { key: m.secretKey });
      assert.equal(cancelled.status, 200, cancelled.text);
      const ofA = await readAll(m, 10, `&session_id=${a.session_id}`);
      assert.deepEqual(
        ofA.map((e) => e.type),
        ['group.cancelled', 'group.created'],
      );
      const created = await readAll(m, 1, '&type=group.created');
      assert.deepEqual(
        new Set(created.map((e) => (e as { data?: { session_id: string } }).data?.session_id)),
        new Set([a.session_id, b.session_id]),
      );
      const both = await readAll(m, 10, `&type=group.cancelled&session_id=${b.session_id}`);
      assert.deepEqual(both, []);
    });

    test('bad queries are 400 in the documented shape', async () => {
      const m = t.merchant;
      for (const [query, message] of [
        ['limit=0', /limit/],
        ['limit=101', /limit/],
        ['limit=abc', /limit/],
        ['limit=1e1', /decimal digits/],
        ['type=group.paid', /type/],
        ['cursor=garbage', /cursor/],
        [`cursor=${ids.event()}`, /cursor must be the next_cursor of a previous page/],
        ['colour=red', /colour/],
        ['session_id=', /session_id/],
        ['session_id=sess_1', /session_id/],
      ] as const) {
        const res = await get(m, `/events?${query}`);
        assertError(res, 400, 'invalid_request');
        assert.match(res.body.error, message, query);
      }
    });

    test('another merchant’s events are not listed, and are 404', async () => {
      const mine = await t.createMerchant({ name: 'Mine' });
      const theirs = await t.createMerchant({ name: 'Theirs' });
      await createSession(as(theirs), { via: 'secret' });
      const [event] = await readAll(theirs, 10);
      assert.ok(event);
      assert.deepEqual(await readAll(mine, 10), []);
      assertError(await get(mine, `/events/${event.id}`), 404, 'event_not_found');
      assertError(
        await t.request('POST', `/v1/events/${event.id}/redeliver`, { key: mine.secretKey }),
        404,
        'event_not_found',
      );
      assertError(
        await t.request('GET', `/v1/events/${event.id}`, { key: theirs.publishableKey }),
        403,
        'secret_key_required',
      );
      assertError(await get(mine, '/events/evt_doesNotExist'), 404, 'event_not_found');
    });

    test('an event shows each delivery with every attempt; redeliver adds one, and replays', async () => {
      const m = await t.createMerchant({ name: 'Deliveries Shop' });
      const receiver = await Receiver.start({ kind: 'fail-first', times: 1, status: 503 });
      try {
        const hook = await t.request('POST', '/v1/webhooks', {
          key: m.secretKey,
          body: { url: receiver.url, events: ['group.created'] },
        });
        assert.equal(hook.status, 200, hook.text);
        const created = await createSession(as(m), { via: 'secret', extra: { webhook_url: receiver.url } });
        const [listed] = await readAll(m, 10, `&session_id=${created.session_id}`);
        assert.ok(listed);
        await eventually(async () => {
          const res = await get(m, `/events/${listed.id}`);
          const deliveries: { state: string }[] = res.body.deliveries ?? [];
          return deliveries.length === 2 && deliveries.every((d) => d.state === 'delivered');
        });
        const res = await get(m, `/events/${listed.id}`);
        assert.equal(res.body.id, listed.id);
        assert.equal(res.body.type, 'group.created');
        assert.equal(res.body.data.session_id, created.session_id);
        assert.equal(res.body.deliveries.length, 2);
        const byTarget = new Map(
          res.body.deliveries.map((d: { webhook_id: string | null }) => [d.webhook_id, d]),
        );
        assert.deepEqual(new Set(byTarget.keys()), new Set([hook.body.id, null]));
        const attempts = res.body.deliveries.flatMap((d: { attempts: unknown[] }) => d.attempts);
        // The receiver failed the very first request only: one delivery took two attempts.
        assert.equal(attempts.length, 3);
        const failed = attempts.filter((a: { status_code: number }) => a.status_code === 503);
        assert.equal(failed.length, 1);
        assert.equal(failed[0].error, 'the receiver answered 503');
        for (const d of res.body.deliveries) {
          assert.match(d.id, /^dlv_/);
          assert.equal(d.url, receiver.url);
          assert.equal(d.next_attempt_at, null);
          assert.ok(Date.parse(d.created_at) > 0);
          const last = d.attempts.at(-1);
          assert.equal(last.status_code, 200);
          assert.equal(last.error, null);
          assert.ok(Number.isInteger(last.latency_ms) && last.latency_ms >= 0);
          assert.ok(Math.abs(Date.parse(last.at) - Date.now()) < 60_000);
        }

        const before = receiver.received.length;
        const key = `redeliver-${ids.event()}`;
        const again = await t.request('POST', `/v1/events/${listed.id}/redeliver`, {
          key: m.secretKey,
          headers: { 'Idempotency-Key': key },
        });
        assert.equal(again.status, 200, again.text);
        assert.equal(again.body.deliveries.length, 4, 'two fresh deliveries beside the first two');
        assert.equal(again.body.deliveries.filter((d: { state: string }) => d.state === 'pending').length, 2);
        await eventually(async () => receiver.received.length === before + 2);
        assert.ok(receiver.received.slice(before).every((r) => r.id === listed.id));
        const replay = await t.request('POST', `/v1/events/${listed.id}/redeliver`, {
          key: m.secretKey,
          headers: { 'Idempotency-Key': key },
        });
        assert.equal(replay.text, again.text, 'a replay answers the same bytes and delivers nothing more');
        assert.equal(replay.headers.get('idempotent-replayed'), 'true');
        await new Promise((r) => setTimeout(r, 300));
        assert.equal(receiver.received.length, before + 2);
      } finally {
        await receiver.close();
      }
    });

    test('rotate_secret answers a new secret once; a replay answers the same one', async () => {
      const m = await t.createMerchant({ name: 'Rotate Shop' });
      const hook = await t.request('POST', '/v1/webhooks', {
        key: m.secretKey,
        body: { url: 'https://hooks.example/rotate', events: ['*'] },
      });
      const key = `rotate-${ids.event()}`;
      const rotate = () =>
        t.request('POST', `/v1/webhooks/${hook.body.id}/rotate_secret`, {
          key: m.secretKey,
          headers: { 'Idempotency-Key': key },
        });
      const res = await rotate();
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(Object.keys(res.body).sort(), ['id', 'request_id', 'secret']);
      assert.equal(res.body.id, hook.body.id);
      assert.match(res.body.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
      assert.notEqual(res.body.secret, hook.body.secret);
      const replay = await rotate();
      assert.equal(replay.text, res.text);
      const fresh = await t.request('POST', `/v1/webhooks/${hook.body.id}/rotate_secret`, {
        key: m.secretKey,
      });
      assert.notEqual(fresh.body.secret, res.body.secret, 'a new key rotates again');
      const listed = await t.request('GET', '/v1/webhooks', { key: m.secretKey });
      assert.ok(!listed.text.includes('whsec_'), 'secrets are never listed');

      const other = await t.createMerchant({ name: 'Not Yours' });
      assertError(
        await t.request('POST', `/v1/webhooks/${hook.body.id}/rotate_secret`, { key: other.secretKey }),
        404,
        'webhook_not_found',
      );
      const deleted = await t.request('DELETE', `/v1/webhooks/${hook.body.id}`, { key: m.secretKey });
      assert.equal(deleted.status, 200, deleted.text);
      assertError(
        await t.request('POST', `/v1/webhooks/${hook.body.id}/rotate_secret`, { key: m.secretKey }),
        404,
        'webhook_not_found',
      );
      const withBody = await t.request('POST', `/v1/webhooks/${hook.body.id}/rotate_secret`, {
        key: m.secretKey,
        body: { secret: 'whsec_mine' },
      });
      assertError(withBody, 400, 'invalid_request');
    });
  });
}
