// The Stripe implementation of PaymentProcessor (docs/decisions.md#payments), on the official `stripe`
// package: PaymentIntents (capture_method automatic for a charge, manual for a hold), PaymentIntent
// capture and cancel, Refunds, and Connect Transfers to the merchant's connected account.
//
// Every call carries our idempotency key as Stripe's Idempotency-Key, and every answer, object or thrown
// error, becomes our Outcome in one place: `outcomeOf`. Nothing here logs, and no card data passes
// through: the hosted page makes the PaymentMethod with Stripe.js, and we only send its id.
import Stripe from 'stripe';
import {
  type CardFacts,
  type DeclineCode,
  type FollowUpRequest,
  type Operation,
  type OperationKind,
  type Outcome,
  type PaymentProcessor,
  type PaymentRequest,
  type ProcessorRecord,
  perform,
  type TransferRequest,
} from './types.ts';

export interface StripeProcessorOptions {
  secretKey: string;
  /** Where the API is: api.stripe.com on 443 over https unless told (the tests point it at a fake). */
  host?: string;
  port?: number;
  protocol?: 'http' | 'https';
  /** How long one attempt waits for Stripe's answer, in milliseconds (default 30 s). */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;
/**
 * The client itself retries a request that got no answer (connection error, timeout), a 409 or a 5xx,
 * twice, with the same Idempotency-Key, waiting about half a second before each retry: three attempts
 * in all. Stripe answers a retry of a request it ran with the saved answer, so a retry never pays twice.
 */
const MAX_NETWORK_RETRIES = 2;

/** Our sentence for a refusal, when Stripe's card error carries no message of its own. */
const DECLINE_MESSAGES: Record<DeclineCode, string> = {
  generic_decline: 'Your card was declined.',
  insufficient_funds: 'Your card has insufficient funds.',
  expired_card: 'Your card has expired.',
  incorrect_cvc: "Your card's security code is incorrect.",
  lost_card: 'Your card was declined.',
  stolen_card: 'Your card was declined.',
};

const NO_CONNECTED_ACCOUNT =
  'the merchant has no connected Stripe account: set one with group-checkout merchant update --processor-account acct_…';

export function createStripeProcessor(options: StripeProcessorOptions): PaymentProcessor {
  const stripe = new Stripe(options.secretKey, {
    maxNetworkRetries: MAX_NETWORK_RETRIES,
    timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    appInfo: { name: 'Group Checkout' },
    ...(options.host !== undefined && { host: options.host }),
    ...(options.port !== undefined && { port: options.port }),
    ...(options.protocol !== undefined && { protocol: options.protocol }),
  });

  /** A PaymentIntent confirmed at once: capture_method automatic for a charge, manual for a hold. */
  const pay = (kind: 'charge' | 'authorize', request: PaymentRequest) => {
    const { source } = request;
    // The Stripe processor takes a PaymentMethod id made by the hosted page; a raw card is the sandbox's.
    if (!('paymentMethod' in source)) {
      return Promise.resolve<Outcome>({
        status: 'failed',
        message: 'the Stripe processor takes a payment_method made by Stripe.js, not card details',
      });
    }
    return settle(kind, () =>
      stripe.paymentIntents.create(
        {
          amount: request.amountCents,
          currency: request.currency,
          payment_method: source.paymentMethod,
          confirm: true,
          capture_method: kind === 'charge' ? 'automatic' : 'manual',
          // Confirmed on create, with no return_url: Stripe refuses that when the PaymentIntent could
          // take a payment method that redirects the payer, unless redirects are turned off here.
          // (payment_method_types ['card'] was the other way; the API version this package pins,
          // 2026-10-28.endive, refuses it with payment_method_types_no_longer_supported.) The hosted
          // page makes a card PaymentMethod with Stripe.js, and a card never redirects: 3-D Secure
          // answers requires_action instead.
          automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
          // A card that asks for 3-D Secure is refused as a decline rather than left waiting for an
          // authentication no page of ours can show yet: the payer is told, and can use another card.
          error_on_requires_action: true,
          metadata: { session_id: request.sessionId, member_id: request.memberId, gc_key: request.key },
          // The PaymentMethod comes back whole, so the card's brand and last four are in the answer.
          expand: ['payment_method'],
        },
        { idempotencyKey: request.key },
      ),
    );
  };

  const processor: PaymentProcessor = {
    name: 'stripe',
    charge: (request) => pay('charge', request),
    authorize: (request) => pay('authorize', request),
    capture: (request: FollowUpRequest) =>
      settle('capture', () =>
        stripe.paymentIntents.capture(
          request.paymentId,
          { amount_to_capture: request.amountCents },
          { idempotencyKey: request.key },
        ),
      ),
    release: (request: FollowUpRequest) =>
      settle('release', () =>
        stripe.paymentIntents.cancel(request.paymentId, {}, { idempotencyKey: request.key }),
      ),
    refund: (request: FollowUpRequest) =>
      settle('refund', () =>
        stripe.refunds.create(
          {
            payment_intent: request.paymentId,
            amount: request.amountCents,
            metadata: { session_id: request.sessionId, member_id: request.memberId, gc_key: request.key },
          },
          { idempotencyKey: request.key },
        ),
      ),
    transfer: (request: TransferRequest) => {
      const { destination } = request;
      if (destination === null)
        return Promise.resolve<Outcome>({ status: 'failed', message: NO_CONNECTED_ACCOUNT });
      return settle('transfer', () =>
        stripe.transfers.create(
          {
            amount: request.amountCents,
            currency: request.currency,
            destination,
            transfer_group: request.sessionId,
            metadata: { session_id: request.sessionId, gc_key: request.key },
          },
          { idempotencyKey: request.key },
        ),
      );
    },
    /**
     * Stripe has no lookup by idempotency key, so this sends the very same request again, with the same
     * Idempotency-Key and the same parameters (Stripe refuses a key reused with other parameters). Within
     * the 24 hours Stripe keeps a key, it answers the saved result of the first request if that one ran,
     * and runs the request now if it never arrived, which is what the attempt was for. So it never
     * answers `undefined`, and it may answer `unknown` again (Stripe still out of reach, or a saved 5xx).
     * After 24 hours Stripe may have forgotten the key and would run the request a second time: recover
     * attempts well within the day.
     */
    retrieve: async (operation: Operation) => {
      const outcome = await perform(processor, operation);
      // Our credentials refused now (a key rolled since, say) tell nothing about the first request.
      if (outcome.status === 'failed' && outcome.reason === 'not_allowed')
        return { status: 'unknown', message: outcome.message };
      return outcome;
    },
    lookup: (kind, processorId) => lookup(stripe, kind, processorId),
  };
  return processor;

  async function settle(kind: OperationKind, call: () => Promise<unknown>): Promise<Outcome> {
    try {
      return outcomeOf(kind, { answer: await call() });
    } catch (error) {
      return outcomeOf(kind, { error });
    }
  }
}

type Answer = { answer: unknown } | { error: unknown };

/**
 * The one place Stripe's answers become our outcomes: the object Stripe answered for `kind`, or the
 * error the client threw. What we cannot read is `unknown`, never a guess.
 */
function outcomeOf(kind: OperationKind, result: Answer): Outcome {
  if ('error' in result) return errorOutcome(result.error);
  const answer = result.answer as { id?: unknown; object?: unknown } | null;
  const unknown = (what: string): Outcome => ({
    status: 'unknown',
    message: `Stripe answered ${what} to a ${kind}; the attempt stays open`,
  });
  if (typeof answer !== 'object' || answer === null || typeof answer.id !== 'string') {
    return unknown('something that is not an object');
  }
  const id = answer.id;
  switch (kind) {
    case 'charge':
    case 'authorize':
    case 'capture':
    case 'release': {
      if (answer.object !== 'payment_intent') return unknown(`a ${String(answer.object)}`);
      const pi = answer as Stripe.PaymentIntent;
      const card = cardOf(pi.payment_method);
      const wanted = {
        charge: 'succeeded',
        authorize: 'requires_capture',
        capture: 'succeeded',
        release: 'canceled',
      }[kind];
      if (pi.status === wanted) {
        const amountCents =
          kind === 'authorize' ? pi.amount_capturable : kind === 'release' ? pi.amount : pi.amount_received;
        return { status: 'succeeded', processorId: id, amountCents, ...(card && { card }) };
      }
      // A confirm the card refused leaves the PaymentIntent waiting for another PaymentMethod, with the
      // refusal as its last_payment_error (Stripe normally throws it as a card error instead).
      const refusal = pi.last_payment_error;
      if (pi.status === 'requires_payment_method' && refusal?.type === 'card_error') {
        return cardRefusal(refusal.code, refusal.decline_code, refusal.message, card);
      }
      // requires_action (3-D Secure), processing, or a status we do not know: Stripe has not finished.
      return unknown(`a PaymentIntent in status ${JSON.stringify(pi.status)}`);
    }
    case 'refund': {
      if (answer.object !== 'refund') return unknown(`a ${String(answer.object)}`);
      const refund = answer as Stripe.Refund;
      // A card refund is usually `pending` at first: Stripe has taken it and the money is on its way
      // back to the card. It fails later only if the card is closed, and that is told by a webhook.
      if (refund.status === 'succeeded' || refund.status === 'pending') {
        return { status: 'succeeded', processorId: id, amountCents: refund.amount };
      }
      if (refund.status === 'failed' || refund.status === 'canceled') {
        const reason = refund.failure_reason ? ` (${refund.failure_reason})` : '';
        return { status: 'failed', message: `Stripe answered the refund ${refund.status}${reason}` };
      }
      return unknown(`a refund in status ${JSON.stringify(refund.status)}`);
    }
    case 'transfer': {
      // A Transfer has no status: Stripe answers one only when it made it.
      if (answer.object !== 'transfer') return unknown(`a ${String(answer.object)}`);
      return { status: 'succeeded', processorId: id, amountCents: (answer as Stripe.Transfer).amount };
    }
  }
}

function errorOutcome(error: unknown): Outcome {
  const { errors } = Stripe;
  if (error instanceof errors.StripeCardError) {
    return cardRefusal(error.code, error.decline_code, error.message, cardOf(error.payment_method));
  }
  // 409 (the key in use by a request still running, a lock timeout) and 429: the request with this key
  // may yet run, or may have run; it is not a refusal.
  const statusCode = error instanceof errors.StripeError ? error.statusCode : undefined;
  if (statusCode === 409 || statusCode === 429) {
    return { status: 'unknown', message: `Stripe answered ${statusCode}: ${(error as Error).message}` };
  }
  if (error instanceof errors.StripeAuthenticationError || error instanceof errors.StripePermissionError) {
    return {
      status: 'failed',
      reason: 'not_allowed',
      message: `Stripe refused our credentials: ${error.message}`,
    };
  }
  // 4xx but a card error: Stripe refused the request and certainly did nothing. A reused key with other
  // parameters (StripeIdempotencyError) is not one of these: the first request may have run.
  if (error instanceof errors.StripeInvalidRequestError) {
    const code = error.code ? ` (${error.code})` : '';
    const message = `Stripe refused the request${code}: ${error.message}`;
    // The payer's PaymentMethod is unknown or used up: theirs to replace, not a fault of ours.
    if (error.param?.startsWith('payment_method'))
      return { status: 'failed', reason: 'invalid_payment_method', message };
    return { status: 'failed', message };
  }
  // A lost connection, a timeout, a 5xx, a rate limit the client's retries did not outlast, an idempotency
  // conflict, or something we did not expect: Stripe may or may not have done it.
  const name =
    error instanceof errors.StripeError ? error.type : error instanceof Error ? error.name : 'error';
  const message = error instanceof Error ? error.message : String(error);
  return { status: 'unknown', message: `no answer from Stripe we can rely on (${name}): ${message}` };
}

/**
 * A card error as ours: Stripe's decline_code (or its error code) onto our DECLINE_CODES. A processing
 * error is Stripe's or the bank's, not the card's: failed, and nothing was charged.
 */
function cardRefusal(
  code: string | undefined,
  declineCode: string | undefined,
  message: string | undefined,
  card: CardFacts | undefined,
): Outcome {
  if (code === 'processing_error') {
    return { status: 'failed', message: `Stripe could not process the card: ${message ?? code}` };
  }
  const reason = declineCodeOf(code, declineCode);
  return {
    status: 'declined',
    declineCode: reason,
    message: message || DECLINE_MESSAGES[reason],
    ...(card && { card }),
  };
}

function declineCodeOf(code: string | undefined, declineCode: string | undefined): DeclineCode {
  switch (declineCode) {
    case 'insufficient_funds':
    case 'expired_card':
    case 'incorrect_cvc':
    case 'lost_card':
    case 'stolen_card':
      return declineCode;
  }
  // Stripe says expired and wrong-CVC cards in the error code (code expired_card, incorrect_cvc).
  if (code === 'expired_card' || code === 'incorrect_cvc') return code;
  return 'generic_decline';
}

/** The brand and last four of an expanded card PaymentMethod; nothing from an id or another kind. */
function cardOf(paymentMethod: string | Stripe.PaymentMethod | null | undefined): CardFacts | undefined {
  if (typeof paymentMethod !== 'object' || paymentMethod === null) return undefined;
  const card = paymentMethod.card;
  if (!card || typeof card.brand !== 'string' || typeof card.last4 !== 'string') return undefined;
  return { brand: card.brand, last4: card.last4 };
}

/**
 * Stripe's own record of an object we recorded as succeeded. Undefined when Stripe has no such object
 * (404 resource_missing); throws when Stripe cannot be asked, or when the object is in a state a
 * ProcessorRecord cannot say (a PaymentIntent still processing, a refund that failed later, a transfer
 * reversed): reconcile must not read those as standing.
 */
async function lookup(
  stripe: Stripe,
  kind: OperationKind,
  processorId: string,
): Promise<ProcessorRecord | undefined> {
  try {
    switch (kind) {
      case 'charge':
      case 'authorize':
      case 'capture':
      case 'release': {
        const pi = await stripe.paymentIntents.retrieve(processorId, { expand: ['latest_charge'] });
        return paymentIntentRecord(kind, pi);
      }
      case 'refund': {
        const refund = await stripe.refunds.retrieve(processorId);
        if (refund.status !== 'succeeded' && refund.status !== 'pending') {
          throw new Error(`Stripe refund ${refund.id} is ${refund.status}: it no longer stands`);
        }
        return record(refund.id, kind, refund.amount, refund.currency, 'succeeded');
      }
      case 'transfer': {
        const transfer = await stripe.transfers.retrieve(processorId);
        if (transfer.amount_reversed > 0) {
          throw new Error(`Stripe transfer ${transfer.id} was reversed (${transfer.amount_reversed})`);
        }
        return record(transfer.id, kind, transfer.amount, transfer.currency, 'succeeded');
      }
    }
  } catch (error) {
    if (error instanceof Stripe.errors.StripeInvalidRequestError && error.code === 'resource_missing') {
      return undefined;
    }
    throw error;
  }
}

function paymentIntentRecord(kind: OperationKind, pi: Stripe.PaymentIntent): ProcessorRecord {
  const held = (state: ProcessorRecord['state'], amount: number) =>
    record(pi.id, kind, amount, pi.currency, state);
  switch (pi.status) {
    case 'requires_capture':
      return held('authorized', pi.amount_capturable);
    case 'canceled':
      // The release of a hold succeeded; the hold it was is released.
      return held(kind === 'release' ? 'succeeded' : 'released', pi.amount);
    case 'succeeded': {
      const charge = typeof pi.latest_charge === 'object' ? pi.latest_charge : null;
      if (charge && charge.amount > 0 && charge.amount_refunded >= charge.amount) {
        return held('refunded', pi.amount_received);
      }
      return held(kind === 'authorize' ? 'captured' : 'succeeded', pi.amount_received);
    }
    default:
      throw new Error(`Stripe PaymentIntent ${pi.id} is ${pi.status}: not a state to compare`);
  }
}

function record(
  processorId: string,
  kind: OperationKind,
  amountCents: number,
  currency: string,
  state: ProcessorRecord['state'],
): ProcessorRecord {
  return { processorId, kind, amountCents, currency, state };
}
