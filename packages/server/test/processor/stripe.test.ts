// The Stripe processor (processor/stripe.ts) against a fake of Stripe's API (helpers/fake-stripe.ts), through
// the real `stripe` client: what it sends for each operation (parameters, Idempotency-Key), and what each
// Stripe answer or failure becomes (succeeded, declined, failed, unknown); retrieve by re-sending with the
// same key; lookup of Stripe's own records.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { createStripeProcessor } from '../../src/processor/stripe.ts';
import type {
  DeclineCode,
  FollowUpRequest,
  Operation,
  Outcome,
  PaymentProcessor,
  PaymentRequest,
  TransferRequest,
} from '../../src/processor/types.ts';
import {
  FAKE_SECRET_KEY,
  type FakeStripe,
  type RecordedRequest,
  startFakeStripe,
} from '../helpers/fake-stripe.ts';

/** A fake Stripe and a processor pointed at it, closed when the test ends. */
async function setup(t: TestContext, options: { timeoutMs?: number; secretKey?: string } = {}) {
  const fake = await startFakeStripe();
  t.after(() => fake.close());
  const processor = createStripeProcessor({
    secretKey: options.secretKey ?? FAKE_SECRET_KEY,
    host: fake.host,
    port: fake.port,
    protocol: 'http',
    ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
  });
  return { fake, processor };
}

let keys = 0;
const newKey = (what: string) => `gc_${what}_${process.pid}_${++keys}`;

const payment = (overrides: Partial<PaymentRequest> = {}): PaymentRequest => ({
  key: newKey('pay'),
  sessionId: 'gs_stripe_test',
  memberId: 'mem_one',
  amountCents: 2_550,
  currency: 'eur',
  source: { paymentMethod: 'pm_card_visa' },
  ...overrides,
});

const followUp = (paymentId: string, overrides: Partial<FollowUpRequest> = {}): FollowUpRequest => ({
  key: newKey('follow'),
  sessionId: 'gs_stripe_test',
  memberId: 'mem_one',
  paymentId,
  amountCents: 2_550,
  currency: 'eur',
  ...overrides,
});

const transferOf = (overrides: Partial<TransferRequest> = {}): TransferRequest => ({
  key: newKey('transfer'),
  sessionId: 'gs_stripe_test',
  amountCents: 9_000,
  currency: 'eur',
  destination: 'acct_1MerchantConnected',
  ...overrides,
});

function succeeded(outcome: Outcome): Extract<Outcome, { status: 'succeeded' }> {
  assert.equal(outcome.status, 'succeeded', JSON.stringify(outcome));
  return outcome as Extract<Outcome, { status: 'succeeded' }>;
}

function only(fake: FakeStripe, method: string, path: RegExp): RecordedRequest {
  const matching = fake.requests.filter((r) => r.method === method && path.test(r.path));
  assert.equal(matching.length, 1, JSON.stringify(fake.requests.map((r) => `${r.method} ${r.path}`)));
  return matching[0] as RecordedRequest;
}

/** A charge or a hold that succeeded, for the follow-up operations. */
async function paid(
  processor: PaymentProcessor,
  kind: 'charge' | 'authorize',
  overrides: Partial<PaymentRequest> = {},
) {
  return succeeded(await processor[kind](payment(overrides))).processorId;
}

test('the processor is named stripe', async (t) => {
  const { processor } = await setup(t);
  assert.equal(processor.name, 'stripe');
});

test('charge: a PaymentIntent confirmed at once with automatic capture, keyed by our idempotency key', async (t) => {
  const { fake, processor } = await setup(t);
  const request = payment();
  const outcome = succeeded(await processor.charge(request));

  const sent = only(fake, 'POST', /^\/v1\/payment_intents$/);
  assert.deepEqual(sent.params, {
    amount: '2550',
    currency: 'eur',
    payment_method: 'pm_card_visa',
    confirm: 'true',
    capture_method: 'automatic',
    automatic_payment_methods: { enabled: 'true', allow_redirects: 'never' },
    error_on_requires_action: 'true',
    metadata: { session_id: 'gs_stripe_test', member_id: 'mem_one', gc_key: request.key },
    expand: ['payment_method'],
  });
  assert.equal(sent.idempotencyKey, request.key);
  assert.equal(sent.authorization, `Bearer ${FAKE_SECRET_KEY}`);
  assert.match(sent.userAgent ?? '', /Group Checkout/);

  const [pi] = fake.all('payment_intent');
  assert.equal(fake.all('payment_intent').length, 1);
  assert.equal(pi?.status, 'succeeded');
  assert.deepEqual(outcome, {
    status: 'succeeded',
    processorId: pi?.id,
    amountCents: 2_550,
    card: { brand: 'visa', last4: '4242' },
  });
  assert.match(outcome.processorId, /^pi_/);
});

test('authorize: the same PaymentIntent with manual capture; requires_capture is a hold that succeeded', async (t) => {
  const { fake, processor } = await setup(t);
  const request = payment({ source: { paymentMethod: 'pm_card_mastercard' }, amountCents: 1_200 });
  const outcome = succeeded(await processor.authorize(request));

  const sent = only(fake, 'POST', /^\/v1\/payment_intents$/);
  assert.equal(sent.params.capture_method, 'manual');
  assert.equal(sent.params.confirm, 'true');
  assert.equal(sent.params.amount, '1200');
  assert.deepEqual(sent.params.metadata, {
    session_id: 'gs_stripe_test',
    member_id: 'mem_one',
    gc_key: request.key,
  });
  assert.equal(sent.idempotencyKey, request.key);

  const pi = fake.objects.get(outcome.processorId);
  assert.equal(pi?.status, 'requires_capture');
  assert.equal(outcome.amountCents, 1_200);
  assert.deepEqual(outcome.card, { brand: 'mastercard', last4: '4444' });
});

test('capture: the hold is captured on its PaymentIntent, with the amount and its own key', async (t) => {
  const { fake, processor } = await setup(t);
  const pi = await paid(processor, 'authorize');
  const request = followUp(pi);
  const outcome = succeeded(await processor.capture(request));

  const sent = only(fake, 'POST', /\/capture$/);
  assert.equal(sent.path, `/v1/payment_intents/${pi}/capture`);
  assert.deepEqual(sent.params, { amount_to_capture: '2550' });
  assert.equal(sent.idempotencyKey, request.key);
  assert.deepEqual(outcome, { status: 'succeeded', processorId: pi, amountCents: 2_550 });
  assert.equal(fake.objects.get(pi)?.status, 'succeeded');
});

test('capture: a card refused at capture is declined; capturing what is no hold is failed', async (t) => {
  const { fake, processor } = await setup(t);
  const hold = await paid(processor, 'authorize', { source: { paymentMethod: 'pm_fake_declinedAtCapture' } });
  const declined = await processor.capture(followUp(hold));
  assert.equal(declined.status, 'declined', JSON.stringify(declined));
  assert.equal(declined.status === 'declined' && declined.declineCode, 'generic_decline');
  assert.equal(fake.objects.get(hold)?.status, 'requires_capture');

  const charged = await paid(processor, 'charge');
  const twice = await processor.capture(followUp(charged));
  assert.equal(twice.status, 'failed', JSON.stringify(twice));
  assert.match(twice.status === 'failed' ? twice.message : '', /payment_intent_unexpected_state/);

  const none = await processor.capture(followUp('pi_doesnotexist'));
  assert.equal(none.status, 'failed', JSON.stringify(none));
  assert.match(none.status === 'failed' ? none.message : '', /resource_missing/);
});

test('release: the hold is released by cancelling its PaymentIntent', async (t) => {
  const { fake, processor } = await setup(t);
  const pi = await paid(processor, 'authorize');
  const request = followUp(pi);
  const outcome = succeeded(await processor.release(request));

  const sent = only(fake, 'POST', /\/cancel$/);
  assert.equal(sent.path, `/v1/payment_intents/${pi}/cancel`);
  assert.deepEqual(sent.params, {});
  assert.equal(sent.idempotencyKey, request.key);
  assert.deepEqual(outcome, { status: 'succeeded', processorId: pi, amountCents: 2_550 });
  assert.equal(fake.objects.get(pi)?.status, 'canceled');

  const again = await processor.release(followUp(pi));
  assert.equal(again.status, 'failed', 'a PaymentIntent already cancelled cannot be cancelled again');
});

test('refund: a Refund of the PaymentIntent, with the amount, our ids and its own key', async (t) => {
  const { fake, processor } = await setup(t);
  const pi = await paid(processor, 'charge');
  const request = followUp(pi, { memberId: 'mem_two' });
  const outcome = succeeded(await processor.refund(request));

  const sent = only(fake, 'POST', /^\/v1\/refunds$/);
  assert.deepEqual(sent.params, {
    payment_intent: pi,
    amount: '2550',
    metadata: { session_id: 'gs_stripe_test', member_id: 'mem_two', gc_key: request.key },
  });
  assert.equal(sent.idempotencyKey, request.key);
  const [refund] = fake.all('refund');
  assert.deepEqual(outcome, { status: 'succeeded', processorId: refund?.id, amountCents: 2_550 });
  assert.match(outcome.processorId, /^re_/);
});

test('refund: pending is on its way back (succeeded); failed and canceled are failed; an odd status is unknown', async (t) => {
  const cases: [string, Outcome['status']][] = [
    ['succeeded', 'succeeded'],
    ['pending', 'succeeded'],
    ['failed', 'failed'],
    ['canceled', 'failed'],
    ['requires_action', 'unknown'],
    ['somewhere_else', 'unknown'],
  ];
  for (const [status, expected] of cases) {
    const { fake, processor } = await setup(t);
    const pi = await paid(processor, 'charge');
    fake.misbehave({ method: 'POST', path: /^\/v1\/refunds$/, answer: { kind: 'patch', patch: { status } } });
    const outcome = await processor.refund(followUp(pi));
    assert.equal(outcome.status, expected, `refund status ${status}: ${JSON.stringify(outcome)}`);
  }
});

test('transfer: a Connect Transfer to the connected account, grouped by session, with its own key', async (t) => {
  const { fake, processor } = await setup(t);
  const request = transferOf();
  const outcome = succeeded(await processor.transfer(request));

  const sent = only(fake, 'POST', /^\/v1\/transfers$/);
  assert.deepEqual(sent.params, {
    amount: '9000',
    currency: 'eur',
    destination: 'acct_1MerchantConnected',
    transfer_group: 'gs_stripe_test',
    metadata: { session_id: 'gs_stripe_test', gc_key: request.key },
  });
  assert.equal(sent.idempotencyKey, request.key);
  const [transfer] = fake.all('transfer');
  assert.deepEqual(outcome, { status: 'succeeded', processorId: transfer?.id, amountCents: 9_000 });
  assert.match(outcome.processorId, /^tr_/);
});

test('transfer: a merchant without a connected account is failed, and nothing is sent to Stripe', async (t) => {
  const { fake, processor } = await setup(t);
  const outcome = await processor.transfer(transferOf({ destination: null }));
  assert.deepEqual(outcome, {
    status: 'failed',
    message:
      'the merchant has no connected Stripe account: set one with group-checkout merchant update --processor-account acct_…',
  });
  assert.deepEqual(fake.requests, []);
});

test('a sandbox card given to the Stripe processor is failed, and nothing is sent to Stripe', async (t) => {
  const { fake, processor } = await setup(t);
  const card = { number: '4242424242424242', expMonth: 12, expYear: 2040, cvc: '123' };
  const outcome = await processor.charge(payment({ source: { card } }));
  assert.equal(outcome.status, 'failed');
  assert.ok(!JSON.stringify(outcome).includes(card.number), 'the card number is nowhere in the outcome');
  assert.deepEqual(fake.requests, []);
});

test("each of Stripe's test cards that is refused maps onto our decline code", async (t) => {
  const { fake, processor } = await setup(t);
  const cases: [string, DeclineCode, string][] = [
    ['pm_card_chargeDeclined', 'generic_decline', '0002'],
    ['pm_card_chargeDeclinedInsufficientFunds', 'insufficient_funds', '9995'],
    ['pm_card_chargeDeclinedExpiredCard', 'expired_card', '0069'],
    ['pm_card_chargeDeclinedIncorrectCvc', 'incorrect_cvc', '0127'],
    ['pm_card_chargeDeclinedLostCard', 'lost_card', '9987'],
    ['pm_card_chargeDeclinedStolenCard', 'stolen_card', '9979'],
  ];
  for (const kind of ['charge', 'authorize'] as const) {
    for (const [paymentMethod, declineCode, last4] of cases) {
      const outcome = await processor[kind](payment({ source: { paymentMethod } }));
      assert.equal(outcome.status, 'declined', `${kind} ${paymentMethod}: ${JSON.stringify(outcome)}`);
      assert.equal(outcome.status === 'declined' && outcome.declineCode, declineCode, paymentMethod);
      assert.deepEqual(outcome.status === 'declined' && outcome.card, { brand: 'visa', last4 });
      assert.ok(outcome.status === 'declined' && outcome.message.length > 0);
    }
  }
  // A refusal is answered once, not retried: one request per payment.
  assert.equal(fake.requests.length, cases.length * 2);
  assert.ok(fake.all('payment_intent').every((pi) => pi.status === 'requires_payment_method'));
});

test("Stripe's decline_code, or its error code when there is none, picks our decline code; others are generic", async (t) => {
  const cases: [{ code: string; decline_code?: string }, DeclineCode][] = [
    [{ code: 'card_declined', decline_code: 'insufficient_funds' }, 'insufficient_funds'],
    [{ code: 'card_declined', decline_code: 'lost_card' }, 'lost_card'],
    [{ code: 'card_declined', decline_code: 'stolen_card' }, 'stolen_card'],
    [{ code: 'card_declined', decline_code: 'expired_card' }, 'expired_card'],
    [{ code: 'card_declined', decline_code: 'incorrect_cvc' }, 'incorrect_cvc'],
    [{ code: 'expired_card' }, 'expired_card'],
    [{ code: 'incorrect_cvc' }, 'incorrect_cvc'],
    [{ code: 'card_declined', decline_code: 'do_not_honor' }, 'generic_decline'],
    [{ code: 'card_declined', decline_code: 'fraudulent' }, 'generic_decline'],
    [{ code: 'card_declined', decline_code: 'generic_decline' }, 'generic_decline'],
    [{ code: 'card_declined' }, 'generic_decline'],
    [{ code: 'incorrect_number' }, 'generic_decline'],
  ];
  for (const [error, declineCode] of cases) {
    const { fake, processor } = await setup(t);
    fake.misbehave({
      answer: { kind: 'error', status: 402, error: { type: 'card_error', message: 'Refused.', ...error } },
    });
    const outcome = await processor.charge(payment());
    assert.deepEqual(
      outcome,
      { status: 'declined', declineCode, message: 'Refused.' },
      JSON.stringify(error),
    );
  }
});

test('a processing error is failed, and nothing is charged', async (t) => {
  const { fake, processor } = await setup(t);
  const outcome = await processor.charge(
    payment({ source: { paymentMethod: 'pm_card_chargeDeclinedProcessingError' } }),
  );
  assert.equal(outcome.status, 'failed', JSON.stringify(outcome));
  assert.ok(fake.all('payment_intent').every((pi) => pi.status !== 'succeeded'));
  assert.equal(fake.all('charge').length, 0);
});

test('a PaymentIntent answered back waiting for another payment method carries its refusal', async (t) => {
  const { fake, processor } = await setup(t);
  const refused = (code: string, decline_code?: string) => ({
    status: 'requires_payment_method',
    last_payment_error: { type: 'card_error', code, decline_code, message: 'Refused.' },
  });
  fake.misbehave({ times: 1, answer: { kind: 'patch', patch: refused('card_declined', 'stolen_card') } });
  const declined = await processor.charge(payment());
  assert.deepEqual(declined, {
    status: 'declined',
    declineCode: 'stolen_card',
    message: 'Refused.',
    card: { brand: 'visa', last4: '4242' },
  });
  fake.misbehave({ times: 1, answer: { kind: 'patch', patch: refused('processing_error') } });
  assert.equal((await processor.authorize(payment())).status, 'failed');
  fake.misbehave({ times: 1, answer: { kind: 'patch', patch: { status: 'requires_payment_method' } } });
  assert.equal((await processor.charge(payment())).status, 'unknown', 'no refusal to read: unknown');
});

test('requests Stripe refuses (400, 401, 403) are failed: Stripe did nothing', async (t) => {
  const refusals: [number, { type: string; code?: string; message: string }][] = [
    [
      400,
      {
        type: 'invalid_request_error',
        code: 'parameter_invalid_integer',
        message: 'Invalid integer: amount',
      },
    ],
    [401, { type: 'invalid_request_error', message: 'Invalid API Key provided.' }],
    [
      403,
      {
        type: 'invalid_request_error',
        code: 'secret_key_required',
        message: 'This API call cannot be made with a publishable API key.',
      },
    ],
  ];
  for (const [status, error] of refusals) {
    const { fake, processor } = await setup(t);
    fake.misbehave({ answer: { kind: 'error', status, error } });
    const outcome = await processor.charge(payment());
    assert.equal(outcome.status, 'failed', `${status}: ${JSON.stringify(outcome)}`);
    assert.equal(fake.requests.length, 1, `${status} is not retried`);
  }
  // And a wrong secret key, as the fake (like Stripe) answers it.
  const { fake, processor } = await setup(t, { secretKey: 'sk_test_notthekey' });
  const outcome = await processor.transfer(transferOf());
  assert.equal(outcome.status, 'failed', JSON.stringify(outcome));
  assert.equal(fake.all('transfer').length, 0);
});

test('a 500 is retried twice with the same key, then unknown', async (t) => {
  const { fake, processor } = await setup(t);
  fake.misbehave({ answer: { kind: 'error500' } });
  const request = payment();
  const outcome = await processor.charge(request);
  assert.equal(outcome.status, 'unknown', JSON.stringify(outcome));
  assert.equal(fake.requests.length, 3);
  assert.deepEqual(
    fake.requests.map((r) => r.idempotencyKey),
    [request.key, request.key, request.key],
  );
});

test('a 500 the client outlasts: its retry with the same key succeeds, and one PaymentIntent is made', async (t) => {
  const { fake, processor } = await setup(t);
  fake.misbehave({ times: 1, answer: { kind: 'error500' } });
  const outcome = succeeded(await processor.charge(payment()));
  assert.equal(fake.requests.length, 2);
  assert.deepEqual(
    fake.all('payment_intent').map((pi) => pi.id),
    [outcome.processorId],
  );
});

test('a rate limit the retries do not outlast is unknown', async (t) => {
  const { processor, fake } = await setup(t);
  fake.misbehave({
    answer: {
      kind: 'error',
      status: 429,
      error: { type: 'invalid_request_error', code: 'rate_limit', message: 'Too many requests.' },
    },
  });
  const outcome = await processor.refund(followUp('pi_any'));
  assert.equal(outcome.status, 'unknown', JSON.stringify(outcome));
});

test('no answer within the timeout, three times, is unknown', async (t) => {
  const { fake, processor } = await setup(t, { timeoutMs: 150 });
  fake.misbehave({ answer: { kind: 'hang' } });
  const request = payment();
  const started = Date.now();
  const outcome = await processor.charge(request);
  assert.equal(outcome.status, 'unknown', JSON.stringify(outcome));
  assert.match(outcome.status === 'unknown' ? outcome.message : '', /timeout/);
  assert.equal(fake.requests.length, 3);
  assert.ok(fake.requests.every((r) => r.idempotencyKey === request.key));
  assert.ok(Date.now() - started >= 3 * 150, 'each attempt waited for the timeout');
});

test('a PaymentIntent in a status we did not ask for is unknown, never saved as known', async (t) => {
  const { fake, processor } = await setup(t);
  const action = await processor.charge(
    payment({ source: { paymentMethod: 'pm_card_authenticationRequired' } }),
  );
  assert.equal(action.status, 'unknown', JSON.stringify(action));
  assert.match(action.status === 'unknown' ? action.message : '', /requires_action/);

  const cases: ['charge' | 'authorize', string][] = [
    ['charge', 'processing'],
    ['charge', 'requires_capture'],
    ['authorize', 'succeeded'],
    ['authorize', 'processing'],
    ['charge', 'some_new_status'],
  ];
  for (const [kind, status] of cases) {
    fake.misbehave({ times: 1, answer: { kind: 'patch', patch: { status } } });
    const outcome = await processor[kind](payment());
    assert.equal(outcome.status, 'unknown', `${kind} answered ${status}: ${JSON.stringify(outcome)}`);
  }
});

test('retrieve after a lost answer: the same request and key again, the saved answer, no second charge', async (t) => {
  const { fake, processor } = await setup(t, { timeoutMs: 150 });
  fake.misbehave({ times: 3, answer: { kind: 'hang-after' } });
  const operation: Operation = { kind: 'charge', ...payment() };
  const lost = await processor.charge(operation);
  assert.equal(lost.status, 'unknown', JSON.stringify(lost));
  assert.equal(fake.all('payment_intent').length, 1, 'Stripe made the charge; its answer was lost');

  const found = succeeded((await processor.retrieve(operation)) as Outcome);
  const [pi] = fake.all('payment_intent');
  assert.equal(found.processorId, pi?.id);
  assert.equal(fake.all('payment_intent').length, 1, 'no second PaymentIntent');
  assert.equal(fake.all('charge').length, 1, 'no second charge');
  assert.equal(fake.requests.length, 4);
  const [first, , , replay] = fake.requests;
  assert.equal(replay?.idempotencyKey, operation.key);
  assert.deepEqual(replay?.params, first?.params, 'the very same parameters, or Stripe refuses the key');
  assert.equal(replay?.replayed, true);
});

test('retrieve of a request that never arrived runs it now, once', async (t) => {
  const { fake, processor } = await setup(t, { timeoutMs: 150 });
  fake.misbehave({ times: 3, answer: { kind: 'hang' } });
  const operation: Operation = { kind: 'authorize', ...payment() };
  assert.equal((await processor.authorize(operation)).status, 'unknown');
  assert.equal(fake.all('payment_intent').length, 0);

  const found = succeeded((await processor.retrieve(operation)) as Outcome);
  assert.deepEqual(
    fake.all('payment_intent').map((pi) => [pi.id, pi.status]),
    [[found.processorId, 'requires_capture']],
  );
  const again = succeeded((await processor.retrieve(operation)) as Outcome);
  assert.equal(again.processorId, found.processorId);
  assert.equal(fake.all('payment_intent').length, 1);
});

test('retrieve answers every kind of operation as its first answer, and never undefined', async (t) => {
  const { fake, processor } = await setup(t);
  const hold = await paid(processor, 'authorize');
  const charge = await paid(processor, 'charge');
  const operations: Operation[] = [
    { kind: 'charge', ...payment({ source: { paymentMethod: 'pm_card_chargeDeclinedInsufficientFunds' } }) },
    { kind: 'capture', ...followUp(hold) },
    { kind: 'refund', ...followUp(charge) },
    { kind: 'transfer', ...transferOf() },
    { kind: 'transfer', ...transferOf({ destination: null }) },
  ];
  for (const operation of operations) {
    const first = await processor.retrieve(operation);
    const before =
      fake.all('payment_intent').length + fake.all('refund').length + fake.all('transfer').length;
    const second = await processor.retrieve(operation);
    const after = fake.all('payment_intent').length + fake.all('refund').length + fake.all('transfer').length;
    assert.notEqual(first, undefined);
    assert.deepEqual(second, first, operation.kind);
    assert.equal(after, before, `${operation.kind}: nothing new made by the second retrieve`);
  }
  assert.equal(fake.all('refund').length, 1);
  assert.equal(fake.all('transfer').length, 1);
  const declined = await processor.retrieve(operations[0] as Operation);
  assert.equal(declined?.status === 'declined' && declined.declineCode, 'insufficient_funds');
});

test('a key reused with other parameters is unknown: the first request with it may have run', async (t) => {
  const { fake, processor } = await setup(t);
  const request = payment();
  succeeded(await processor.charge(request));
  const outcome = await processor.charge({ ...request, amountCents: 9_999 });
  assert.equal(outcome.status, 'unknown', JSON.stringify(outcome));
  assert.equal(fake.all('payment_intent').length, 1);
});

test("lookup: Stripe's record of each kind of operation", async (t) => {
  const { fake, processor } = await setup(t);
  const charge = await paid(processor, 'charge');
  const captured = await paid(processor, 'authorize', { amountCents: 700 });
  succeeded(await processor.capture(followUp(captured, { amountCents: 700 })));
  const held = await paid(processor, 'authorize', { amountCents: 800 });
  const released = await paid(processor, 'authorize', { amountCents: 900 });
  succeeded(await processor.release(followUp(released, { amountCents: 900 })));
  const refunded = await paid(processor, 'charge', { amountCents: 1_000 });
  const refund = succeeded(await processor.refund(followUp(refunded, { amountCents: 1_000 }))).processorId;
  const transfer = succeeded(await processor.transfer(transferOf())).processorId;

  const record = (processorId: string, kind: Operation['kind'], amountCents: number, state: string) => ({
    processorId,
    kind,
    amountCents,
    currency: 'eur',
    state,
  });
  assert.deepEqual(await processor.lookup('charge', charge), record(charge, 'charge', 2_550, 'succeeded'));
  assert.deepEqual(await processor.lookup('authorize', held), record(held, 'authorize', 800, 'authorized'));
  assert.deepEqual(
    await processor.lookup('authorize', captured),
    record(captured, 'authorize', 700, 'captured'),
  );
  assert.deepEqual(
    await processor.lookup('capture', captured),
    record(captured, 'capture', 700, 'succeeded'),
  );
  assert.deepEqual(
    await processor.lookup('authorize', released),
    record(released, 'authorize', 900, 'released'),
  );
  assert.deepEqual(
    await processor.lookup('release', released),
    record(released, 'release', 900, 'succeeded'),
  );
  assert.deepEqual(await processor.lookup('charge', refunded), record(refunded, 'charge', 1_000, 'refunded'));
  assert.deepEqual(await processor.lookup('refund', refund), record(refund, 'refund', 1_000, 'succeeded'));
  assert.deepEqual(
    await processor.lookup('transfer', transfer),
    record(transfer, 'transfer', 9_000, 'succeeded'),
  );

  const reads = fake.requests.filter((r) => r.method === 'GET');
  assert.equal(reads.length, 9);
  assert.ok(reads.every((r) => r.idempotencyKey === undefined));
  assert.deepEqual(
    reads.filter((r) => r.path.startsWith('/v1/payment_intents/')).map((r) => r.params),
    Array(7).fill({ expand: ['latest_charge'] }),
  );
});

test('lookup: a partly refunded charge still stands; what Stripe does not have is undefined', async (t) => {
  const { processor } = await setup(t);
  const charge = await paid(processor, 'charge');
  succeeded(await processor.refund(followUp(charge, { amountCents: 50 })));
  assert.equal((await processor.lookup('charge', charge))?.state, 'succeeded');

  assert.equal(await processor.lookup('charge', 'pi_doesnotexist'), undefined);
  assert.equal(await processor.lookup('authorize', 'pi_doesnotexist'), undefined);
  assert.equal(await processor.lookup('refund', 're_doesnotexist'), undefined);
  assert.equal(await processor.lookup('transfer', 'tr_doesnotexist'), undefined);
});

test('lookup: a PaymentIntent still processing, or Stripe out of reach, is an error rather than a record', async (t) => {
  const { fake, processor } = await setup(t);
  const charge = await paid(processor, 'charge');
  fake.misbehave({ method: 'GET', times: 1, answer: { kind: 'patch', patch: { status: 'processing' } } });
  await assert.rejects(processor.lookup('charge', charge), /processing/);
  fake.misbehave({ method: 'GET', answer: { kind: 'error500' } });
  await assert.rejects(processor.lookup('charge', charge));
});

test('a 409 (the key still in use) is unknown, not a refusal: the first request may yet run', async (t) => {
  const { fake, processor } = await setup(t);
  fake.misbehave({
    method: 'POST',
    path: /^\/v1\/payment_intents$/,
    answer: {
      kind: 'error',
      status: 409,
      error: { type: 'idempotency_error', code: 'idempotency_key_in_use', message: 'in use' },
    },
  });
  assert.equal((await processor.charge(payment())).status, 'unknown');
});

test('a PaymentMethod Stripe does not know is the payer’s to replace (invalid_payment_method)', async (t) => {
  const { fake, processor } = await setup(t);
  fake.misbehave({
    method: 'POST',
    path: /^\/v1\/payment_intents$/,
    answer: {
      kind: 'error',
      status: 400,
      error: {
        type: 'invalid_request_error',
        code: 'resource_missing',
        param: 'payment_method',
        message: "No such PaymentMethod: 'pm_garbage'",
      },
    },
  });
  const outcome = await processor.charge(payment({ source: { paymentMethod: 'pm_garbage' } }));
  assert.equal(outcome.status, 'failed');
  assert.equal(outcome.status === 'failed' ? outcome.reason : undefined, 'invalid_payment_method');
});

test('recovering: our credentials refused now say nothing about the first request (unknown)', async (t) => {
  const { fake, processor } = await setup(t);
  fake.misbehave({
    method: 'POST',
    path: /^\/v1\/payment_intents$/,
    answer: {
      kind: 'error',
      status: 401,
      error: { type: 'invalid_request_error', message: 'Invalid API Key provided' },
    },
  });
  const request = payment();
  // A first call refused for our credentials certainly did nothing…
  assert.equal((await processor.charge(request)).status, 'failed');
  // …but the same refusal when asking what became of an earlier call is unknown.
  assert.equal((await processor.retrieve({ kind: 'charge', ...request }))?.status, 'unknown');
});
