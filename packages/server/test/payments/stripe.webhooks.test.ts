// Stripe's own webhooks at {base_url}/stripe/webhook, through the app over HTTP, with the official client
// talking to a local fake of Stripe's API (STRIPE_API_URL) and the events signed as Stripe signs them:
// verification (good, bad, stale, missing, replayed, unknown types), and the effect of each handled type on
// the session, the ledger and reconcile — 3-D Secure settled by the webhook when the page is gone, a refund
// that fails after it was taken, a dispute opened and closed — and recovery that reads the PaymentIntent
// instead of sending the create again.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { settleDueSessions } from '../../src/jobs/settle.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { manualClock } from '../helpers/clock.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { assertError } from '../helpers/errors.ts';
import { FAKE_SECRET_KEY, type FakeStripe, startFakeStripe } from '../helpers/fake-stripe.ts';
import { equalGroup, merchantSession } from '../helpers/payments.ts';
import { assertReconciled } from '../helpers/reconcile.ts';
import { eventRows, SESSION_ENV } from '../helpers/sessions.ts';
import { FAKE_WEBHOOK_SECRET, sendStripeWebhook, stripeEvent } from '../helpers/stripe-webhooks.ts';

for (const dialect of DIALECTS) {
  describe(`Stripe's webhooks on ${dialect.name}`, { skip: dialect.skip }, () => {
    const clock = manualClock(Date.now());
    let fake: FakeStripe;
    let t: TestApp;
    before(async () => {
      fake = await startFakeStripe();
      t = await startTestApp(dialect, {
        clock,
        env: {
          ...SESSION_ENV,
          STRIPE_SECRET_KEY: FAKE_SECRET_KEY,
          STRIPE_WEBHOOK_SECRET: FAKE_WEBHOOK_SECRET,
          STRIPE_API_URL: `http://${fake.host}:${fake.port}`,
        },
      });
    });
    after(async () => {
      await t?.close();
      await fake?.close();
    });

    const webhookUrl = () => `${t.baseUrl}/v1/stripe/webhook`;
    const send = (event: object, options?: Parameters<typeof sendStripeWebhook>[2]) =>
      sendStripeWebhook(webhookUrl(), event, options);
    const kept = async () =>
      Number(
        (
          await t.deps.db.kysely
            .selectFrom('processor_events')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const payWith = (shareId: string, paymentMethod: string) =>
      t.request('POST', `/api/v1/shares/${shareId}/pay`, { body: { payment_method: paymentMethod } });
    const share = (shareId: string) => t.request('GET', `/api/v1/shares/${shareId}`);

    test('a good signature is taken; a bad, stale or missing one is 400 and changes nothing; unknown types are 200', async () => {
      const before = await kept();
      const event = stripeEvent('payment_intent.succeeded', {
        id: 'pi_nobody',
        object: 'payment_intent',
        metadata: {},
      });
      const bad = await send(event, { secret: 'whsec_not0the0right0secret0at0all' });
      assert.equal(bad.status, 400);
      assert.equal(bad.body.code, 'invalid_webhook_signature');
      assert.match(String(bad.body.request_id), /^req_/);
      const stale = await send(event, { timestamp: Math.floor(clock.now() / 1000) - 301 });
      assert.equal(stale.status, 400);
      assert.match(String(stale.body.error), /tolerance|timestamp/i);
      assert.equal((await send(event, { signature: null })).status, 400);
      assert.equal((await send(event, { signature: 't=1,v1=deadbeef' })).status, 400);
      assert.equal(await kept(), before, 'nothing kept from a refused webhook');

      const good = await send(event);
      assert.equal(good.status, 200, JSON.stringify(good.body));
      assert.equal(good.body.received, true);
      assert.equal(await kept(), before + 1);
      const replayed = await send(event);
      assert.equal(replayed.status, 200);
      assert.equal(replayed.body.duplicate, true);
      assert.equal(await kept(), before + 1, 'each Stripe event id is kept, and acted on, once');

      const unknown = await send(stripeEvent('customer.created', { id: 'cus_1', object: 'customer' }));
      assert.equal(unknown.status, 200);
      assert.equal(await kept(), before + 1, 'types we do not act on are answered, not kept');
    });

    test('3-D Secure: the pay answer carries the PaymentIntent’s client secret; its webhook records the payment when the page is gone', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben']);
      const res = await payWith(g.shares[1].shareId, 'pm_card_authenticationRequired');
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.status, 'authenticating');
      const [pi] = fake.all('payment_intent').slice(-1);
      assert.equal(res.body.next_action.client_secret, pi?.client_secret);
      const sent = fake.requests.filter((r) => r.path === '/v1/payment_intents').at(-1);
      assert.equal(sent?.params.return_url, `https://pay.example.test/s/${g.shares[1].shareId}`);
      fake.authenticate(pi?.id as string, 'succeed');
      const event = stripeEvent('payment_intent.succeeded', { ...fake.objects.get(pi?.id as string) });
      assert.equal((await send(event)).status, 200);
      const now = await share(g.shares[1].shareId);
      assert.equal(now.body.status, 'paid');
      assert.equal(now.body.payment.id, pi?.id);
      assert.deepEqual(
        (await eventRows(t, g.created.session_id)).map((e) => e.type),
        ['group.created', 'group.share_paid'],
      );
      // Sent again, it records nothing twice; the page's refresh after it finds the share paid.
      assert.equal((await send(event)).body.duplicate, true);
      const refreshed = await t.request('POST', `/api/v1/shares/${g.shares[1].shareId}/refresh`);
      assert.equal(refreshed.body.status, 'paid');
      assert.equal((await eventRows(t, g.created.session_id)).length, 2);
      await assertReconciled(t);
    });

    test('3-D Secure: refresh after Stripe.js handleNextAction records it; a failed one leaves the share pending', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben'], { group_config: { capture: 'on_funded' } });
      const res = await payWith(g.shares[0].shareId, 'pm_card_authenticationRequired');
      const pi = fake.all('payment_intent').at(-1);
      fake.authenticate(pi?.id as string, 'succeed');
      const done = await t.request('POST', `/api/v1/shares/${g.shares[0].shareId}/refresh`);
      assert.equal(done.body.status, 'authorized', done.text);
      assert.equal(res.body.capture, 'on_funded');
      const again = await payWith(g.shares[1].shareId, 'pm_card_authenticationRequired');
      assert.equal(again.body.status, 'authenticating');
      fake.authenticate(fake.all('payment_intent').at(-1)?.id as string, 'fail');
      const failed = await t.request('POST', `/api/v1/shares/${g.shares[1].shareId}/refresh`);
      assert.equal(failed.body.status, 'pending');
      assert.match(failed.body.failure, /bank could not confirm/);
      assert.equal((await payWith(g.shares[1].shareId, 'pm_card_visa')).status, 200);
      assert.equal((await merchantSession(t, g.created.session_id)).status, 'funded');
      await assertReconciled(t);
    });

    test('a refund Stripe took fails later (charge.refund.updated): refunds show it failed, group.share_refund_failed, reconcile clean', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben']);
      assert.equal((await payWith(g.shares[1].shareId, 'pm_card_visa')).status, 200);
      const cancel = await t.request('POST', `/v1/sessions/${g.created.session_id}/cancel`, {
        key: t.merchant.secretKey,
      });
      assert.equal(cancel.body.refunds[0].status, 'succeeded');
      const refund = fake.failRefund(cancel.body.refunds[0].id, 'expired_or_canceled_card');
      assert.equal((await send(stripeEvent('charge.refund.updated', refund))).status, 200);
      const view = await merchantSession(t, g.created.session_id);
      assert.equal(view.refunds[0].status, 'failed');
      assert.equal(view.refunds[0].failure_reason, 'expired_or_canceled_card');
      assert.equal(view.group.members[1].status, 'paid');
      assert.deepEqual((await eventRows(t, g.created.session_id)).map((e) => e.type).slice(-1), [
        'group.share_refund_failed',
      ]);
      await assertReconciled(t);
    });

    test('a refund Stripe answers pending is listed pending until refund.updated says it succeeded', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben']);
      assert.equal((await payWith(g.shares[1].shareId, 'pm_card_visa')).status, 200);
      fake.refundStatus = 'pending';
      try {
        const cancel = await t.request('POST', `/v1/sessions/${g.created.session_id}/cancel`, {
          key: t.merchant.secretKey,
        });
        assert.equal(cancel.status, 200, cancel.text);
        assert.equal(cancel.body.refunds[0].status, 'pending');
        assert.match(cancel.body.refunds[0].id, /^re_/);
        let view = await merchantSession(t, g.created.session_id);
        assert.equal(view.refunds[0].status, 'pending');
        assert.equal(view.group.members[1].status, 'refunded');
        await assertReconciled(t);
        const refund = fake.succeedRefund(cancel.body.refunds[0].id);
        assert.equal((await send(stripeEvent('refund.updated', refund))).status, 200);
        view = await merchantSession(t, g.created.session_id);
        assert.equal(view.refunds[0].status, 'succeeded');
        assert.equal(view.group.members[1].status, 'refunded');
        // Told again (Stripe sends charge.refund.updated too): nothing changes, nothing is sent.
        const before = await eventRows(t, g.created.session_id);
        assert.equal((await send(stripeEvent('charge.refund.updated', refund))).status, 200);
        assert.equal((await merchantSession(t, g.created.session_id)).refunds[0].status, 'succeeded');
        assert.deepEqual(await eventRows(t, g.created.session_id), before);
        await assertReconciled(t);
      } finally {
        fake.refundStatus = 'succeeded';
      }
    });

    test('a dispute opened and closed by its webhooks, in either order', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben']);
      assert.equal((await payWith(g.shares[1].shareId, 'pm_card_visa')).status, 200);
      const pi = fake.all('payment_intent').at(-1);
      const dispute = fake.openDispute(pi?.id as string);
      assert.equal((await send(stripeEvent('charge.dispute.created', dispute))).status, 200);
      let view = await merchantSession(t, g.created.session_id);
      assert.deepEqual(view.disputes, [
        {
          id: dispute.id,
          member_id: g.shares[1].id,
          amount_cents: 5050,
          reason: 'fraudulent',
          status: 'needs_response',
        },
      ]);
      await assertReconciled(t);
      assert.equal(
        (await send(stripeEvent('charge.dispute.closed', fake.closeDispute(dispute.id as string, 'won'))))
          .status,
        200,
      );
      view = await merchantSession(t, g.created.session_id);
      assert.equal(view.disputes[0].status, 'won');
      await assertReconciled(t);

      // The close told before the opening (webhooks come in any order): both recorded, once.
      const h = await equalGroup(t, ['Ann', 'Bo']);
      assert.equal((await payWith(h.shares[0].shareId, 'pm_card_visa')).status, 200);
      const second = fake.openDispute(fake.all('payment_intent').at(-1)?.id as string);
      const lost = fake.closeDispute(second.id as string, 'lost');
      assert.equal((await send(stripeEvent('charge.dispute.closed', lost))).status, 200);
      assert.equal(
        (await send(stripeEvent('charge.dispute.created', { ...second, status: 'needs_response' }))).status,
        200,
      );
      const types = (await eventRows(t, h.created.session_id)).map((e) => e.type);
      assert.deepEqual(types.slice(-2), ['group.share_disputed', 'group.share_dispute_closed']);
      assert.equal((await merchantSession(t, h.created.session_id)).disputes[0].status, 'lost');
      await assertReconciled(t);
    });

    test('a PaymentIntent answered processing is recovered by reading it, never by sending the create again', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben']);
      fake.misbehave({
        times: 1,
        method: 'POST',
        path: /^\/v1\/payment_intents$/,
        answer: { kind: 'patch', patch: { status: 'processing' } },
      });
      const res = await payWith(g.shares[1].shareId, 'pm_card_visa');
      assertError(res, 503, 'upstream_error');
      const creates = () =>
        fake.requests.filter((r) => r.method === 'POST' && r.path === '/v1/payment_intents').length;
      const before = creates();
      clock.advance(10 * 60_000);
      await settleDueSessions(t.deps);
      assert.equal((await share(g.shares[1].shareId)).body.status, 'paid');
      assert.equal(creates(), before, 'no create sent again');
      assert.ok(
        fake.requests.some((r) => r.path === '/v1/payment_intents/search'),
        'found by our key',
      );
      await assertReconciled(t);
    });
  });
}
