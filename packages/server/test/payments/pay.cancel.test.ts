// Paying against a session that closes: cancelled while the card is being charged (the charge goes
// through, and is refunded in full before the session's closing event), and pays that come after the
// session closed or passed its expires_at (refused before anything is claimed or charged).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { settleSession } from '../../src/flows/settle.ts';
import type { PaymentProcessor } from '../../src/processor/types.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { HOUR_MS, manualClock } from '../helpers/clock.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { assertError } from '../helpers/errors.ts';
import { entriesOf, madeOf, memberMoney, sessionEventTypes } from '../helpers/money-rows.ts';
import { equalGroup, merchantSession, pay, type Share } from '../helpers/payments.ts';
import { assertReconciled } from '../helpers/reconcile.ts';
import { SESSION_ENV } from '../helpers/sessions.ts';

/** A charge the test holds at the card network until it lets it go. */
interface Hold {
  /** Resolves once a charge is waiting. */
  reached: Promise<void>;
  release(): void;
}

for (const dialect of DIALECTS) {
  describe(`paying a session that closes, on ${dialect.name}`, { skip: dialect.skip }, () => {
    let t: TestApp;
    let hold: (Hold & { arrive(): void; released: Promise<void> }) | undefined;

    const holdNextCharge = (): Hold => {
      let arrive = () => {};
      let release = () => {};
      const reached = new Promise<void>((resolve) => {
        arrive = resolve;
      });
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      hold = { reached, release, arrive, released };
      return hold;
    };

    before(async () => {
      t = await startTestApp(dialect, {
        env: SESSION_ENV,
        wrapProcessor: (processor: PaymentProcessor): PaymentProcessor => ({
          ...processor,
          charge: async (request) => {
            const h = hold;
            hold = undefined;
            if (h) {
              h.arrive();
              await h.released;
            }
            return processor.charge(request);
          },
        }),
      });
    });
    after(() => t?.close());

    const sandboxCount = async () =>
      Number(
        (
          await t.deps.db.kysely
            .selectFrom('sandbox_operations')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );

    test('cancelled while the card is charged: the payment stands (200, never a 409 that says nothing was charged), is refunded in full, then group.cancelled', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben']);
      const sessionId = g.created.session_id;
      const ada = g.shares[0] as Share;
      const h = holdNextCharge();
      const paying = pay(t, ada.shareId);
      await h.reached;

      const cancel = await t.request('POST', `/v1/sessions/${sessionId}/cancel`, {
        key: t.merchant.secretKey,
      });
      assert.equal(cancel.status, 200, cancel.text);
      assert.equal(cancel.body.status, 'cancelled');
      // Nothing is settled while the payment is in flight: no closing event yet.
      assert.ok(!(await sessionEventTypes(t.deps.db.kysely, sessionId)).includes('group.cancelled'));

      h.release();
      const res = await paying;
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.status, 'paid', 'the share as the payment left it');
      assert.equal(res.body.session_status, 'cancelled', 'and why it is being returned');
      assert.equal(res.body.payment.amount_cents, ada.due);

      // The settling worker's turn (whatever the payment's request already did).
      await settleSession(t.deps, sessionId);
      const view = await merchantSession(t, sessionId);
      assert.equal(view.status, 'cancelled');
      assert.deepEqual(
        view.group.members.map((m: { status: string }) => m.status),
        ['refunded', 'pending'],
      );
      assert.equal(view.refunds.length, 1, JSON.stringify(view.refunds));
      assert.deepEqual(
        {
          member: view.refunds[0].member_id,
          amount: view.refunds[0].amount_cents,
          status: view.refunds[0].status,
        },
        { member: ada.id, amount: ada.due, status: 'succeeded' },
        'the share and the consumer fee, refunded',
      );
      assert.ok(ada.due > ada.amount, 'the full amount includes the consumer fee');

      const money = await memberMoney(t.deps.db.kysely, sessionId, ada.id);
      assert.equal(money.status, 'refunded');
      assert.equal(money.payingAttemptId, null);
      const charges = madeOf(money.sandbox, 'charge');
      const refunds = madeOf(money.sandbox, 'refund');
      assert.equal(charges.length, 1, 'charged once');
      assert.deepEqual(
        refunds.map((r) => [r.id, r.amountCents]),
        [[view.refunds[0].id, ada.due]],
        'refunded once, in full',
      );
      assert.equal(entriesOf(money.ledger, 'charge').length, 1);
      assert.equal(entriesOf(money.ledger, 'refund').length, 1);
      const card = money.ledger
        .filter((l) => l.account === 'payer_cards')
        .reduce((s, l) => s + l.amountCents, 0);
      assert.equal(card, 0, 'the card is whole again');

      const events = await sessionEventTypes(t.deps.db.kysely, sessionId);
      assert.equal(events.filter((e) => e === 'group.share_refunded').length, 1, events.join(','));
      assert.equal(events.filter((e) => e === 'group.cancelled').length, 1, events.join(','));
      assert.equal(events.at(-1), 'group.cancelled', `closing event last: ${events.join(',')}`);
      assert.ok(events.indexOf('group.share_refunded') < events.indexOf('group.cancelled'));
    });

    test('a pay of a cancelled session: 409, no attempt, nothing at the processor', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben']);
      const sessionId = g.created.session_id;
      const cancel = await t.request('POST', `/v1/sessions/${sessionId}/cancel`, {
        key: t.merchant.secretKey,
      });
      assert.equal(cancel.status, 200, cancel.text);
      const before = await sandboxCount();
      const res = await pay(t, (g.shares[0] as Share).shareId);
      assertError(res, 409, 'session_not_pending');
      assert.match(res.body.error, /cancelled/);
      const money = await memberMoney(t.deps.db.kysely, sessionId, (g.shares[0] as Share).id);
      assert.deepEqual([money.status, money.attempts.length, money.sandbox.length], ['pending', 0, 0]);
      assert.equal(await sandboxCount(), before, 'no sandbox object');
    });

    test('a pay of an expired session: 409, no attempt, nothing at the processor', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben']);
      const sessionId = g.created.session_id;
      const expire = await t.request('POST', `/v1/test_helpers/sessions/${sessionId}/expire`, {
        key: t.merchant.secretKey,
      });
      assert.equal(expire.status, 200, expire.text);
      const before = await sandboxCount();
      const res = await pay(t, (g.shares[1] as Share).shareId);
      assertError(res, 409, 'session_not_pending');
      assert.match(res.body.error, /expired/);
      const money = await memberMoney(t.deps.db.kysely, sessionId, (g.shares[1] as Share).id);
      assert.deepEqual([money.status, money.attempts.length, money.sandbox.length], ['pending', 0, 0]);
      assert.equal(await sandboxCount(), before, 'no sandbox object');
    });

    test('reconcile is clean after the suite: ledger, statuses and processor agree', async () => {
      await assertReconciled(t);
    });
  });

  describe(`paying past expires_at (before the sweeper), on ${dialect.name}`, { skip: dialect.skip }, () => {
    const clock = manualClock();
    let t: TestApp;
    before(async () => {
      t = await startTestApp(dialect, { env: SESSION_ENV, clock });
    });
    after(() => t?.close());

    test('409 session_not_pending, no attempt, nothing at the processor', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben']);
      const sessionId = g.created.session_id;
      clock.set(Date.parse(g.created.expires_at) + HOUR_MS);
      const res = await pay(t, (g.shares[0] as Share).shareId);
      assertError(res, 409, 'session_not_pending');
      assert.equal(res.body.error, 'The session has expired.');
      // Still pending in the database: no sweeper runs in a test app. The pay was refused on the time alone.
      const row = await t.deps.db.kysely
        .selectFrom('sessions')
        .select('status')
        .where('id', '=', sessionId)
        .executeTakeFirstOrThrow();
      assert.equal(row.status, 'pending');
      const money = await memberMoney(t.deps.db.kysely, sessionId, (g.shares[0] as Share).id);
      assert.deepEqual([money.status, money.attempts.length, money.sandbox.length], ['pending', 0, 0]);
      const all = await t.deps.db.kysely.selectFrom('sandbox_operations').select('idempotency_key').execute();
      assert.deepEqual(all, [], 'no sandbox object at all');
    });

    test('reconcile is clean after the suite: ledger, statuses and processor agree', async () => {
      await assertReconciled(t);
    });
  });
}
