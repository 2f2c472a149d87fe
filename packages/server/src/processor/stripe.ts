// The Stripe implementation of PaymentProcessor (docs/decisions.md#payments), on the official `stripe`
// package: PaymentIntents (capture_method automatic for a charge, manual for a hold), PaymentIntent
// capture and cancel, Refunds, and Connect Transfers to the merchant's connected account.
//
// Every call carries our idempotency key as Stripe's Idempotency-Key, and every answer, object or thrown
// error, becomes our Outcome in one place: `outcomeOf`. Nothing here logs, and no card data passes
// through: the hosted page makes the PaymentMethod with Stripe.js, and we only send its id.
//
// Our amounts are ISO 4217 minor units and Stripe's are its own (ISK in hundredths always ending in 00,
// MGA in whole ariary): every amount sent goes through processor/currencies.ts's `toStripeAmount`, every
// amount read back through its `fromStripeAmount` (one that cannot be read exactly is an answer we cannot
// rely on: unknown).
import Stripe from 'stripe';
import { CARD_CURRENCIES, fromStripeAmount, toStripeAmount } from './currencies.ts';
import {
  type CardFacts,
  type DeclineCode,
  type DisputeFacts,
  type FollowUpRequest,
  type OnboardingLink,
  type OnboardingRequest,
  type Operation,
  type OperationKind,
  type Outcome,
  type PaymentProcessor,
  type PaymentRequest,
  type ProcessorEvent,
  type ProcessorRecord,
  type TransferRequest,
  WebhookRefused,
} from './types.ts';

export interface StripeProcessorOptions {
  secretKey: string;
  /** Where the API is: api.stripe.com on 443 over https unless told (the tests point it at a fake). */
  host?: string;
  port?: number;
  protocol?: 'http' | 'https';
  /** How long one attempt waits for Stripe's answer, in milliseconds (default 30 s). */
  timeoutMs?: number;
  /** The signing secret of our endpoint for Stripe's webhooks (whsec_…); without it they are refused. */
  webhookSecret?: string;
}

/** How old a Stripe webhook's signed timestamp may be before we refuse it (replays), in seconds. */
const WEBHOOK_TOLERANCE_S = 300;

const DEFAULT_TIMEOUT_MS = 30_000;
/**
 * The client itself retries a request that got no answer (connection error, timeout), a 409 or a 5xx,
 * twice, with the same Idempotency-Key, waiting about half a second before each retry: three attempts
 * in all. Stripe answers a retry of a request it ran with the saved answer, so a retry never pays twice.
 */
const MAX_NETWORK_RETRIES = 2;

/**
 * The longest one call may take: every try timed out, and the client's back-offs between them (under a
 * second each). A request waiting on it must not be cut off before (http/slow-clients.ts).
 * @internal Exported for that test.
 */
export const LONGEST_CALL_MS = (MAX_NETWORK_RETRIES + 1) * DEFAULT_TIMEOUT_MS + 2_000;

/** Our sentence for a refusal, when Stripe's card error carries no message of its own. */
const DECLINE_MESSAGES: Record<DeclineCode, string> = {
  generic_decline: 'Your card was declined.',
  insufficient_funds: 'Your card has insufficient funds.',
  expired_card: 'Your card has expired.',
  incorrect_cvc: "Your card's security code is incorrect.",
  lost_card: 'Your card was declined.',
  stolen_card: 'Your card was declined.',
};

/** What the payer reads when their bank's authentication failed or was not completed. */
const AUTHENTICATION_FAILED =
  'Your bank could not confirm it was you, so the card was not charged. Try again, or use another card.';

/** Why an abandoned authentication's payment failed, as the payer's page reads it. */
const AUTHENTICATION_ABANDONED =
  "Your bank's check was not completed in time, so the card was not charged. Pay your share again when you are ready.";

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
    return send(kind, request, (amount) =>
      stripe.paymentIntents.create(
        {
          amount,
          currency: request.currency,
          payment_method: source.paymentMethod,
          confirm: true,
          capture_method: kind === 'charge' ? 'automatic' : 'manual',
          // The hosted page makes a card PaymentMethod with Stripe.js (wallets make card ones too), and no
          // payment method that redirects is offered. A card whose bank asks for 3-D Secure answers
          // requires_action: the page completes it in place with handleNextAction; should the bank still
          // send the payer to its own page, it brings them back to their share's page (return_url).
          automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
          ...(request.returnUrl && { return_url: request.returnUrl }),
          metadata: { session_id: request.sessionId, member_id: request.memberId, gc_key: request.key },
          // The PaymentMethod comes back whole, so the card's brand and last four are in the answer.
          expand: ['payment_method'],
        },
        { idempotencyKey: request.key },
      ),
    );
  };

  /**
   * Connect onboarding with Stripe's Account Links: an Express account is made the first time (it receives
   * transfers only: we charge on the platform and transfer, docs/decisions.md#payments), under an
   * idempotency key of the merchant's so that two presses make one account; then an account_onboarding
   * link to it, which works once and for a few minutes.
   */
  const connectOnboarding = async (request: OnboardingRequest): Promise<OnboardingLink> => {
    const accountId =
      request.accountId ??
      (
        await stripe.accounts.create(
          {
            type: 'express',
            capabilities: { transfers: { requested: true } },
            metadata: { merchant_id: request.merchantId },
          },
          { idempotencyKey: `gc-connect-account-${request.merchantId}` },
        )
      ).id;
    const link = await stripe.accountLinks.create({
      account: accountId,
      type: 'account_onboarding',
      return_url: request.returnUrl,
      refresh_url: request.refreshUrl,
    });
    return { accountId, url: link.url, expiresAt: link.expires_at * 1000 };
  };

  const processor: PaymentProcessor = {
    name: 'stripe',
    connectOnboarding,
    currencies: CARD_CURRENCIES,
    charge: (request) => pay('charge', request),
    authorize: (request) => pay('authorize', request),
    capture: async (request: FollowUpRequest) => {
      const outcome = await send('capture', request, (amount) =>
        stripe.paymentIntents.capture(
          request.paymentId,
          { amount_to_capture: amount },
          { idempotencyKey: request.key },
        ),
      );
      if (outcome.status === 'declined') return letHoldGo(request, outcome);
      // A hold that is no longer there to capture (it lapsed, or a declined capture let it go) is the
      // member's share owed again, as a decline is; anything else Stripe refused stays failed.
      if (outcome.status === 'failed' && (await holdGone(request.paymentId))) return HOLD_GONE;
      return outcome;
    },
    release: (request: FollowUpRequest) =>
      settle('release', () =>
        stripe.paymentIntents.cancel(request.paymentId, {}, { idempotencyKey: request.key }),
      ),
    refund: (request: FollowUpRequest) =>
      send('refund', request, (amount) =>
        stripe.refunds.create(
          {
            payment_intent: request.paymentId,
            amount,
            metadata: { session_id: request.sessionId, member_id: request.memberId, gc_key: request.key },
          },
          { idempotencyKey: request.key },
        ),
      ),
    transfer: (request: TransferRequest) => {
      const { destination } = request;
      if (destination === null)
        return Promise.resolve<Outcome>({ status: 'failed', message: NO_CONNECTED_ACCOUNT });
      return send('transfer', request, (amount) =>
        stripe.transfers.create(
          {
            amount,
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
     * Reads what became of an operation from Stripe's object, never by sending the operation again (a
     * create sent again with its Idempotency-Key is answered from Stripe's cache, with the status the
     * object had then: a PaymentIntent `processing` or `requires_action` would stay so for ever). A
     * PaymentIntent is read by its id when Stripe told us it, else found by our key in its metadata
     * (Search, which lags writes by up to a minute: recovery comes minutes later); a capture or release by
     * the hold it acted on; a refund or transfer by our key in its metadata. `undefined` when Stripe has no
     * such object: the request never reached it.
     */
    retrieve: (operation: Operation, processorId?: string | null) =>
      look(operation.kind, async () => {
        switch (operation.kind) {
          case 'charge':
          case 'authorize': {
            if (processorId)
              return stripe.paymentIntents.retrieve(processorId, { expand: ['payment_method'] });
            const found = await stripe.paymentIntents.search({
              query: `metadata['gc_key']:'${operation.key}'`,
              expand: ['data.payment_method'],
            });
            return found.data[0];
          }
          case 'capture':
          case 'release': {
            const pi = await stripe.paymentIntents.retrieve(operation.paymentId);
            const done = operation.kind === 'capture' ? 'succeeded' : 'canceled';
            // Still a hold: the capture or release never happened.
            if (pi.status === 'requires_capture') return undefined;
            // A capture whose hold is gone (declined, then let go) leaves the share owed again.
            if (operation.kind === 'capture' && pi.status === 'canceled') return { declined: true };
            if (pi.status !== done)
              return { failed: `the hold ${pi.id} is ${pi.status}: it can no longer be ${operation.kind}d` };
            return pi;
          }
          case 'refund': {
            const refunds = await stripe.refunds.list({ payment_intent: operation.paymentId, limit: 100 });
            return refunds.data.find((r) => r.metadata?.gc_key === operation.key);
          }
          case 'transfer': {
            const transfers = await stripe.transfers.list({
              transfer_group: operation.sessionId,
              limit: 100,
            });
            return transfers.data.find((t) => t.metadata?.gc_key === operation.key);
          }
        }
      }),
    /**
     * Gives up on a PaymentIntent waiting on the payer's authentication: read first, so that one the payer
     * completed meanwhile is recorded as it is rather than cancelled (cancelling a hold would let it go);
     * cancelled only while it still waits, and read again should Stripe refuse the cancel because it
     * moved on in between.
     */
    cancelOpen: async (operation: Operation, processorId: string): Promise<Outcome> => {
      const kind = operation.kind;
      const read = () =>
        look(kind, () => stripe.paymentIntents.retrieve(processorId, { expand: ['payment_method'] }));
      const now = (await read()) ?? {
        status: 'unknown',
        message: `Stripe has no PaymentIntent ${processorId}`,
      };
      if (now.status !== 'action_required') return now;
      try {
        await stripe.paymentIntents.cancel(processorId, { cancellation_reason: 'abandoned' });
        return { status: 'failed', message: AUTHENTICATION_ABANDONED };
      } catch (error) {
        // It moved on between the read and the cancel (the payer completed or failed it): read it again.
        if (
          error instanceof Stripe.errors.StripeInvalidRequestError &&
          error.code === 'payment_intent_unexpected_state'
        )
          return (
            (await read()) ?? { status: 'unknown', message: `Stripe has no PaymentIntent ${processorId}` }
          );
        const message = error instanceof Error ? error.message : String(error);
        return { status: 'unknown', message: `could not cancel ${processorId} at Stripe: ${message}` };
      }
    },
    webhooks: {
      parse: (body: Buffer, signature: string | undefined) => {
        if (!options.webhookSecret)
          throw new WebhookRefused("STRIPE_WEBHOOK_SECRET is not set: Stripe's webhooks cannot be verified");
        if (!signature) throw new WebhookRefused('the Stripe-Signature header is missing');
        let event: Stripe.Event;
        try {
          event = stripe.webhooks.constructEvent(body, signature, options.webhookSecret, WEBHOOK_TOLERANCE_S);
        } catch (error) {
          throw new WebhookRefused(error instanceof Error ? error.message : String(error));
        }
        return eventOf(event);
      },
    },
    lookup: (kind, processorId) => lookup(stripe, kind, processorId),
  };
  return processor;

  /**
   * A capture the card refused leaves the hold on it at Stripe (`requires_capture`) until it lapses days
   * later, while the member owes their share again and may pay anew: a second hold on the same card. So
   * the hold is cancelled before the decline is answered (docs/decisions.md#capture-declined). A hold
   * already cancelled (it lapsed) is as good. Should Stripe not answer, the capture is `unknown`: its
   * attempt stays open, recovery sends it again under its key, Stripe answers the same decline from its
   * idempotency cache, and the hold is let go then.
   */
  /** Whether the PaymentIntent `id` is cancelled (false when Stripe cannot say). */
  async function holdGone(id: string): Promise<boolean> {
    try {
      return (await stripe.paymentIntents.retrieve(id)).status === 'canceled';
    } catch {
      return false;
    }
  }

  async function letHoldGo(
    request: FollowUpRequest,
    declined: Extract<Outcome, { status: 'declined' }>,
  ): Promise<Outcome> {
    const released = await settle('release', () =>
      stripe.paymentIntents.cancel(request.paymentId, {}, { idempotencyKey: `${request.key}:release` }),
    );
    if (released.status === 'succeeded') return declined;
    if (await holdGone(request.paymentId)) return declined;
    const why = released.status === 'failed' || released.status === 'unknown' ? released.message : '';
    return {
      status: 'unknown',
      message: `the capture was declined, but its hold could not be released at Stripe yet: ${why}`,
    };
  }

  /**
   * Reads an outcome from an object Stripe holds: undefined when it has none, and never a refusal (a
   * failed read says nothing of the operation, so it is `unknown`).
   */
  async function look(
    kind: OperationKind,
    read: () => Promise<unknown | { failed: string } | { declined: true } | undefined>,
  ): Promise<Outcome | undefined> {
    try {
      const answer = await read();
      if (answer === undefined) return undefined;
      if (typeof answer === 'object' && answer !== null && 'declined' in answer) return HOLD_GONE;
      if (typeof answer === 'object' && answer !== null && 'failed' in answer)
        return { status: 'failed', message: String((answer as { failed: string }).failed) };
      return outcomeOf(kind, { answer });
    } catch (error) {
      if (error instanceof Stripe.errors.StripeInvalidRequestError && error.code === 'resource_missing')
        return undefined;
      const message = error instanceof Error ? error.message : String(error);
      return {
        status: 'unknown',
        message: `could not read what became of the ${kind} at Stripe: ${message}`,
      };
    }
  }

  /**
   * Calls Stripe with the request's amount in Stripe's unit, and reads the answer. An amount Stripe cannot
   * take exactly fails here, before anything is sent.
   */
  async function send(
    kind: OperationKind,
    request: { amountCents: number; currency: string },
    call: (amount: number) => Promise<unknown>,
  ): Promise<Outcome> {
    let amount: number;
    try {
      amount = toStripeAmount(request.currency, request.amountCents);
    } catch (error) {
      return { status: 'failed', message: `not sent to Stripe: ${(error as Error).message}` };
    }
    return settle(kind, () => call(amount));
  }

  async function settle(kind: OperationKind, call: () => Promise<unknown>): Promise<Outcome> {
    try {
      return outcomeOf(kind, { answer: await call() });
    } catch (error) {
      return outcomeOf(kind, { error });
    }
  }
}

type Answer = { answer: unknown } | { error: unknown };

/** A capture whose hold is no longer there: the share is owed again, as after a decline. */
const HOLD_GONE: Outcome = {
  status: 'declined',
  declineCode: 'generic_decline',
  message: 'The hold on the card lapsed or was let go before it was captured.',
};

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
        const amountCents = fromStripeAmount(
          pi.currency,
          kind === 'authorize' ? pi.amount_capturable : kind === 'release' ? pi.amount : pi.amount_received,
        );
        return { status: 'succeeded', processorId: id, amountCents, ...(card && { card }) };
      }
      if (kind === 'charge' || kind === 'authorize') {
        // The card's bank asks the payer to authenticate (3-D Secure): the page completes it.
        if (pi.status === 'requires_action' && pi.client_secret)
          return {
            status: 'action_required',
            processorId: id,
            clientSecret: pi.client_secret,
            ...(card && { card }),
          };
        // Given up (abandoned authentication, or the session closed first): nothing was taken.
        if (pi.status === 'canceled')
          return {
            status: 'failed',
            message: 'Stripe answered the PaymentIntent canceled; nothing was charged',
          };
      }
      // A confirm the card refused (or an authentication the payer failed) leaves the PaymentIntent
      // waiting for another PaymentMethod, with the refusal as its last_payment_error (Stripe normally
      // throws it as a card error instead).
      const refusal = pi.last_payment_error;
      if (pi.status === 'requires_payment_method' && refusal?.type === 'card_error') {
        return cardRefusal(refusal.code, refusal.decline_code, refusal.message, card);
      }
      if (
        pi.status === 'requires_payment_method' &&
        refusal?.code === 'payment_intent_authentication_failure'
      )
        return cardRefusal(refusal.code, undefined, AUTHENTICATION_FAILED, card);
      // processing, or a status we do not know: Stripe has not finished.
      return unknown(`a PaymentIntent in status ${JSON.stringify(pi.status)}`);
    }
    case 'refund': {
      if (answer.object !== 'refund') return unknown(`a ${String(answer.object)}`);
      const refund = answer as Stripe.Refund;
      // A card refund is usually `pending` at first: Stripe has taken it and the money is on its way
      // back to the card. It fails later only if the card is closed, and that is told by a webhook.
      if (refund.status === 'succeeded' || refund.status === 'pending') {
        return {
          status: 'succeeded',
          processorId: id,
          amountCents: fromStripeAmount(refund.currency, refund.amount),
          pending: refund.status === 'pending',
        };
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
      const transfer = answer as Stripe.Transfer;
      return {
        status: 'succeeded',
        processorId: id,
        amountCents: fromStripeAmount(transfer.currency, transfer.amount),
      };
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

/** A ProcessorRecord from Stripe's object: `stripeAmount` is in Stripe's unit, and read back to ours here. */
function record(
  processorId: string,
  kind: OperationKind,
  stripeAmount: number,
  currency: string,
  state: ProcessorRecord['state'],
): ProcessorRecord {
  return { processorId, kind, amountCents: fromStripeAmount(currency, stripeAmount), currency, state };
}

/** Stripe's dispute statuses as ours: an inquiry closed without a chargeback is won. */
function disputeStatus(status: Stripe.Dispute.Status): DisputeFacts['status'] {
  if (status === 'won' || status === 'warning_closed') return 'won';
  if (status === 'lost') return 'lost';
  return 'needs_response';
}

/**
 * The one place Stripe's events become ours (processor/types.ts ProcessorEvent); null for the types we do
 * not act on (they are still answered 200, so Stripe stops sending them).
 */
function eventOf(event: Stripe.Event): ProcessorEvent | null {
  switch (event.type) {
    case 'payment_intent.succeeded':
    case 'payment_intent.amount_capturable_updated':
    case 'payment_intent.payment_failed':
    case 'payment_intent.canceled':
    case 'payment_intent.processing':
    case 'payment_intent.requires_action': {
      const pi = event.data.object;
      return { id: event.id, type: 'payment.updated', paymentId: pi.id, key: pi.metadata?.gc_key ?? null };
    }
    case 'refund.updated':
    case 'refund.failed':
    case 'charge.refund.updated': {
      const refund = event.data.object;
      if (refund.status === 'succeeded')
        return { id: event.id, type: 'refund.succeeded', refundId: refund.id };
      if (refund.status !== 'failed') return null;
      return {
        id: event.id,
        type: 'refund.failed',
        refundId: refund.id,
        reason: refund.failure_reason ?? 'unknown',
      };
    }
    case 'charge.dispute.created':
    case 'charge.dispute.closed': {
      const dispute = event.data.object;
      const paymentId =
        typeof dispute.payment_intent === 'string'
          ? dispute.payment_intent
          : (dispute.payment_intent?.id ??
            (typeof dispute.charge === 'string' ? dispute.charge : dispute.charge.id));
      return {
        id: event.id,
        type: event.type === 'charge.dispute.created' ? 'dispute.opened' : 'dispute.closed',
        dispute: {
          id: dispute.id,
          paymentId,
          amountCents: fromStripeAmount(dispute.currency, dispute.amount),
          currency: dispute.currency,
          reason: dispute.reason,
          status: disputeStatus(dispute.status),
        },
      };
    }
    default:
      return null;
  }
}
