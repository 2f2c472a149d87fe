// The Stripe processor's amounts (processor/stripe.ts, processor/currencies.ts) against the fake of Stripe's
// API, which checks them by Stripe's rules: for JPY, KWD, ISK, MGA, UGX and USD, what each operation sends
// in Stripe's unit, what its answer and Stripe's records read back in ours, and an amount Stripe cannot
// take exactly, which is never sent.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { CARD_CURRENCIES } from '../../src/processor/currencies.ts';
import { createStripeProcessor } from '../../src/processor/stripe.ts';
import type { Outcome } from '../../src/processor/types.ts';
import { FAKE_SECRET_KEY, startFakeStripe } from '../helpers/fake-stripe.ts';

async function setup(t: TestContext) {
  const fake = await startFakeStripe();
  t.after(() => fake.close());
  const processor = createStripeProcessor({
    secretKey: FAKE_SECRET_KEY,
    host: fake.host,
    port: fake.port,
    protocol: 'http',
  });
  return { fake, processor };
}

let keys = 0;
const key = (what: string) => `gc_cur_${what}_${process.pid}_${++keys}`;
const common = { sessionId: 'gs_currency_test', memberId: 'mem_one' };

function succeeded(outcome: Outcome): Extract<Outcome, { status: 'succeeded' }> {
  assert.equal(outcome.status, 'succeeded', JSON.stringify(outcome));
  return outcome as Extract<Outcome, { status: 'succeeded' }>;
}

/** One ISO amount per currency, and the integer Stripe must be sent for it. */
const CASES = [
  // Zero-decimal at ISO and at Stripe: ¥1,500 is 1500.
  { currency: 'jpy', ours: 1_500, stripe: 1_500 },
  // Three-decimal: KWD 1.230 is 1230 thousandths at both, the last digit 0.
  { currency: 'kwd', ours: 1_230, stripe: 1_230 },
  // ISO counts whole krónur; Stripe counts hundredths that are always 00: ISK 1,500 is 150000.
  { currency: 'isk', ours: 1_500, stripe: 150_000 },
  // The same for UGX, though it also sits on Stripe's zero-decimal list.
  { currency: 'ugx', ours: 5_000, stripe: 500_000 },
  // ISO counts MGA in hundredths; Stripe in whole ariary: MGA 5,000.00 is 5000.
  { currency: 'mga', ours: 500_000, stripe: 5_000 },
  // Two-decimal at both: $25.50 is 2550.
  { currency: 'usd', ours: 2_550, stripe: 2_550 },
] as const;

for (const { currency, ours, stripe } of CASES) {
  test(`${currency.toUpperCase()}: ${ours} in ISO minor units is sent as ${stripe}, and read back as ${ours}`, async (t) => {
    const { fake, processor } = await setup(t);
    const body = (path: RegExp) => {
      const sent = fake.requests.filter((r) => r.method === 'POST' && path.test(r.path)).at(-1);
      assert.ok(sent, `nothing sent to ${path}`);
      return sent.params;
    };

    const payment = { ...common, amountCents: ours, currency, source: { paymentMethod: 'pm_card_visa' } };
    const charged = succeeded(await processor.charge({ ...payment, key: key('charge') }));
    assert.equal(body(/^\/v1\/payment_intents$/).amount, String(stripe));
    assert.equal(body(/^\/v1\/payment_intents$/).currency, currency);
    assert.equal(charged.amountCents, ours);

    const held = succeeded(await processor.authorize({ ...payment, key: key('hold') }));
    assert.equal(held.amountCents, ours);
    const captured = succeeded(
      await processor.capture({
        ...common,
        key: key('capture'),
        paymentId: held.processorId,
        amountCents: ours,
        currency,
      }),
    );
    assert.equal(body(/\/capture$/).amount_to_capture, String(stripe));
    assert.equal(captured.amountCents, ours);

    const refunded = succeeded(
      await processor.refund({
        ...common,
        key: key('refund'),
        paymentId: charged.processorId,
        amountCents: ours,
        currency,
      }),
    );
    assert.equal(body(/^\/v1\/refunds$/).amount, String(stripe));
    assert.equal(refunded.amountCents, ours);

    const transferred = succeeded(
      await processor.transfer({
        key: key('transfer'),
        sessionId: common.sessionId,
        amountCents: ours,
        currency,
        destination: 'acct_1MerchantConnected',
      }),
    );
    assert.equal(body(/^\/v1\/transfers$/).amount, String(stripe));
    assert.equal(transferred.amountCents, ours);

    // Stripe holds its own unit; reconcile reads ours.
    assert.equal(fake.objects.get(transferred.processorId)?.amount, stripe);
    for (const [kind, id] of [
      ['charge', charged.processorId],
      ['authorize', held.processorId],
      ['refund', refunded.processorId],
      ['transfer', transferred.processorId],
    ] as const) {
      const record = await processor.lookup(kind, id);
      assert.equal(record?.amountCents, ours, `${kind} ${JSON.stringify(record)}`);
      assert.equal(record?.currency, currency);
    }
  });
}

test('an amount Stripe cannot take exactly fails without a request: KWD not ending in 0, MGA below a whole ariary', async (t) => {
  const { fake, processor } = await setup(t);
  for (const [currency, amountCents] of [
    ['kwd', 1_235],
    ['mga', 500_050],
  ] as const) {
    const outcome = await processor.charge({
      ...common,
      key: key('odd'),
      amountCents,
      currency,
      source: { paymentMethod: 'pm_card_visa' },
    });
    assert.equal(outcome.status, 'failed', JSON.stringify(outcome));
    assert.match(
      (outcome as { message: string }).message,
      new RegExp(`not a multiple of ${CARD_CURRENCIES.chargeStep(currency)}`),
    );
  }
  assert.equal(fake.requests.length, 0);
});

test('the fake refuses what Stripe refuses: an ISK amount not in whole krónur, KWD not ending in 0, USD below 50', async (t) => {
  // Sent as they are (the mistake the conversion exists to prevent), these are Stripe's refusals.
  const { fake, processor } = await setup(t);
  const { default: Stripe } = await import('stripe');
  const client = new Stripe(FAKE_SECRET_KEY, { host: fake.host, port: fake.port, protocol: 'http' });
  const create = (amount: number, currency: string) =>
    client.paymentIntents.create({
      amount,
      currency,
      payment_method: 'pm_card_visa',
      confirm: true,
      automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
    });
  await assert.rejects(create(1_550, 'isk'), /divisible by 100/);
  await assert.rejects(create(1_235, 'kwd'), /last digit/);
  await assert.rejects(create(49, 'usd'), (error: { code?: string }) => error.code === 'amount_too_small');
  // Through the processor, the same ISK amount in krónur goes out whole.
  const outcome = await processor.charge({
    ...common,
    key: key('isk'),
    amountCents: 155,
    currency: 'isk',
    source: { paymentMethod: 'pm_card_visa' },
  });
  assert.equal(succeeded(outcome).amountCents, 155);
});

test('the Stripe processor answers the card currency rules', async (t) => {
  const { processor } = await setup(t);
  assert.equal(processor.currencies, CARD_CURRENCIES);
});
