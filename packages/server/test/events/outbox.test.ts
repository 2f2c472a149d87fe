// The events outbox (docs/api.md#events): every session transition writes exactly one event row, in the same
// transaction as the change, so a change that fails leaves neither the change nor its event.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { recordEvent } from '../../src/events/outbox.ts';
import { closeSession } from '../../src/flows/sessions.ts';
import { ids, sha256 } from '../../src/ids.ts';
import { insertMembers } from '../../src/store/members.ts';
import { findSessionByIdUnscoped, insertSession } from '../../src/store/sessions.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { type ManualClock, manualClock } from '../helpers/clock.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { assertError } from '../helpers/errors.ts';
import { createSession, eventRows, SESSION_ENV, sampleCart } from '../helpers/sessions.ts';

const EVENT_ID = /^evt_[0-9A-Za-z]{17,}$/;

for (const dialect of DIALECTS) {
  describe(`events outbox on ${dialect.name}`, { skip: dialect.skip }, () => {
    let t: TestApp;
    let clock: ManualClock;
    before(async () => {
      clock = manualClock();
      t = await startTestApp(dialect, { env: SESSION_ENV, clock });
    });
    after(() => t?.close());

    const countRows = async (table: 'sessions' | 'members' | 'events', sessionId: string) => {
      const column = table === 'sessions' ? 'id' : 'session_id';
      const rows = await t.deps.db.kysely
        .selectFrom(table)
        .select(column)
        .where(column, '=', sessionId)
        .execute();
      return rows.length;
    };

    test('create, cancel: one event each, in the payload shape of docs/api.md#events', async () => {
      const created = await createSession(t);
      const shown = await t.request('GET', `/v1/sessions/${created.session_id}`, {
        key: t.merchant.secretKey,
      });
      clock.advance(5_000);
      const cancel = await t.request('POST', `/v1/sessions/${created.session_id}/cancel`, {
        key: t.merchant.secretKey,
      });
      assert.equal(cancel.status, 200);

      const events = await eventRows(t, created.session_id);
      assert.equal(events.length, 2);
      const [first, second] = events as [(typeof events)[0], (typeof events)[0]];
      for (const [row, type, status, at] of [
        [first, 'group.created', 'pending', shown.body.created_at],
        [
          second,
          'group.cancelled',
          'cancelled',
          new Date(Date.parse(shown.body.created_at) + 5_000).toISOString(),
        ],
      ] as const) {
        assert.match(row.id, EVENT_ID);
        assert.equal(row.type, type);
        assert.equal(row.merchant_id, t.merchant.merchant.id);
        assert.equal(row.session_id, created.session_id);
        assert.deepEqual(row.payload, {
          id: row.id,
          type,
          timestamp: at,
          data: {
            session_id: created.session_id,
            order_ref: 'ORD-1001',
            status,
            total_cents: 10_000,
            currency: 'usd',
            paid_amount: 0,
            pending_amount: 10_000,
            charges: [],
          },
        });
      }
      assert.notEqual(first.id, second.id);
    });

    test('expire: one group.expired event', async () => {
      const created = await createSession(t, {
        cart: { total: 500, currency: 'jpy', items: [{ name: 'Tea', quantity: 1, unit_price: 500 }] },
      });
      const res = await t.request('POST', `/v1/test_helpers/sessions/${created.session_id}/expire`, {
        key: t.merchant.secretKey,
      });
      assert.equal(res.status, 200);
      const events = await eventRows(t, created.session_id);
      assert.deepEqual(
        events.map((e) => e.type),
        ['group.created', 'group.expired'],
      );
      assert.deepEqual(events[1]?.payload.data, {
        session_id: created.session_id,
        order_ref: null,
        status: 'expired',
        total_cents: 500,
        currency: 'jpy',
        paid_amount: 0,
        pending_amount: 500,
        charges: [],
      });
    });

    test('events of one session in one millisecond read back in the order they happened', async () => {
      // The clock stands still: create and cancel share a timestamp.
      for (let i = 0; i < 12; i++) {
        const created = await createSession(t, { via: 'secret' });
        await t.request('POST', `/v1/sessions/${created.session_id}/cancel`, { key: t.merchant.secretKey });
        assert.deepEqual(
          (await eventRows(t, created.session_id)).map((e) => e.type),
          ['group.created', 'group.cancelled'],
        );
      }
    });

    test('a transaction that fails after recording its event leaves no session and no event', async () => {
      const sessionId = ids.session();
      const now = clock.now();
      const merchantId = t.merchant.merchant.id;
      const cart = sampleCart();
      const organizer = {
        id: ids.member(),
        sessionId,
        merchantId,
        position: 0,
        name: 'Ada',
        email: null,
        amountCents: cart.total,
        basisPoints: null,
        items: null,
        shareId: ids.share(),
        status: 'pending' as const,
        isOrganizer: true,
        lastRemindedAt: null,
        payingAttemptId: null,
        failure: null,
      };
      let recorded = false;
      await assert.rejects(
        t.deps.db.kysely.transaction().execute(async (trx) => {
          const session = {
            id: sessionId,
            merchantId,
            status: 'pending' as const,
            cart,
            currency: cart.currency,
            totalCents: cart.total,
            orderRef: 'ORD-FAIL',
            groupId: ids.group(),
            groupMode: 'equal' as const,
            groupConfig: {
              minSize: 2,
              maxSize: 10,
              defaultMode: 'equal' as const,
              allowedModes: ['equal' as const],
              expiryHours: 48,
              capture: 'immediate' as const,
            },
            groupSetUpAt: null,
            customer: null,
            successUrl: null,
            cancelUrl: null,
            webhookUrl: null,
            embedOrigins: [],
            groupToken: ids.groupToken(),
            merchantFeePpm: 20_100,
            consumerFeePpm: 10_000,
            chargeStep: 1,
            organizerTokenHash: sha256(ids.organizerToken()),
            // A millisecond no other session of this merchant has (created_at is unique per merchant).
            createdAt: now + 7_777,
            updatedAt: now,
            expiresAt: now + 3_600_000,
            closedAt: null,
            fundedAt: null,
            settledAt: null,
            settleAfter: null,
            locale: 'auto' as const,
            mailLocale: 'en' as const,
          };
          const member = { ...organizer, createdAt: now, updatedAt: now };
          await insertSession(trx, session);
          await insertMembers(trx, [member]);
          await recordEvent(t.deps.db.events, trx, 'group.created', { session, paidCents: 0 }, now);
          recorded = true;
          throw new Error('boom after the event');
        }),
        /boom after the event/,
      );
      assert.ok(recorded, 'the event was written inside the transaction');
      assert.equal(await countRows('sessions', sessionId), 0);
      assert.equal(await countRows('members', sessionId), 0);
      assert.equal(await countRows('events', sessionId), 0);
    });

    test('closing a session that is not pending writes no event', async () => {
      const created = await createSession(t);
      assert.ok(await closeSession(t.deps, created.session_id, 'cancelled'));
      assert.equal(await closeSession(t.deps, created.session_id, 'expired'), undefined);
      assert.equal(await closeSession(t.deps, 'gs_unknown00000000000', 'cancelled'), undefined);
      assert.deepEqual(
        (await eventRows(t, created.session_id)).map((e) => e.type),
        ['group.created', 'group.cancelled'],
      );
      assert.equal(await countRows('events', 'gs_unknown00000000000'), 0);
    });

    test('a cancel whose event cannot be written leaves the session pending', async () => {
      const created = await createSession(t);
      const db = t.deps.db.kysely;
      // The database refuses group.cancelled rows: the status change in the same transaction must go too.
      if (dialect.name === 'sqlite') {
        await sql`create trigger refuse_cancelled before insert on events when new.type = 'group.cancelled'
          begin select raise(abort, 'refused by test'); end`.execute(db);
      } else {
        await sql`create function refuse_cancelled() returns trigger language plpgsql as $$
          begin raise exception 'refused by test'; end $$`.execute(db);
        await sql`create trigger refuse_cancelled before insert on events for each row
          when (new.type = 'group.cancelled') execute function refuse_cancelled()`.execute(db);
      }
      try {
        const res = await t.request('POST', `/v1/sessions/${created.session_id}/cancel`, {
          key: t.merchant.secretKey,
        });
        assertError(res, 500, 'internal_error');
        assert.ok(!res.text.includes('refused by test'), 'the database error is not shown');
      } finally {
        if (dialect.name === 'sqlite') await sql`drop trigger refuse_cancelled`.execute(db);
        else {
          await sql`drop trigger refuse_cancelled on events`.execute(db);
          await sql`drop function refuse_cancelled()`.execute(db);
        }
      }
      const shown = await t.request('GET', `/v1/sessions/${created.session_id}`, {
        key: t.merchant.secretKey,
      });
      assert.equal(shown.body.status, 'pending');
      assert.deepEqual(
        (await eventRows(t, created.session_id)).map((e) => e.type),
        ['group.created'],
      );
      // And once the database takes it again, the cancel goes through with its one event.
      const retry = await t.request('POST', `/v1/sessions/${created.session_id}/cancel`, {
        key: t.merchant.secretKey,
      });
      assert.equal(retry.status, 200);
      assert.deepEqual(
        (await eventRows(t, created.session_id)).map((e) => e.type),
        ['group.created', 'group.cancelled'],
      );
    });

    test("a session's events strictly increase in created_at, read by the insert itself", async () => {
      const created = await createSession(t, { via: 'secret' });
      const session = await findSessionByIdUnscoped(t.deps.db.kysely, created.session_id);
      assert.ok(session);
      const [first] = await eventRows(t, session.id);
      assert.ok(first);
      // Events whose time is the first's or earlier come a millisecond after the newest; a later one
      // keeps its own time.
      const times = [first.created_at, first.created_at - 60_000, first.created_at + 5_000];
      for (const at of times)
        await t.deps.db.kysely
          .transaction()
          .execute((trx) =>
            recordEvent(t.deps.db.events, trx, 'group.share_paid', { session, paidCents: 0 }, at),
          );
      assert.deepEqual(
        (await eventRows(t, session.id)).map((e) => e.created_at),
        [first.created_at, first.created_at + 1, first.created_at + 2, first.created_at + 5_000],
      );
    });

    // On SQLite the wake is in-process and harmless on a rollback (store/event-signal.ts); PostgreSQL's
    // NOTIFY, sent by the event's insert itself, must wait for the commit.
    if (dialect.name === 'postgres')
      test('the dispatcher hears of an event when its transaction commits, not when it rolls back', async () => {
        const created = await createSession(t, { via: 'secret' });
        const session = await findSessionByIdUnscoped(t.deps.db.kysely, created.session_id);
        assert.ok(session);
        let heard = 0;
        const stop = await t.deps.db.events.listen(() => heard++);
        const settle = () => new Promise((resolve) => setTimeout(resolve, 150));
        try {
          await settle();
          const before = heard;
          await assert.rejects(
            t.deps.db.kysely.transaction().execute(async (trx) => {
              await recordEvent(
                t.deps.db.events,
                trx,
                'group.share_paid',
                { session, paidCents: 0 },
                clock.now(),
              );
              await settle();
              assert.equal(heard, before, 'nothing is heard before the commit');
              throw new Error('rolled back');
            }),
            /rolled back/,
          );
          await settle();
          assert.equal(heard, before, 'a rolled back event wakes nobody');
          await t.deps.db.kysely
            .transaction()
            .execute((trx) =>
              recordEvent(t.deps.db.events, trx, 'group.share_paid', { session, paidCents: 0 }, clock.now()),
            );
          await settle();
          assert.ok(heard > before, 'a committed event is heard');
        } finally {
          await stop();
        }
      });

    test('a refused create writes no event', async () => {
      const before = (await eventRows(t)).length;
      const res = await t.request('POST', '/v1/sessions', {
        key: t.merchant.publishableKey,
        headers: { origin: 'https://shop.example' },
        body: { cart: sampleCart(), signature: '0'.repeat(64) },
      });
      assertError(res, 400, 'invalid_signature');
      assert.equal((await eventRows(t)).length, before);
    });
  });
}
