// The payment processor as the flows see it (docs/decisions.md#payments): seven operations, each
// carrying an idempotency key, each answering one of our outcomes. Every implementation maps its
// processor's answers onto these in one place, and an answer it cannot read is `unknown`, never a guess.
import type { CurrencyRules } from './currencies.ts';

/** Why a card was declined, as the payer's page explains it (docs/api.md#payments). */
const DECLINE_CODES = [
  'generic_decline',
  'insufficient_funds',
  'expired_card',
  'incorrect_cvc',
  'lost_card',
  'stolen_card',
] as const;
export type DeclineCode = (typeof DECLINE_CODES)[number];

/** A card as the sandbox takes it. It lives only in memory, for the call: never stored, never logged. */
interface CardInput {
  number: string;
  expMonth: number;
  expYear: number;
  cvc: string;
}

/** What pays a share: a card (sandbox) or a Stripe PaymentMethod id made by the hosted page. */
export type PaymentSource = { card: CardInput } | { paymentMethod: string };

/** What we keep of a card: its brand and last four digits. */
export interface CardFacts {
  brand: string;
  last4: string;
}

interface Common {
  /** Sent as the processor's idempotency key: the same key answers the same result. */
  key: string;
  /** Our ids, attached to the processor's object so an operator can find it there. */
  sessionId: string;
}

/** charge (authorize and capture at once) or authorize (a hold) of one share. */
export interface PaymentRequest extends Common {
  amountCents: number;
  currency: string;
  memberId: string;
  source: PaymentSource;
  /** Where a bank that takes the payer away for authentication sends them back: their share's page. */
  returnUrl?: string;
}

/** capture or release (void) of a hold, or refund of a charge: `paymentId` is the processor's id of it. */
export interface FollowUpRequest extends Common {
  paymentId: string;
  amountCents: number;
  currency: string;
  memberId: string;
}

/** The transfer of a funded session's takings to the merchant's connected account (null in the sandbox). */
export interface TransferRequest extends Common {
  amountCents: number;
  currency: string;
  destination: string | null;
}

export type Operation =
  | ({ kind: 'charge' | 'authorize' } & PaymentRequest)
  | ({ kind: 'capture' | 'release' | 'refund' } & FollowUpRequest)
  | ({ kind: 'transfer' } & TransferRequest);

export type OperationKind = Operation['kind'];

/**
 * The outcome of one operation.
 * - `succeeded`: it happened; `processorId` names it there (a charge or hold `ch_…`/`pi_…`, `re_…`, `tr_…`).
 * - `declined`: the card was refused; nothing moved. Only charge, authorize and capture are declined.
 * - `failed`: the processor refused or could not do it, and certainly moved nothing.
 * - `unknown`: we cannot tell (a timeout, a lost connection, an answer we do not understand). The
 *   attempt stays open until `retrieve` with the same key tells.
 * - `action_required`: the card's bank asks the payer to authenticate (3-D Secure) before a charge or a
 *   hold; nothing has moved yet. `processorId` names the payment at the processor and `clientSecret` is
 *   what the payer's page hands the processor's script; the attempt stays open until the payer completes
 *   or fails it, or it is abandoned (cancelOpen).
 */
export type Outcome =
  | {
      status: 'succeeded';
      processorId: string;
      amountCents: number;
      card?: CardFacts;
      /**
       * A refund the processor took but has not finished (Stripe's `pending`: the money is on its way back
       * to the card). It is listed `pending` until the processor says it succeeded or failed.
       */
      pending?: boolean;
    }
  | { status: 'action_required'; processorId: string; clientSecret: string; card?: CardFacts }
  | { status: 'declined'; declineCode: DeclineCode; message: string; card?: CardFacts }
  | {
      status: 'failed';
      message: string;
      /**
       * - `invalid_payment_method`: the payer's payment method cannot be used (unknown, used up): theirs to fix.
       * - `not_allowed`: the processor refused our credentials. Certain for a first call; for a request sent
       *   again to learn what became of the first one, it says nothing about that one.
       */
      reason?: 'invalid_payment_method' | 'not_allowed';
    }
  | { status: 'unknown'; message: string };

export interface OnboardingRequest {
  merchantId: string;
  /** The merchant's connected account, or null to make one. */
  accountId: string | null;
  /** Where the processor sends the person back when they finish or leave. */
  returnUrl: string;
  /** Where it sends them when the link has expired or was used already. */
  refreshUrl: string;
}

export interface OnboardingLink {
  /** The connected account the link onboards (new when the request had none). */
  accountId: string;
  url: string;
  /** When the link stops working, ms. */
  expiresAt: number;
}

export interface PaymentProcessor {
  readonly name: 'sandbox' | 'stripe';
  /** The currencies it charges, their steps and minimums (the sandbox answers Stripe's: processor/currencies.ts). */
  readonly currencies: CurrencyRules;
  charge(request: PaymentRequest): Promise<Outcome>;
  authorize(request: PaymentRequest): Promise<Outcome>;
  capture(request: FollowUpRequest): Promise<Outcome>;
  release(request: FollowUpRequest): Promise<Outcome>;
  refund(request: FollowUpRequest): Promise<Outcome>;
  transfer(request: TransferRequest): Promise<Outcome>;
  /**
   * What became of an operation sent earlier with `operation.key`, read from the processor's object (by
   * `processorId` when the processor told us its id, else by the key), never by sending the operation
   * again: its outcome now, or `undefined` when the processor never received it (so it certainly did
   * nothing). May be `unknown` when the processor cannot be reached or has not finished, and
   * `action_required` while the payer has yet to authenticate.
   */
  retrieve(operation: Operation, processorId?: string | null): Promise<Outcome | undefined>;
  /**
   * Gives up on a payment still waiting on the payer's authentication (abandoned past
   * PAYMENT_AUTH_TIMEOUT_MS, or its session closed): cancels it at the processor and answers how it
   * ended — `failed` when nothing moved, `succeeded` when the payer completed it first.
   */
  cancelOpen(operation: Operation, processorId: string): Promise<Outcome>;
  /** The processor's webhooks (Stripe's): verifies one on its raw body and reads it; null for types we ignore. */
  webhooks?: {
    /** Throws WebhookRefused when the signature is missing, wrong, or too old. */
    parse(body: Buffer, signature: string | undefined): ProcessorEvent | null;
  };
  /**
   * The sandbox schedules some changes of its own as events due later (a refund that fails, a dispute that
   * opens): it makes the change at its end when the event falls due, just before the event is handled.
   */
  applyScheduled?(event: ProcessorEvent): Promise<void>;
  /**
   * Connect onboarding (docs/dashboard.md#payouts-with-stripe): makes the merchant's connected account when
   * it has none yet (`accountId` null), then a one-time link to the processor's own onboarding pages for
   * it. Absent in the sandbox, which pays out nowhere.
   */
  connectOnboarding?(request: OnboardingRequest): Promise<OnboardingLink>;
  /** The sandbox's test helpers (docs/api.md#test-cards); absent in production and with Stripe. */
  testHelpers?: SandboxTestHelpers;
  /**
   * The processor's own record of an operation that succeeded (`processorId`), for `reconcile`: its
   * amount and whether it still stands as we recorded it. Undefined when the processor has no such object.
   */
  lookup(kind: OperationKind, processorId: string): Promise<ProcessorRecord | undefined>;
  /**
   * Every object the processor holds for us, when it can list them cheaply (the sandbox): lets reconcile
   * find a charge we have no record of. Processors that cannot list leave it out.
   */
  listRecords?(): Promise<ProcessorRecord[]>;
}

/**
 * Something the processor tells us after the fact (Stripe's webhooks; the sandbox's own), as flows read it:
 * - `payment.updated`: a payment's state changed (succeeded, failed, authentication done): read it again.
 * - `refund.failed`: a refund it had taken failed later (the card was closed, say).
 * - `refund.succeeded`: a refund it had taken, still pending then, reached the card.
 * - `dispute.opened` / `dispute.closed`: a payer disputed a charge with their bank (a chargeback).
 */
export type ProcessorEvent = { id: string } & (
  | { type: 'payment.updated'; paymentId: string; key: string | null }
  | { type: 'refund.failed'; refundId: string; reason: string }
  | { type: 'refund.succeeded'; refundId: string }
  | { type: 'dispute.opened'; dispute: DisputeFacts }
  | { type: 'dispute.closed'; dispute: DisputeFacts }
);

export interface DisputeFacts {
  id: string;
  /** The disputed payment, as the processor named it when it succeeded (a PaymentIntent, a charge). */
  paymentId: string;
  amountCents: number;
  currency: string;
  reason: string;
  status: 'needs_response' | 'won' | 'lost';
}

/** A webhook that is not the processor's, or not now: refused with 400, changing nothing. */
export class WebhookRefused extends Error {}

/** What only the sandbox can be asked (docs/api.md#test-cards). */
export interface SandboxTestHelpers {
  /**
   * Completes (or fails) the authentication step of a payment that asked for one, as a payer's bank
   * would; false when no payment waits on that client secret.
   */
  authenticate(clientSecret: string, outcome: 'succeed' | 'fail'): Promise<boolean>;
  /** Closes a dispute as the card network would decide it; answers the event to handle, or undefined. */
  closeDispute(disputeId: string, status: 'won' | 'lost'): Promise<ProcessorEvent | undefined>;
}

/** The processor's view of one object, as `reconcile` compares it with ours. */
export interface ProcessorRecord {
  processorId: string;
  /** The idempotency key of the call that made it (our attempt's key), where the processor keeps it. */
  key?: string;
  kind: OperationKind;
  amountCents: number;
  currency: string;
  /**
   * - charge: `succeeded` (captured, not refunded), `refunded`
   * - authorize: `authorized` (a live hold), `captured`, `released`
   * - refund, transfer, capture, release: `succeeded`
   */
  state: 'succeeded' | 'authorized' | 'captured' | 'released' | 'refunded';
}

/** Runs `operation` on `processor`, by its kind. */
export function perform(processor: PaymentProcessor, operation: Operation): Promise<Outcome> {
  switch (operation.kind) {
    case 'charge':
      return processor.charge(operation);
    case 'authorize':
      return processor.authorize(operation);
    case 'capture':
      return processor.capture(operation);
    case 'release':
      return processor.release(operation);
    case 'refund':
      return processor.refund(operation);
    case 'transfer':
      return processor.transfer(operation);
  }
}
