// The Stripe processor (processor/stripe.ts) against a fake of Stripe's API (helpers/fake-stripe.ts), through
// the real `stripe` client: what it sends for each operation (parameters, Idempotency-Key), and what each
// Stripe answer or failure becomes (succeeded, declined, failed, unknown, action_required); retrieve by
// reading Stripe's objects (never by sending the request again); giving up an abandoned authentication;
// Stripe's webhooks verified and read; lookup of Stripe's own records.
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { CONNECTION_IDLE_MS } from '../../src/http/slow-clients.ts';
import { createStripeProcessor, LONGEST_CALL_MS } from '../../src/processor/stripe.ts';
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
import { FAKE_WEBHOOK_SECRET, stripeEvent, stripeSignature } from '../helpers/stripe-webhooks.ts';

/** A fake Stripe and a processor pointed at it, closed when the test ends. */
async function setup(
  t: TestContext,
  options: { timeoutMs?: number; secretKey?: string; webhookSecret?: string | null } = {},
) {
  const fake = await startFakeStripe();
  t.after(() => fake.close());
  const processor = createStripeProcessor({
    secretKey: options.secretKey ?? FAKE_SECRET_KEY,
    ...(options.webhookSecret !== null && { webhookSecret: options.webhookSecret ?? FAKE_WEBHOOK_SECRET }),
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

test('capture: a card refused at capture is declined, and its hold let go; capturing what is no hold is failed', async (t) => {
  const { fake, processor } = await setup(t);
  const hold = await paid(processor, 'authorize', { source: { paymentMethod: 'pm_fake_declinedAtCapture' } });
  const request = followUp(hold);
  const declined = await processor.capture(request);
  assert.equal(declined.status, 'declined', JSON.stringify(declined));
  assert.equal(declined.status === 'declined' && declined.declineCode, 'generic_decline');
  // The member owes their share again and may pay anew: the refused hold does not stay on their card.
  const cancel = only(fake, 'POST', /\/cancel$/);
  assert.equal(cancel.path, `/v1/payment_intents/${hold}/cancel`);
  assert.equal(cancel.idempotencyKey, `${request.key}:release`);
  assert.equal(fake.objects.get(hold)?.status, 'canceled');

  const charged = await paid(processor, 'charge');
  const twice = await processor.capture(followUp(charged));
  assert.equal(twice.status, 'failed', JSON.stringify(twice));
  assert.match(twice.status === 'failed' ? twice.message : '', /payment_intent_unexpected_state/);

  const none = await processor.capture(followUp('pi_doesnotexist'));
  assert.equal(none.status, 'failed', JSON.stringify(none));
  assert.match(none.status === 'failed' ? none.message : '', /resource_missing/);
});

test('capture: a declined capture whose hold Stripe does not let go yet is unknown; sent again, the decline comes from the key and the hold goes', async (t) => {
  const { fake, processor } = await setup(t);
  const hold = await paid(processor, 'authorize', { source: { paymentMethod: 'pm_fake_declinedAtCapture' } });
  const request = followUp(hold);
  fake.misbehave({ method: 'POST', path: /\/cancel$/, times: 3, answer: { kind: 'error500' } });
  const first = await processor.capture(request);
  assert.equal(first.status, 'unknown', JSON.stringify(first));
  assert.match(first.status === 'unknown' ? first.message : '', /hold could not be released/);
  assert.equal(fake.objects.get(hold)?.status, 'requires_capture');
  // What recovery does with an unknown capture whose hold is still there: the capture again, same key.
  assert.equal(await processor.retrieve({ kind: 'capture', ...request }), undefined);
  const again = await processor.capture(request);
  assert.equal(again.status, 'declined', JSON.stringify(again));
  assert.equal(fake.objects.get(hold)?.status, 'canceled');
});

test('capture: a hold no longer there (lapsed, or let go after a decline) is declined, when captured or read back', async (t) => {
  const { fake, processor } = await setup(t);
  const hold = await paid(processor, 'authorize');
  succeeded(await processor.release(followUp(hold)));
  const request = followUp(hold);
  const captured = await processor.capture(request);
  assert.equal(captured.status, 'declined', JSON.stringify(captured));
  const read = await processor.retrieve({ kind: 'capture', ...request });
  assert.equal(read?.status, 'declined', JSON.stringify(read));
  assert.equal(fake.all('payment_intent').length, 1);
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
  assert.deepEqual(outcome, {
    status: 'succeeded',
    processorId: refund?.id,
    amountCents: 2_550,
    pending: false,
  });
  assert.match(outcome.processorId, /^re_/);
});

test('refund: pending is taken and on its way back (succeeded, pending); failed and canceled are failed; an odd status is unknown', async (t) => {
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
    if (outcome.status === 'succeeded') assert.equal(outcome.pending, status === 'pending');
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

test('retrieve after a lost answer reads the PaymentIntent, found by our key in its metadata, and sends nothing again', async (t) => {
  const { fake, processor } = await setup(t, { timeoutMs: 150 });
  fake.misbehave({ times: 3, answer: { kind: 'hang-after' } });
  const operation: Operation = { kind: 'charge', ...payment() };
  const lost = await processor.charge(operation);
  assert.equal(lost.status, 'unknown', JSON.stringify(lost));
  assert.equal(fake.all('payment_intent').length, 1, 'Stripe made the charge; its answer was lost');

  const found = succeeded((await processor.retrieve(operation)) as Outcome);
  const [pi] = fake.all('payment_intent');
  assert.equal(found.processorId, pi?.id);
  assert.deepEqual(found.card, { brand: 'visa', last4: '4242' });
  const search = only(fake, 'GET', /^\/v1\/payment_intents\/search$/);
  assert.equal(search.params.query, `metadata['gc_key']:'${operation.key}'`);
  assert.equal(
    fake.requests.filter((r) => r.method === 'POST').length,
    3,
    'the three tries of the first call, and no create sent again',
  );
  assert.equal(fake.all('charge').length, 1, 'no second charge');
});

test('retrieve of a request that never arrived is undefined, and makes nothing', async (t) => {
  const { fake, processor } = await setup(t, { timeoutMs: 150 });
  fake.misbehave({ times: 3, answer: { kind: 'hang' } });
  const operation: Operation = { kind: 'authorize', ...payment() };
  assert.equal((await processor.authorize(operation)).status, 'unknown');
  assert.equal(fake.all('payment_intent').length, 0);
  assert.equal(await processor.retrieve(operation), undefined);
  assert.equal(fake.all('payment_intent').length, 0, 'nothing made by the retrieve');
});

test('retrieve of a PaymentIntent by its id reads its status now, not the answer Stripe kept for the key', async (t) => {
  const { fake, processor } = await setup(t);
  const operation: Operation = {
    kind: 'charge',
    ...payment({ source: { paymentMethod: 'pm_card_authenticationRequired' } }),
  };
  const first = await processor.charge(operation);
  assert.equal(first.status, 'action_required', JSON.stringify(first));
  const { processorId } = first as Extract<Outcome, { status: 'action_required' }>;
  assert.equal((await processor.retrieve(operation, processorId))?.status, 'action_required');
  fake.authenticate(processorId, 'succeed');
  const now = succeeded((await processor.retrieve(operation, processorId)) as Outcome);
  assert.equal(now.processorId, processorId);
  assert.deepEqual(
    fake.requests.filter((r) => r.method === 'POST').map((r) => r.path),
    ['/v1/payment_intents'],
    'the create was sent once',
  );
  const reads = fake.requests.filter(
    (r) => r.method === 'GET' && r.path === `/v1/payment_intents/${processorId}`,
  );
  assert.equal(reads.length, 2, 'read by its id, twice');
});

test("retrieve reads each kind of operation from Stripe's objects and never makes one", async (t) => {
  const { fake, processor } = await setup(t);
  const hold = await paid(processor, 'authorize');
  const charge = await paid(processor, 'charge');
  const capture: Operation = { kind: 'capture', ...followUp(hold) };
  const refund: Operation = { kind: 'refund', ...followUp(charge) };
  const transfer: Operation = { kind: 'transfer', ...transferOf() };
  const made = () =>
    fake.all('payment_intent').length + fake.all('refund').length + fake.all('transfer').length;

  // Never sent: Stripe has nothing of them.
  const before = made();
  assert.equal(await processor.retrieve(capture), undefined, 'the hold is still a hold');
  assert.equal(await processor.retrieve(refund), undefined);
  assert.equal(await processor.retrieve(transfer), undefined);
  assert.equal(made(), before, 'nothing made by looking');

  // Sent: found by the hold they acted on, or by our key in their metadata.
  const captured = succeeded(await processor.capture(capture as FollowUpRequest));
  const refunded = succeeded(await processor.refund(refund as FollowUpRequest));
  const transferred = succeeded(await processor.transfer(transfer as TransferRequest));
  assert.equal(succeeded((await processor.retrieve(capture)) as Outcome).processorId, captured.processorId);
  assert.equal(succeeded((await processor.retrieve(refund)) as Outcome).processorId, refunded.processorId);
  assert.equal(
    succeeded((await processor.retrieve(transfer)) as Outcome).processorId,
    transferred.processorId,
  );
  assert.equal(made(), before + 2, 'one refund and one transfer, made by their own calls');

  // A declined charge is found declined, with its reason.
  const declined: Operation = {
    kind: 'charge',
    ...payment({ source: { paymentMethod: 'pm_card_chargeDeclinedInsufficientFunds' } }),
  };
  assert.equal((await processor.charge(declined as PaymentRequest)).status, 'declined');
  const again = await processor.retrieve(declined);
  assert.equal(again?.status === 'declined' && again.declineCode, 'insufficient_funds');
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
    path: /^\/v1\/payment_intents/,
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
  assert.equal((await processor.retrieve({ kind: 'charge', ...request }, 'pi_known'))?.status, 'unknown');
});

test('3-D Secure: a card whose bank asks for it answers action_required with the client secret, and nothing is taken', async (t) => {
  const { fake, processor } = await setup(t);
  for (const kind of ['charge', 'authorize'] as const) {
    const request = payment({
      source: { paymentMethod: 'pm_card_authenticationRequired' },
      returnUrl: 'https://pay.example/s/shr_abc',
    });
    const outcome = await processor[kind](request);
    assert.equal(outcome.status, 'action_required', JSON.stringify(outcome));
    const pi = fake.objects.get((outcome as { processorId: string }).processorId);
    assert.equal(pi?.status, 'requires_action');
    assert.deepEqual(outcome, {
      status: 'action_required',
      processorId: pi?.id,
      clientSecret: pi?.client_secret,
      card: { brand: 'visa', last4: '3184' },
    });
    const sent = fake.requests.filter((r) => r.method === 'POST' && r.path === '/v1/payment_intents').at(-1);
    assert.equal(
      sent?.params.return_url,
      'https://pay.example/s/shr_abc',
      'the bank brings the payer back to their page',
    );
    assert.equal(
      sent?.params.error_on_requires_action,
      undefined,
      'authentication is asked for, not refused',
    );
  }
  assert.equal(fake.all('charge').length, 0);
});

test('3-D Secure: completed, the PaymentIntent reads as succeeded (a hold as authorized); failed, as declined with a sentence', async (t) => {
  const { fake, processor } = await setup(t);
  const start = async (kind: 'charge' | 'authorize') => {
    const request = payment({ source: { paymentMethod: 'pm_card_authenticationRequired' } });
    const outcome = (await processor[kind](request)) as Extract<Outcome, { status: 'action_required' }>;
    return { operation: { kind, ...request } as Operation, id: outcome.processorId };
  };
  const charge = await start('charge');
  fake.authenticate(charge.id, 'succeed');
  assert.equal(
    succeeded((await processor.retrieve(charge.operation, charge.id)) as Outcome).amountCents,
    2_550,
  );
  const hold = await start('authorize');
  fake.authenticate(hold.id, 'succeed');
  succeeded((await processor.retrieve(hold.operation, hold.id)) as Outcome);
  assert.equal(fake.objects.get(hold.id)?.status, 'requires_capture');
  const refused = await start('charge');
  fake.authenticate(refused.id, 'fail');
  const declined = await processor.retrieve(refused.operation, refused.id);
  assert.equal(declined?.status, 'declined', JSON.stringify(declined));
  assert.match(declined?.status === 'declined' ? declined.message : '', /bank could not confirm/);
});

test('cancelOpen: an abandoned authentication is cancelled (failed, nothing taken); one completed first is left as it is', async (t) => {
  const { fake, processor } = await setup(t);
  const start = async (kind: 'charge' | 'authorize') => {
    const request = payment({ source: { paymentMethod: 'pm_card_authenticationRequired' } });
    const outcome = (await processor[kind](request)) as Extract<Outcome, { status: 'action_required' }>;
    return { operation: { kind, ...request } as Operation, id: outcome.processorId };
  };
  const abandoned = await start('charge');
  const gaveUp = await processor.cancelOpen(abandoned.operation, abandoned.id);
  assert.equal(gaveUp.status, 'failed', JSON.stringify(gaveUp));
  assert.equal(fake.objects.get(abandoned.id)?.status, 'canceled');
  const cancel = fake.requests.find((r) => r.path === `/v1/payment_intents/${abandoned.id}/cancel`);
  assert.equal(cancel?.params.cancellation_reason, 'abandoned');

  // The payer finished just before the timeout: the hold stands, and is not cancelled (that would let it go).
  const completed = await start('authorize');
  fake.authenticate(completed.id, 'succeed');
  succeeded(await processor.cancelOpen(completed.operation, completed.id));
  assert.equal(fake.objects.get(completed.id)?.status, 'requires_capture');
  assert.equal(
    fake.requests.some((r) => r.path === `/v1/payment_intents/${completed.id}/cancel`),
    false,
    'nothing cancelled',
  );
  // Stripe out of reach: unknown, asked again later.
  const unreachable = await start('charge');
  fake.misbehave({ answer: { kind: 'error500' } });
  assert.equal((await processor.cancelOpen(unreachable.operation, unreachable.id)).status, 'unknown');
});

describe("Stripe's webhooks, verified on the raw body and read", () => {
  const parse = async (
    t: TestContext,
    body: string,
    signature: string | undefined,
    webhookSecret?: string | null,
  ) => {
    const { processor } = await setup(t, { webhookSecret });
    return () => processor.webhooks?.parse(Buffer.from(body), signature);
  };
  const pi = {
    id: 'pi_123',
    object: 'payment_intent',
    status: 'succeeded',
    metadata: { gc_key: 'gc_charge_mem_1_1' },
  };

  test('a good signature: the event as ours', async (t) => {
    const body = JSON.stringify(stripeEvent('payment_intent.succeeded', pi, 'evt_good'));
    const read = await parse(t, body, stripeSignature(body));
    assert.deepEqual(read(), {
      id: 'evt_good',
      type: 'payment.updated',
      paymentId: 'pi_123',
      key: 'gc_charge_mem_1_1',
    });
  });

  test('a missing, wrong or stale signature, or a body changed after signing, is refused', async (t) => {
    const body = JSON.stringify(stripeEvent('payment_intent.succeeded', pi));
    const refused = async (bodyText: string, signature: string | undefined, why: RegExp) => {
      const read = await parse(t, bodyText, signature);
      assert.throws(read, (error: Error) => error.name === 'Error' && why.test(error.message));
    };
    await refused(body, undefined, /Stripe-Signature header is missing/);
    await refused(body, stripeSignature(body, { secret: 'whsec_another0secret0entirely' }), /signature/i);
    await refused(
      body,
      stripeSignature(body, { timestamp: Math.floor(Date.now() / 1000) - 301 }),
      /tolerance|timestamp/i,
    );
    await refused(body.replace('pi_123', 'pi_999'), stripeSignature(body), /signature/i);
    const unconfigured = await parse(t, body, stripeSignature(body), null);
    assert.throws(unconfigured, /STRIPE_WEBHOOK_SECRET is not set/);
  });

  test('refunds that failed or reached the card, disputes opened and closed; other types are null', async (t) => {
    const read = async (type: string, object: Record<string, unknown>) => {
      const body = JSON.stringify(stripeEvent(type, object, 'evt_x'));
      return (await parse(t, body, stripeSignature(body)))();
    };
    assert.deepEqual(
      await read('charge.refund.updated', {
        id: 're_1',
        object: 'refund',
        status: 'failed',
        failure_reason: 'lost_or_stolen_card',
      }),
      { id: 'evt_x', type: 'refund.failed', refundId: 're_1', reason: 'lost_or_stolen_card' },
    );
    assert.deepEqual(await read('refund.updated', { id: 're_1', object: 'refund', status: 'succeeded' }), {
      id: 'evt_x',
      type: 'refund.succeeded',
      refundId: 're_1',
    });
    assert.equal(await read('refund.updated', { id: 're_1', object: 'refund', status: 'pending' }), null);
    const dispute = {
      id: 'du_1',
      object: 'dispute',
      amount: 2550,
      currency: 'eur',
      charge: 'ch_1',
      payment_intent: 'pi_123',
      reason: 'fraudulent',
      status: 'needs_response',
    };
    assert.deepEqual(await read('charge.dispute.created', dispute), {
      id: 'evt_x',
      type: 'dispute.opened',
      dispute: {
        id: 'du_1',
        paymentId: 'pi_123',
        amountCents: 2550,
        currency: 'eur',
        reason: 'fraudulent',
        status: 'needs_response',
      },
    });
    const closed = await read('charge.dispute.closed', { ...dispute, status: 'lost' });
    assert.equal(closed?.type === 'dispute.closed' && closed.dispute.status, 'lost');
    const warning = await read('charge.dispute.closed', { ...dispute, status: 'warning_closed' });
    assert.equal(warning?.type === 'dispute.closed' && warning.dispute.status, 'won');
    assert.equal(await read('customer.created', { id: 'cus_1', object: 'customer' }), null);
  });
});

test('a request waiting on the longest Stripe call is answered, not cut off as an idle connection', () => {
  // Three tries of 30 s: the payer must get the 503 that says not to pay again (docs/decisions.md#slow-clients).
  assert.ok(LONGEST_CALL_MS >= 92_000, String(LONGEST_CALL_MS));
  assert.ok(
    CONNECTION_IDLE_MS > LONGEST_CALL_MS + 10_000,
    `${CONNECTION_IDLE_MS} against ${LONGEST_CALL_MS}`,
  );
});
