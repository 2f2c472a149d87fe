// The whole money flow with the Stripe processor, through the app over HTTP: the real `stripe` client
// talks to a local server playing Stripe's API (test/helpers/fake-stripe.ts), the border we cannot reach.
// Paying with a PaymentMethod id, both capture modes, refunds on cancel, and the Connect transfer to the
// merchant's connected account.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createStripeProcessor } from '../../src/processor/stripe.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { assertError } from '../helpers/errors.ts';
import { FAKE_SECRET_KEY, type FakeStripe, startFakeStripe } from '../helpers/fake-stripe.ts';
import { equalGroup, merchantSession } from '../helpers/payments.ts';
import { assertReconciled } from '../helpers/reconcile.ts';
import { SESSION_ENV } from '../helpers/sessions.ts';

const dialect = DIALECTS[0] as (typeof DIALECTS)[number];

describe('payments with the Stripe processor (against a local fake of its API)', () => {
  let fake: FakeStripe;
  let t: TestApp;
  before(async () => {
    fake = await startFakeStripe();
    t = await startTestApp(dialect, {
      env: SESSION_ENV,
      wrapProcessor: () =>
        createStripeProcessor({
          secretKey: FAKE_SECRET_KEY,
          host: fake.host,
          port: fake.port,
          protocol: 'http',
        }),
    });
    await t.deps.db.kysely
      .updateTable('merchants')
      .set({ processor_account_id: 'acct_1GroupCheckoutTest' })
      .where('id', '=', t.merchant.merchant.id)
      .execute();
  });
  after(async () => {
    await t?.close();
    await fake?.close();
  });

  const payWith = (shareId: string, paymentMethod: string) =>
    t.request('POST', `/api/v1/shares/${shareId}/pay`, { body: { payment_method: paymentMethod } });

  test('immediate: PaymentIntents with automatic capture; funded; one Connect transfer of total − fees', async () => {
    const g = await equalGroup(t, ['Ada', 'Ben']);
    const declined = await payWith(g.shares[0].shareId, 'pm_card_chargeDeclinedInsufficientFunds');
    assertError(declined, 402, 'card_declined');
    assert.equal(declined.body.decline_code, 'insufficient_funds');
    for (const s of g.shares) {
      const res = await payWith(s.shareId, 'pm_card_visa');
      assert.equal(res.status, 200, res.text);
      assert.match(res.body.payment.id, /^pi_/);
      assert.equal(res.body.payment.card_last4, '4242');
    }
    const view = await merchantSession(t, g.created.session_id);
    assert.equal(view.status, 'funded');
    assert.equal(view.charges.length, 2);
    const intents = fake.requests.filter((r) => r.path === '/v1/payment_intents' && !r.replayed);
    const paid = intents.filter((r) => r.params.payment_method === 'pm_card_visa');
    assert.equal(paid.length, 2);
    for (const r of paid) {
      assert.equal(r.params.capture_method, 'automatic');
      assert.equal(r.params.amount, '5050', 'share + consumer fee');
      assert.match(r.idempotencyKey ?? '', /^gc_charge_mem_/);
    }
    const transfers = fake.requests.filter((r) => r.path === '/v1/transfers');
    assert.equal(transfers.length, 1);
    assert.equal(transfers[0]?.params.amount, '9799');
    assert.equal(transfers[0]?.params.destination, 'acct_1GroupCheckoutTest');
    assert.equal(transfers[0]?.params.transfer_group, g.created.session_id);
    assert.equal(view.transfer, fake.all('transfer')[0]?.id);
  });

  test('on_funded: holds (manual capture), captured when the group is complete', async () => {
    const g = await equalGroup(t, ['Ada', 'Ben'], { group_config: { capture: 'on_funded' } });
    for (const s of g.shares) assert.equal((await payWith(s.shareId, 'pm_card_visa')).status, 200);
    const view = await merchantSession(t, g.created.session_id);
    assert.equal(view.status, 'funded');
    const holds = fake.requests.filter(
      (r) =>
        r.path === '/v1/payment_intents' &&
        r.params.metadata &&
        (r.params.metadata as { session_id?: string }).session_id === g.created.session_id,
    );
    assert.deepEqual(
      holds.map((r) => r.params.capture_method),
      ['manual', 'manual'],
    );
    const captures = fake.requests.filter((r) => /^\/v1\/payment_intents\/pi_\w+\/capture$/.test(r.path));
    assert.ok(captures.length >= 2);
    for (const id of view.charges)
      assert.equal((fake.objects.get(id) as { status?: string }).status, 'succeeded');
  });

  test('on_funded: a hold declined at capture is let go at Stripe; the member pays again, and only the new hold is captured', async () => {
    const g = await equalGroup(t, ['Ada', 'Ben'], { group_config: { capture: 'on_funded' } });
    assert.equal((await payWith(g.shares[0].shareId, 'pm_card_visa')).status, 200);
    const refused = await payWith(g.shares[1].shareId, 'pm_fake_declinedAtCapture');
    assert.equal(refused.status, 200, refused.text);
    const firstHold = refused.body.payment.id as string;
    const waiting = await merchantSession(t, g.created.session_id);
    assert.equal(waiting.status, 'pending');
    assert.equal(waiting.group.members[1].status, 'pending', 'Ben owes his share again');
    // Not left on Ben's card beside the hold he is about to make.
    assert.equal((fake.objects.get(firstHold) as { status?: string }).status, 'canceled');

    const again = await payWith(g.shares[1].shareId, 'pm_card_visa');
    assert.equal(again.status, 200, again.text);
    const view = await merchantSession(t, g.created.session_id);
    assert.equal(view.status, 'funded');
    assert.equal(view.charges.length, 2);
    assert.ok(!view.charges.includes(firstHold));
    for (const id of view.charges)
      assert.equal((fake.objects.get(id) as { status?: string }).status, 'succeeded');
    await assertReconciled(t);
  });

  test('cancel after one payment: a Stripe Refund of share + fee on that PaymentIntent', async () => {
    const g = await equalGroup(t, ['Ada', 'Ben']);
    const paid = await payWith(g.shares[0].shareId, 'pm_card_visa');
    const res = await t.request('POST', `/v1/sessions/${g.created.session_id}/cancel`, {
      key: t.merchant.secretKey,
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.refunds[0].status, 'succeeded');
    assert.match(res.body.refunds[0].id, /^re_/);
    const refund = fake.requests.filter((r) => r.path === '/v1/refunds').at(-1);
    assert.equal(refund?.params.payment_intent, paid.body.payment.id);
    assert.equal(refund?.params.amount, '5050');
  });

  test('no page says "sandbox", in any language, not even in the messages it carries for its script', async () => {
    const g = await equalGroup(t, ['Ada', 'Ben']);
    const link = new URL(g.created.session_url);
    const organizer = `${link.pathname}${link.search}`;
    for (const language of ['en-US', 'de', 'ja']) {
      for (const path of [organizer, `/s/${g.shares[1].shareId}`]) {
        const res = await t.request('GET', path, { headers: { 'accept-language': language } });
        assert.equal(res.status, 200, `${path} in ${language}`);
        assert.match(res.text, /id="page-data"/, 'the page carries its data');
        assert.doesNotMatch(res.text, /sandbox|Testumgebung|テスト環境/i, `${path} in ${language}`);
      }
    }
  });

  test('a card number is refused with Stripe: the page sends a PaymentMethod', async () => {
    const g = await equalGroup(t, ['Ada', 'Ben']);
    const res = await t.request('POST', `/api/v1/shares/${g.shares[0].shareId}/pay`, {
      body: { card: { number: '4242424242424242', exp_month: 12, exp_year: 2099, cvc: '123' } },
    });
    assertError(res, 400, 'invalid_request');
    assert.match(res.body.error, /payment_method/);
  });

  test('reconcile is clean: our records agree with the (fake) Stripe objects', async () => {
    await assertReconciled(t);
  });
});
