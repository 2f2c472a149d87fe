// Disputes and refunds that fail, in the sandbox (docs/api.md#disputes, docs/operations.md#a-refund-failed):
// card 4000000000000259 is charged and a dispute opens on it a few seconds later; card 4000000000005126's
// refunds are taken, then fail. Each is recorded once through the record path, with its ledger lines and
// its event delivered signed to the merchant's endpoint, and reconcile stays clean.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { verifyWebhook } from '@group-checkout/node';
import { handleDueProcessorEvents } from '../../src/flows/processor-events.ts';
import { reconcile } from '../../src/flows/reconcile.ts';
import { startDispatcher } from '../../src/jobs/dispatcher.ts';
import type { Loop } from '../../src/jobs/loop.ts';
import { settleDueSessions } from '../../src/jobs/settle.ts';
import { insertDispute } from '../../src/store/disputes.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { manualClock } from '../helpers/clock.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { assertError } from '../helpers/errors.ts';
import { CARDS, disputeEvent, equalGroup, eventually, merchantSession, payOk } from '../helpers/payments.ts';
import { Receiver } from '../helpers/receiver.ts';
import { assertReconciled } from '../helpers/reconcile.ts';
import { eventRows, SESSION_ENV } from '../helpers/sessions.ts';

/** A delivered event as the merchant reads it. */
interface DeliveredEvent {
  type: string;
  // biome-ignore lint/suspicious/noExplicitAny: the event's data as JSON
  data: Record<string, any>;
}

for (const dialect of DIALECTS) {
  describe(`disputes and failed refunds in the sandbox on ${dialect.name}`, { skip: dialect.skip }, () => {
    const clock = manualClock(Date.now());
    let t: TestApp;
    let receiver: Receiver;
    let endpointSecret: string;
    let dispatcher: Loop;
    before(async () => {
      t = await startTestApp(dialect, { clock, env: { ...SESSION_ENV, WEBHOOK_POLL_INTERVAL_MS: '100' } });
      receiver = await Receiver.start();
      const endpoint = await t.request('POST', '/v1/webhooks', {
        key: t.merchant.secretKey,
        body: {
          url: receiver.url,
          events: ['group.share_disputed', 'group.share_dispute_closed', 'group.share_refund_failed'],
        },
      });
      assert.equal(endpoint.status, 200, endpoint.text);
      endpointSecret = endpoint.body.secret;
      dispatcher = await startDispatcher(t.deps);
    });
    after(async () => {
      await dispatcher?.stop();
      await receiver?.close();
      await t?.close();
    });

    /** The events of `type` the receiver got, verified with the endpoint's secret. */
    const received = (type: string) =>
      receiver.received
        .filter((r) => r.event.type === type)
        .map((r) => verifyWebhook<DeliveredEvent>(r.body, r.headers, endpointSecret));
    const ledger = async (sessionId: string, account: string) =>
      (
        await t.deps.db.kysely
          .selectFrom('ledger_lines')
          .select('amount_cents')
          .where('session_id', '=', sessionId)
          .where('account', '=', account)
          .execute()
      ).reduce((sum, l) => sum + l.amount_cents, 0);

    test('4000000000000259: charged, then a dispute opens; closed lost, then another closed won', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben']);
      const ben = g.shares[1];
      const paid = await payOk(t, ben.shareId, CARDS.disputed);
      assert.equal(paid.body.status, 'paid');
      await handleDueProcessorEvents(t.deps);
      assert.deepEqual(
        (await merchantSession(t, g.created.session_id)).disputes,
        [],
        'not before a few seconds',
      );
      clock.advance(3_000);
      assert.equal(await handleDueProcessorEvents(t.deps), 1);
      const view = await merchantSession(t, g.created.session_id);
      assert.equal(view.disputes.length, 1);
      const [dispute] = view.disputes;
      assert.match(dispute.id, /^dp_/);
      assert.deepEqual(
        { ...dispute, id: undefined },
        {
          id: undefined,
          member_id: ben.id,
          amount_cents: ben.due,
          reason: 'fraudulent',
          status: 'needs_response',
        },
      );
      assert.equal(view.group.members[1].status, 'paid', 'a disputed share stays paid');
      assert.equal(await ledger(g.created.session_id, 'disputes'), -ben.due, 'the amount held back');
      await assertReconciled(t);

      await eventually(
        async () => received('group.share_disputed').length === 1,
        10_000,
        'group.share_disputed',
      );
      const [opened] = received('group.share_disputed');
      assert.equal(opened?.data.session_id, g.created.session_id);
      assert.equal(opened?.data.member.id, ben.id);
      assert.deepEqual(opened?.data.dispute, dispute);

      const closed = await t.request('POST', `/v1/test_helpers/disputes/${dispute.id}/close`, {
        key: t.merchant.secretKey,
        body: { status: 'lost' },
      });
      assert.equal(closed.status, 200, closed.text);
      assert.equal(closed.body.status, 'lost');
      assert.equal((await merchantSession(t, g.created.session_id)).disputes[0].status, 'lost');
      assert.equal(await ledger(g.created.session_id, 'disputes'), 0);
      assert.equal(await ledger(g.created.session_id, 'dispute_losses'), -ben.due);
      await eventually(async () => received('group.share_dispute_closed').length === 1);
      assert.equal(received('group.share_dispute_closed')[0]?.data.dispute.status, 'lost');
      assertError(
        await t.request('POST', `/v1/test_helpers/disputes/${dispute.id}/close`, {
          key: t.merchant.secretKey,
          body: { status: 'won' },
        }),
        409,
        'dispute_not_open',
      );
      await assertReconciled(t);

      // Won: the money held back comes back.
      const h = await equalGroup(t, ['Ann', 'Bo']);
      await payOk(t, h.shares[0].shareId, CARDS.disputed);
      clock.advance(3_000);
      await handleDueProcessorEvents(t.deps);
      const [second] = (await merchantSession(t, h.created.session_id)).disputes;
      const won = await t.request('POST', `/v1/test_helpers/disputes/${second.id}/close`, {
        key: t.merchant.secretKey,
        body: { status: 'won' },
      });
      assert.equal(won.body.status, 'won');
      assert.equal(await ledger(h.created.session_id, 'disputes'), 0);
      assert.equal(await ledger(h.created.session_id, 'dispute_losses'), 0);
      await assertReconciled(t);
    });

    /** A group of two whose second share is paid with the disputed card, its dispute open. */
    const disputedGroup = async () => {
      const g = await equalGroup(t, ['Ada', 'Ben']);
      const ben = g.shares[1];
      await payOk(t, ben.shareId, CARDS.disputed);
      clock.advance(3_000);
      assert.equal(await handleDueProcessorEvents(t.deps), 1);
      const [dispute] = (await merchantSession(t, g.created.session_id)).disputes;
      assert.equal(dispute.status, 'needs_response');
      return { g, ben, dispute };
    };
    const types = async (sessionId: string) => (await eventRows(t, sessionId)).map((e) => e.type);
    const closeDispute = async (id: string, status: 'won' | 'lost') => {
      const res = await t.request('POST', `/v1/test_helpers/disputes/${id}/close`, {
        key: t.merchant.secretKey,
        body: { status },
      });
      assert.equal(res.status, 200, res.text);
    };

    test('a cancelled session does not refund a payment under dispute: lost, the bank returned it; won, the refund follows', async () => {
      for (const outcome of ['lost', 'won'] as const) {
        const { g, ben, dispute } = await disputedGroup();
        const sid = g.created.session_id;
        const cancelled = await t.request('POST', `/v1/sessions/${sid}/cancel`, {
          key: t.merchant.secretKey,
        });
        assert.equal(cancelled.status, 200, cancelled.text);
        // The payer's bank is returning the money through the dispute: a refund would return it twice.
        assert.deepEqual(cancelled.body.refunds, [], outcome);
        let view = await merchantSession(t, sid);
        assert.equal(view.status, 'cancelled');
        assert.equal(view.group.members[1].status, 'paid');
        assert.deepEqual(view.refunds, []);
        assert.equal((await types(sid)).filter((type) => type === 'group.cancelled').length, 1, 'closed');
        await assertReconciled(t);

        await closeDispute(dispute.id, outcome);
        clock.advance(1_000);
        await settleDueSessions(t.deps);
        view = await merchantSession(t, sid);
        const refunded = (await types(sid)).filter((type) => type === 'group.share_refunded');
        if (outcome === 'lost') {
          // The bank gave the payer their money back for good: nothing more of ours.
          assert.equal(view.group.members[1].status, 'paid');
          assert.deepEqual(view.refunds, []);
          assert.equal(refunded.length, 0);
          assert.equal(await ledger(sid, 'dispute_losses'), -ben.due);
        } else {
          // The merchant won: the money is back with us, and the payer of a cancelled order is refunded.
          assert.equal(view.group.members[1].status, 'refunded');
          assert.equal(view.refunds.length, 1);
          assert.equal(view.refunds[0].member_id, ben.id);
          assert.equal(view.refunds[0].status, 'succeeded');
          assert.equal(view.refunds[0].amount_cents, ben.due);
          assert.equal(refunded.length, 1);
        }
        assert.equal((await types(sid)).filter((type) => type === 'group.cancelled').length, 1);
        await assertReconciled(t);
      }
    });

    test('reconcile names a payment both refunded and lost to a dispute: returned twice', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben']);
      const ben = g.shares[1];
      await payOk(t, ben.shareId);
      const sid = g.created.session_id;
      const cancelled = await t.request('POST', `/v1/sessions/${sid}/cancel`, { key: t.merchant.secretKey });
      assert.equal(cancelled.body.refunds[0].status, 'succeeded', cancelled.text);
      // A lost dispute on the refunded charge, as data written before disputes held refunds back would be.
      const charge = await t.deps.db.kysely
        .selectFrom('attempts')
        .selectAll()
        .where('member_id', '=', ben.id)
        .where('kind', '=', 'charge')
        .executeTakeFirstOrThrow();
      await t.deps.db.kysely.transaction().execute((trx) =>
        insertDispute(trx, {
          id: 'dp_twice',
          merchantId: t.merchant.merchant.id,
          sessionId: sid,
          memberId: ben.id,
          attemptId: charge.id,
          amountCents: charge.amount_cents,
          currency: charge.currency,
          reason: 'fraudulent',
          status: 'lost',
          createdAt: clock.now(),
          updatedAt: clock.now(),
          closedAt: clock.now(),
        }),
      );
      const report = await reconcile(t.deps);
      const twice = report.mismatches.filter(
        (m) => m.kind === 'status_mismatch' && /back twice/.test(m.detail),
      );
      assert.equal(twice.length, 1, JSON.stringify(report.mismatches));
      assert.equal(twice[0]?.session_id, sid);
      assert.match(twice[0]?.detail as string, /dispute dp_twice was lost/);
      await t.deps.db.kysely.deleteFrom('disputes').where('id', '=', 'dp_twice').execute();
      await assertReconciled(t);
    });

    test("closing a dispute: another merchant's is 404, an unknown one 404, a bad status 400", async () => {
      const other = await t.createMerchant({ name: 'Other Shop' });
      const g = await equalGroup(t, ['Ada', 'Ben']);
      await payOk(t, g.shares[1].shareId, CARDS.disputed);
      clock.advance(3_000);
      await handleDueProcessorEvents(t.deps);
      const [dispute] = (await merchantSession(t, g.created.session_id)).disputes;
      const close = (key: string, body: unknown, id = dispute.id) =>
        t.request('POST', `/v1/test_helpers/disputes/${id}/close`, { key, body });
      assertError(await close(other.secretKey, { status: 'won' }), 404, 'dispute_not_found');
      assertError(
        await close(t.merchant.secretKey, { status: 'won' }, 'dp_nothing'),
        404,
        'dispute_not_found',
      );
      assertError(await close(t.merchant.secretKey, { status: 'maybe' }), 400, 'invalid_request');
      assertError(await close(t.merchant.publishableKey, { status: 'won' }), 403, 'secret_key_required');
      assert.equal((await merchantSession(t, g.created.session_id)).disputes[0].status, 'needs_response');
    });

    test('4000000000005126: the refund is taken, then fails; the member is paid again, not retried, reconcile clean', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben']);
      const ben = g.shares[1];
      await payOk(t, ben.shareId, CARDS.refundsFail);
      const cancelled = await t.request('POST', `/v1/sessions/${g.created.session_id}/cancel`, {
        key: t.merchant.secretKey,
      });
      assert.equal(cancelled.status, 200, cancelled.text);
      // Taken, as Stripe takes a card refund: pending until the processor says how it ended.
      assert.equal(cancelled.body.refunds[0].status, 'pending', 'the processor took the refund, pending');
      assert.match(cancelled.body.refunds[0].id, /^re_/);
      const taken = await merchantSession(t, g.created.session_id);
      assert.equal(taken.refunds[0].status, 'pending');
      assert.equal(taken.group.members[1].status, 'refunded', 'the refund is on its way to the card');
      await assertReconciled(t);

      clock.advance(2_000);
      assert.equal(await handleDueProcessorEvents(t.deps), 1);
      const view = await merchantSession(t, g.created.session_id);
      assert.equal(view.status, 'cancelled');
      assert.equal(view.group.members[1].status, 'paid', 'the money is back with us');
      assert.equal(view.refunds.length, 1);
      assert.equal(view.refunds[0].status, 'failed');
      assert.equal(view.refunds[0].failure_reason, 'expired_or_canceled_card');
      assert.match(view.refunds[0].id, /^re_/);
      const share = await t.request('GET', `/api/v1/shares/${ben.shareId}`);
      assert.match(share.body.failure, /could not reach your card/);
      await assertReconciled(t);
      // Delivered before the clock moves on an hour: a delivery signed an hour ahead would not verify.
      await eventually(async () => received('group.share_refund_failed').length === 1);

      // Not tried again by itself: an operator decides.
      clock.advance(3_600_000);
      await settleDueSessions(t.deps);
      assert.equal((await merchantSession(t, g.created.session_id)).refunds[0].status, 'failed');
      const types = (await eventRows(t, g.created.session_id)).map((e) => e.type);
      assert.deepEqual(types, [
        'group.created',
        'group.share_paid',
        'group.share_refunded',
        'group.cancelled',
        'group.share_refund_failed',
      ]);
      await eventually(async () => received('group.share_refund_failed').length === 1);
      const [failed] = received('group.share_refund_failed');
      assert.equal(failed?.data.member.id, ben.id);
      assert.deepEqual(failed?.data.refund, view.refunds[0]);
      await assertReconciled(t);
    });
    test('a dispute lost for part of a payment of a cancelled session: the rest is refunded, and the books balance', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben']);
      const ben = g.shares[1];
      const paid = await payOk(t, ben.shareId);
      const sid = g.created.session_id;
      const dispute = { id: 'dp_part', paymentId: paid.body.payment.id, amountCents: 1_000, currency: 'usd' };
      await disputeEvent(t, dispute, 'needs_response');
      const cancelled = await t.request('POST', `/v1/sessions/${sid}/cancel`, { key: t.merchant.secretKey });
      assert.equal(cancelled.status, 200, cancelled.text);
      assert.deepEqual(cancelled.body.refunds, [], 'a payment under an open dispute is not refunded');
      await assertReconciled(t);

      await disputeEvent(t, dispute, 'lost');
      clock.advance(1_000);
      await settleDueSessions(t.deps);
      // The bank returned the disputed 1,000; we return the rest, and the payer has all they paid.
      const view = await merchantSession(t, sid);
      assert.equal(view.group.members[1].status, 'refunded');
      assert.equal(view.refunds.length, 1);
      assert.equal(view.refunds[0].amount_cents, ben.due - 1_000);
      assert.equal(view.refunds[0].status, 'succeeded');
      assert.equal((await types(sid)).filter((type) => type === 'group.share_refunded').length, 1);
      assert.equal(await ledger(sid, 'dispute_losses'), -1_000);
      assert.equal(
        await ledger(sid, 'payer_cards'),
        0,
        'the payer is whole: charged, then 1,000 + the rest back',
      );
      // The loss stays with the session's funds (the merchant's); the consumer fee is returned.
      assert.equal(await ledger(sid, 'consumer_fees'), 0);
      assert.equal(await ledger(sid, 'session_funds'), 1_000);
      await assertReconciled(t);
    });
    test('a dispute lost for more than the payment (exchange rates) on a funded session: nothing refunded, nothing returned twice', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben']);
      await payOk(t, g.shares[0].shareId);
      const paid = await payOk(t, g.shares[1].shareId);
      const dispute = {
        id: 'dp_more',
        paymentId: paid.body.payment.id,
        amountCents: g.shares[1].due + 50,
        currency: 'usd',
      };
      await disputeEvent(t, dispute, 'needs_response');
      await disputeEvent(t, dispute, 'lost');
      const view = await merchantSession(t, g.created.session_id);
      assert.equal(view.status, 'funded');
      assert.deepEqual(view.refunds, []);
      await assertReconciled(t);
    });
  });
}
