// Real money across a crash (docs/decisions.md#claim-call-record), with the Stripe processor: the real
// server (src/main.ts, workers included) talks to a local fake of Stripe's API through STRIPE_API_URL and
// is killed by its crash switch (SANDBOX_CRASH_AT) at the worst moments of the 3-D Secure and webhook
// paths. After a restart each ends with exactly one charge and a clean reconcile:
// - killed after Stripe answered requires_action, before the record: Stripe's webhook, sent when the payer
//   completes the step, finds the attempt by our key in its metadata and records it;
// - killed when a webhook arrived, before it was kept: Stripe sends it again (no 2xx), and it is taken once;
// - killed after it was kept, before it was handled: the restarted processor-events worker handles it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { systemClock } from '../../src/clock.ts';
import { reconcile } from '../../src/flows/reconcile.ts';
import { createStripeProcessor } from '../../src/processor/stripe.ts';
import { type ApiClient, RELAXED_LIMITS, requestOver } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { FAKE_SECRET_KEY, type FakeStripe, startFakeStripe } from '../helpers/fake-stripe.ts';
import { equalGroup, eventually, merchantSession } from '../helpers/payments.ts';
import { type CrashFixture, crashFixture } from '../helpers/server-process.ts';
import { FAKE_WEBHOOK_SECRET, sendStripeWebhook, stripeEvent } from '../helpers/stripe-webhooks.ts';

for (const dialect of DIALECTS) {
  describe(`Stripe payments across a crash on ${dialect.name}`, { skip: dialect.skip }, () => {
    let fake: FakeStripe;
    let fixture: CrashFixture;
    let client: ApiClient;
    before(async () => {
      fake = await startFakeStripe();
      fixture = await crashFixture(dialect, {
        ...RELAXED_LIMITS,
        STRIPE_SECRET_KEY: FAKE_SECRET_KEY,
        STRIPE_WEBHOOK_SECRET: FAKE_WEBHOOK_SECRET,
        STRIPE_API_URL: `http://${fake.host}:${fake.port}`,
        SETTLE_INTERVAL_MS: '100',
      });
      const { merchant, server } = fixture;
      client = { merchant, request: (method, path, o) => requestOver(server.baseUrl, method, path, o) };
      await server.start();
    });
    after(async () => {
      await fixture?.close();
      await fake?.close();
    });

    const webhook = () => `${fixture.server.baseUrl}/v1/stripe/webhook`;
    const payWith = (shareId: string, paymentMethod: string) =>
      client.request('POST', `/api/v1/shares/${shareId}/pay`, { body: { payment_method: paymentMethod } });

    async function crashingAt(point: string) {
      await fixture.server.stop();
      await fixture.server.start({ SANDBOX_CRASH_AT: point });
    }
    async function restart() {
      assert.equal(await fixture.server.exited, 'SIGKILL', 'the crash switch killed the server');
      await fixture.server.start();
    }
    async function assertCleanAndChargedOnce(sessionId: string, paidShares: number) {
      const view = await merchantSession(client, sessionId);
      const charges = fake
        .all('charge')
        .filter((c) => (c.payment_intent as string) && view.charges.includes(c.payment_intent));
      assert.equal(charges.length, paidShares, 'each paid share charged once');
      const report = await reconcile({
        db: fixture.db,
        clock: systemClock,
        processor: createStripeProcessor({
          secretKey: FAKE_SECRET_KEY,
          host: fake.host,
          port: fake.port,
          protocol: 'http',
        }),
      });
      assert.deepEqual(report.mismatches, []);
    }

    test('killed after Stripe answered requires_action, before the record: the webhook of the completed step records it once', async () => {
      const g = await equalGroup(client, ['Ada', 'Ben']);
      await crashingAt('payment-called');
      await assert.rejects(
        payWith(g.shares[1].shareId, 'pm_card_authenticationRequired'),
        'no answer: killed',
      );
      await restart();
      const [pi] = fake.all('payment_intent').slice(-1);
      assert.equal(pi?.status, 'requires_action');
      // The payer's page lost its answer, but the payer finished at their bank (Stripe.js kept the step).
      fake.authenticate(pi?.id as string, 'succeed');
      const sent = await sendStripeWebhook(
        webhook(),
        stripeEvent('payment_intent.succeeded', { ...fake.objects.get(pi?.id as string) }),
      );
      assert.equal(sent.status, 200, JSON.stringify(sent.body));
      await eventually(
        async () => (await merchantSession(client, g.created.session_id)).group.members[1].status === 'paid',
        20_000,
        'the payment recorded',
      );
      await assertCleanAndChargedOnce(g.created.session_id, 1);
    });

    for (const point of ['processor-event-received', 'processor-event-kept']) {
      test(`killed at ${point}: the payment is recorded once after the restart`, async () => {
        const g = await equalGroup(client, ['Ada', 'Ben']);
        const res = await payWith(g.shares[1].shareId, 'pm_card_authenticationRequired');
        assert.equal(res.body.status, 'authenticating', res.text);
        const pi = fake.all('payment_intent').at(-1);
        fake.authenticate(pi?.id as string, 'succeed');
        const event = stripeEvent('payment_intent.succeeded', { ...fake.objects.get(pi?.id as string) });
        await crashingAt(point);
        await assert.rejects(sendStripeWebhook(webhook(), event), 'Stripe got no answer');
        await restart();
        // Stripe sends again what got no 2xx; kept before the crash, it is a duplicate and already handled
        // (or being handled) by the restarted worker.
        const again = await sendStripeWebhook(webhook(), event);
        assert.equal(again.status, 200, JSON.stringify(again.body));
        assert.equal(again.body.duplicate === true, point === 'processor-event-kept');
        await eventually(
          async () =>
            (await merchantSession(client, g.created.session_id)).group.members[1].status === 'paid',
          20_000,
          'the payment recorded',
        );
        await assertCleanAndChargedOnce(g.created.session_id, 1);
      });
    }
  });
}
