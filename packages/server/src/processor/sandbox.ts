// The sandbox processor (docs/api.md#test-cards): deterministic outcomes chosen by the test card number,
// its records kept in our database (store/sandbox.ts) so that they survive restarts. Like a real
// processor it answers the same idempotency key with the same result, whatever the request.
import type { Transaction } from 'kysely';
import type { Clock } from '../clock.ts';
import { cardBrand, normalizeCardNumber } from '../domain/card.ts';
import { formatMinorUnits } from '../domain/currencies.ts';
import { ids } from '../ids.ts';
import type { Db } from '../store/db.ts';
import { isUniqueViolation } from '../store/db.ts';
import { insertProcessorEvent } from '../store/processor-events.ts';
import {
  findSandboxDispute,
  findSandboxObject,
  findSandboxRecordByClientSecret,
  findSandboxRecordByKey,
  insertSandboxRecord,
  listSandboxObjects,
  moveSandboxObject,
  rewriteSandboxRecord,
  type SandboxRecord,
} from '../store/sandbox.ts';
import type { Database, Executor } from '../store/schema.ts';
import { CARD_CURRENCIES } from './currencies.ts';
import type {
  CardFacts,
  DeclineCode,
  DisputeFacts,
  FollowUpRequest,
  Operation,
  OperationKind,
  Outcome,
  PaymentProcessor,
  PaymentRequest,
  ProcessorEvent,
  ProcessorRecord,
  SandboxTestHelpers,
  TransferRequest,
} from './types.ts';

/** What each test card does; any other valid number succeeds. */
type CardBehaviour =
  | { decline: DeclineCode }
  | { processingError: true }
  | { failsAtCapture: true }
  | { authenticates: true }
  | { disputed: true }
  | { refundsFail: true };

/** @internal Exported for the tests, which pay with every one of them. */
export const TEST_CARDS: Readonly<Record<string, CardBehaviour>> = {
  '4000000000000002': { decline: 'generic_decline' },
  '4000000000009995': { decline: 'insufficient_funds' },
  '4000000000000069': { decline: 'expired_card' },
  '4000000000000127': { decline: 'incorrect_cvc' },
  '4000000000009987': { decline: 'lost_card' },
  '4000000000009979': { decline: 'stolen_card' },
  '4000000000000119': { processingError: true },
  '4000000000000341': { failsAtCapture: true },
  '4000002500003155': { authenticates: true },
  '4000000000000259': { disputed: true },
  '4000000000005126': { refundsFail: true },
};

/** How long after the charge the sandbox opens the dispute of card 4000000000000259. */
const DISPUTE_AFTER_MS = 3_000;
/** How long after it is taken a refund of card 4000000000005126 fails. */
const REFUND_FAILS_AFTER_MS = 2_000;

/** What the payer reads when they failed the sandbox's authentication step. */
const AUTHENTICATION_FAILED =
  'Your bank could not confirm it was you, so the card was not charged. Try again, or use another card.';
const AUTHENTICATION_ABANDONED =
  "Your bank's check was not completed in time, so the card was not charged. Pay your share again when you are ready.";

/** The sentence a payer reads for each decline (docs/api.md#payments). */
const DECLINE_MESSAGES: Readonly<Record<DeclineCode, string>> = {
  generic_decline: 'Your card was declined. Try another card, or ask your bank why.',
  insufficient_funds: 'Your card has insufficient funds. Try another card.',
  expired_card: 'Your card has expired. Try another card.',
  incorrect_cvc: "Your card's security code (CVC) is incorrect. Check it and try again.",
  lost_card: 'Your card was declined. Try another card.',
  stolen_card: 'Your card was declined. Try another card.',
};

const PROCESSING_ERROR = 'The card network could not process the payment; nothing was charged. Try again.';

/**
 * Why Stripe would refuse to charge `amount` in `currency`, under the rules the sandbox shares with it
 * (processor/currencies.ts); undefined when it would take it. Set-up refuses such shares first, so only a
 * share made before these rules can reach here.
 */
function refusedAmount(currency: string, amount: number): string | undefined {
  const code = currency.toUpperCase();
  if (!CARD_CURRENCIES.supports(currency)) return `Cards cannot be charged in ${code}.`;
  const step = CARD_CURRENCIES.chargeStep(currency);
  if (amount % step !== 0) {
    return `Invalid amount: ${code} is charged in steps of ${formatMinorUnits(step, currency)} ${code}.`;
  }
  const minimum = CARD_CURRENCIES.minimumCharge(currency);
  if (amount < minimum) return `Amount must be at least ${formatMinorUnits(minimum, currency)} ${code}.`;
  return undefined;
}

interface Stored {
  outcome: Outcome;
  /** Sandbox-only facts about a payment, never shown: what its test card does later. */
  failsAtCapture?: boolean;
  disputed?: boolean;
  refundsFail?: boolean;
  /** A payment waiting on authentication: what it answers once the payer completes it. */
  onceAuthenticated?: Outcome;
}

/** The key being kept has a record already: nothing was written (see once). */
class KeyAnswered extends Error {
  constructor(key: string) {
    super(`the sandbox has answered ${key} before`);
  }
}

export function createSandboxProcessor(db: Db, clock: Clock): PaymentProcessor {
  const kysely = db.kysely;
  const storedOf = (r: SandboxRecord) => JSON.parse(r.outcome) as Stored;

  /**
   * Answers what `key` answered before, or what `write` answers, its record kept. `write` ends by keeping
   * the record (keep), which writes nothing and throws KeyAnswered when the key has one already; work
   * done before that in the same transaction is rolled back with it. So a new key costs its writes alone,
   * and only a key answered before (a retry, or two calls racing) reads its record. Two calls racing with
   * one key both answer the record that was committed first.
   */
  async function once(key: string, write: (now: number) => Promise<SandboxRecord>): Promise<Outcome> {
    try {
      return storedOf(await write(clock.now())).outcome;
    } catch (error) {
      if (!(error instanceof KeyAnswered) && !isUniqueViolation(error)) throw error;
      const known = await findSandboxRecordByKey(kysely, key);
      if (!known) throw error;
      return storedOf(known).outcome;
    }
  }

  /** `make` in one transaction (a record and what it moves or schedules, or nothing), for `once`. */
  const inTransaction =
    (make: (trx: Transaction<Database>, now: number) => Promise<SandboxRecord>) => (now: number) =>
      kysely.transaction().execute((trx) => make(trx, now));

  /** Builds the record answering `key` with `stored` and writes it in `trx`. */
  async function keep(
    trx: Executor,
    key: string,
    kind: string,
    fields: {
      id: string | null;
      targetId?: string | null;
      amountCents: number;
      currency: string;
      state: string;
      clientSecret?: string;
    },
    stored: Stored,
    now: number,
  ): Promise<SandboxRecord> {
    const r: SandboxRecord = {
      key,
      kind,
      id: fields.id,
      targetId: fields.targetId ?? null,
      amountCents: fields.amountCents,
      currency: fields.currency,
      state: fields.state,
      outcome: JSON.stringify(stored),
      clientSecret: fields.clientSecret ?? null,
      createdAt: now,
      updatedAt: now,
    };
    if (!(await insertSandboxRecord(trx, r))) throw new KeyAnswered(key);
    return r;
  }

  /** A processor event of the sandbox's own, due at `dueAt` (the settling's processor-events worker reads it). */
  const schedule = (trx: Executor, event: ProcessorEvent, now: number, dueAt: number) =>
    insertProcessorEvent(trx, event, now, dueAt);

  /** Card 4000000000000259: a dispute opens on its charge a few seconds after the money is taken. */
  const scheduleDispute = (
    trx: Executor,
    payment: { id: string; amountCents: number; currency: string },
    now: number,
  ) =>
    schedule(
      trx,
      {
        id: ids.sandboxEvent(),
        type: 'dispute.opened',
        dispute: {
          id: ids.sandboxDispute(),
          paymentId: payment.id,
          amountCents: payment.amountCents,
          currency: payment.currency,
          reason: 'fraudulent',
          status: 'needs_response',
        },
      },
      now,
      now + DISPUTE_AFTER_MS,
    );

  function pay(kind: 'charge' | 'authorize', request: PaymentRequest): Promise<Outcome> {
    const digits = 'card' in request.source ? normalizeCardNumber(request.source.card.number) : '';
    const behaviour = TEST_CARDS[digits];
    // A charge on a card whose dispute opens later schedules the dispute with its record, in one
    // transaction; any other payment writes its record alone: one statement, no transaction.
    const disputes = kind === 'charge' && behaviour !== undefined && 'disputed' in behaviour;
    const make = async (db: Executor, now: number) => {
      const record = (fields: Parameters<typeof keep>[3], stored: Stored) =>
        keep(db, request.key, kind, fields, stored, now);
      const money = { amountCents: request.amountCents, currency: request.currency };
      // Like Stripe, the sandbox cannot charge an amount off the currency's step or below its minimum.
      const refused =
        'card' in request.source ? refusedAmount(request.currency, request.amountCents) : undefined;
      if (refused)
        return record(
          { id: null, ...money, state: 'failed' },
          { outcome: { status: 'failed', message: refused } },
        );
      if (!('card' in request.source)) {
        const stored: Stored = {
          outcome: {
            status: 'failed',
            message: 'The sandbox takes test card numbers, not payment_method.',
          },
        };
        return record({ id: null, ...money, state: 'failed' }, stored);
      }
      const card: CardFacts = { brand: cardBrand(digits), last4: digits.slice(-4) };
      const declined = (code: DeclineCode): Stored => ({
        outcome: { status: 'declined', declineCode: code, message: DECLINE_MESSAGES[code], card },
      });
      if (behaviour && 'decline' in behaviour)
        return record({ id: null, ...money, state: 'declined' }, declined(behaviour.decline));
      if (behaviour && 'processingError' in behaviour)
        return record(
          { id: null, ...money, state: 'failed' },
          { outcome: { status: 'failed', message: PROCESSING_ERROR } },
        );
      // Authorizes, then fails at capture: a charge is both at once, so it is declined.
      if (behaviour && 'failsAtCapture' in behaviour && kind === 'charge')
        return record({ id: null, ...money, state: 'declined' }, declined('generic_decline'));
      const id = ids.sandboxCharge();
      const succeeded: Outcome = {
        status: 'succeeded',
        processorId: id,
        amountCents: request.amountCents,
        card,
      };
      const flags = {
        ...(behaviour && 'failsAtCapture' in behaviour && { failsAtCapture: true }),
        ...(behaviour && 'disputed' in behaviour && { disputed: true }),
        ...(behaviour && 'refundsFail' in behaviour && { refundsFail: true }),
      };
      if (behaviour && 'authenticates' in behaviour) {
        // The bank asks the payer to authenticate: nothing is taken until they complete the step.
        const clientSecret = ids.sandboxClientSecret(id);
        return record(
          { id, ...money, state: 'requires_action', clientSecret },
          {
            outcome: { status: 'action_required', processorId: id, clientSecret, card },
            onceAuthenticated: succeeded,
          },
        );
      }
      const kept = await record(
        { id, ...money, state: kind === 'charge' ? 'succeeded' : 'authorized' },
        { outcome: succeeded, ...flags },
      );
      if (disputes) await scheduleDispute(db, { id, ...money }, now);
      return kept;
    };
    return once(request.key, disputes ? inTransaction(make) : (now) => make(kysely, now));
  }

  /** A capture, release or refund of `request.paymentId`, made and recorded in one transaction. */
  function followUp(kind: 'capture' | 'release' | 'refund', request: FollowUpRequest): Promise<Outcome> {
    return once(
      request.key,
      inTransaction(async (trx, now) => {
        const target = await findSandboxObject(trx, request.paymentId);
        const money = { amountCents: request.amountCents, currency: request.currency };
        const fail = async (message: string, declined?: DeclineCode) => {
          const stored: Stored = {
            outcome: declined
              ? { status: 'declined', declineCode: declined, message: DECLINE_MESSAGES[declined] }
              : { status: 'failed', message },
          };
          return keep(
            trx,
            request.key,
            kind,
            { id: null, targetId: request.paymentId, ...money, state: 'failed' },
            stored,
            now,
          );
        };
        if (!target || (target.kind !== 'charge' && target.kind !== 'authorize')) {
          return fail(`No such charge: ${request.paymentId}.`);
        }
        // A refund may return part of a charge (what a lost dispute of part of it left), as Stripe's may;
        // a capture or release acts on the whole hold.
        const partial =
          kind === 'refund' && request.amountCents > 0 && request.amountCents < target.amountCents;
        if (request.amountCents !== target.amountCents && !partial) {
          return fail(`The amount ${request.amountCents} is not the charge's ${target.amountCents}.`);
        }
        const facts = storedOf(target);
        const targetId = target.id as string;
        let id: string;
        let stored: Stored = { outcome: { status: 'failed', message: '' } };
        if (kind === 'capture') {
          if (facts.failsAtCapture) {
            // The card fails at capture, and its hold is gone with it.
            await moveSandboxObject(trx, targetId, ['authorized'], 'released', now);
            return fail('', 'generic_decline');
          }
          if (!(await moveSandboxObject(trx, targetId, ['authorized'], 'captured', now))) {
            return fail(`The hold ${targetId} is ${target.state}, not authorized.`);
          }
          if (facts.disputed) await scheduleDispute(trx, { id: targetId, ...money }, now);
          id = targetId;
        } else if (kind === 'release') {
          if (!(await moveSandboxObject(trx, targetId, ['authorized'], 'released', now))) {
            return fail(`The hold ${targetId} is ${target.state}, not authorized.`);
          }
          id = targetId;
        } else {
          if (!(await moveSandboxObject(trx, targetId, ['succeeded', 'captured'], 'refunded', now))) {
            return fail(`The charge ${targetId} is ${target.state}; only a captured charge can be refunded.`);
          }
          id = ids.sandboxRefund();
          if (facts.refundsFail) {
            // Card 4000000000005126: the refund is taken (pending), then fails, as a closed card's would.
            stored = { outcome: stored.outcome, refundsFail: true };
            await schedule(
              trx,
              {
                id: ids.sandboxEvent(),
                type: 'refund.failed',
                refundId: id,
                reason: 'expired_or_canceled_card',
              },
              now,
              now + REFUND_FAILS_AFTER_MS,
            );
          }
        }
        // A refund of card 4000000000005126 is taken pending, as Stripe answers a card refund, until it fails.
        const pending = kind === 'refund' && facts.refundsFail === true;
        stored = {
          ...stored,
          outcome: {
            status: 'succeeded',
            processorId: id,
            amountCents: request.amountCents,
            ...(pending && { pending: true }),
          },
        };
        return keep(
          trx,
          request.key,
          kind,
          { id: kind === 'refund' ? id : null, targetId: request.paymentId, ...money, state: 'succeeded' },
          stored,
          now,
        );
      }),
    );
  }

  function transfer(request: TransferRequest): Promise<Outcome> {
    // One record and nothing else: written alone, no transaction.
    return once(request.key, async (now) => {
      // The sandbox pays out without a connected account: there is nowhere real to send money.
      const id = ids.sandboxTransfer();
      const stored: Stored = {
        outcome: { status: 'succeeded', processorId: id, amountCents: request.amountCents },
      };
      return keep(
        kysely,
        request.key,
        'transfer',
        { id, amountCents: request.amountCents, currency: request.currency, state: 'succeeded' },
        stored,
        now,
      );
    });
  }

  const toProcessorRecord = (r: SandboxRecord): ProcessorRecord => ({
    processorId: r.id as string,
    key: r.key,
    kind: r.kind as OperationKind,
    amountCents: r.amountCents,
    currency: r.currency,
    state: r.state as ProcessorRecord['state'],
  });

  /** Ends a payment waiting on authentication: `to` its new state, answering `outcome` from now on. */
  const endAuthentication = (record: SandboxRecord, to: string, outcome: Outcome) => {
    const { onceAuthenticated: _ended, ...stored } = storedOf(record);
    return rewriteSandboxRecord(
      kysely,
      record.key,
      ['requires_action'],
      to,
      JSON.stringify({ ...stored, outcome }),
      clock.now(),
    );
  };

  const testHelpers: SandboxTestHelpers = {
    async authenticate(clientSecret, result) {
      const record = await findSandboxRecordByClientSecret(kysely, clientSecret);
      if (record?.state !== 'requires_action') return false;
      const stored = storedOf(record);
      const card = stored.outcome.status === 'action_required' ? stored.outcome.card : undefined;
      const ended =
        result === 'succeed'
          ? await endAuthentication(
              record,
              record.kind === 'charge' ? 'succeeded' : 'authorized',
              stored.onceAuthenticated as Outcome,
            )
          : await endAuthentication(record, 'failed', {
              status: 'declined',
              declineCode: 'generic_decline',
              message: AUTHENTICATION_FAILED,
              ...(card && { card }),
            });
      if (!ended) return false;
      // As Stripe sends payment_intent.succeeded: the backstop when the payer's page is gone.
      const now = clock.now();
      await schedule(
        kysely,
        { id: ids.sandboxEvent(), type: 'payment.updated', paymentId: record.id as string, key: record.key },
        now,
        now,
      );
      return true;
    },
    async closeDispute(disputeId, status) {
      const record = await findSandboxDispute(kysely, disputeId);
      if (!record) return undefined;
      const now = clock.now();
      if (!(await rewriteSandboxRecord(kysely, record.key, ['needs_response'], status, record.outcome, now)))
        return undefined;
      const opened = JSON.parse(record.outcome) as DisputeFacts;
      return { id: ids.sandboxEvent(), type: 'dispute.closed', dispute: { ...opened, status } };
    },
  };

  return {
    name: 'sandbox',
    currencies: CARD_CURRENCIES,
    charge: (request) => pay('charge', request),
    authorize: (request) => pay('authorize', request),
    capture: (request) => followUp('capture', request),
    release: (request) => followUp('release', request),
    refund: (request) => followUp('refund', request),
    transfer,
    async retrieve(operation: Operation) {
      const known = await findSandboxRecordByKey(kysely, operation.key);
      return known && storedOf(known).outcome;
    },
    async cancelOpen(operation: Operation) {
      const record = await findSandboxRecordByKey(kysely, operation.key);
      if (!record)
        return { status: 'failed', message: 'The sandbox never received this payment; nothing moved.' };
      const abandoned: Outcome = { status: 'failed', message: AUTHENTICATION_ABANDONED };
      if (record.state === 'requires_action' && (await endAuthentication(record, 'canceled', abandoned)))
        return abandoned;
      return storedOf((await findSandboxRecordByKey(kysely, operation.key)) ?? record).outcome;
    },
    async applyScheduled(event: ProcessorEvent) {
      const now = clock.now();
      if (event.type === 'refund.failed') {
        // The refund fails at our end: the charge it was on is whole again.
        const refund = await findSandboxObject(kysely, event.refundId);
        if (refund?.state !== 'succeeded') return;
        await kysely.transaction().execute(async (trx) => {
          await rewriteSandboxRecord(trx, refund.key, ['succeeded'], 'failed', refund.outcome, now);
          const charge = refund.targetId ? await findSandboxObject(trx, refund.targetId) : undefined;
          if (charge)
            await moveSandboxObject(
              trx,
              charge.id as string,
              ['refunded'],
              charge.kind === 'charge' ? 'succeeded' : 'captured',
              now,
            );
        });
      } else if (event.type === 'dispute.opened') {
        const { dispute } = event;
        try {
          await keep(
            kysely,
            `dispute_${dispute.id}`,
            'dispute',
            {
              id: dispute.id,
              targetId: dispute.paymentId,
              amountCents: dispute.amountCents,
              currency: dispute.currency,
              state: dispute.status,
            },
            dispute as unknown as Stored,
            now,
          );
        } catch (error) {
          // Opened once: a dispute already kept is not opened again.
          if (!(error instanceof KeyAnswered) && !isUniqueViolation(error)) throw error;
        }
      }
    },
    testHelpers,
    async lookup(_kind, processorId) {
      const found = await findSandboxObject(kysely, processorId);
      if (found?.kind === 'refund' && found.state === 'failed')
        throw new Error(`sandbox refund ${processorId} failed after it was taken: it no longer stands`);
      return found && toProcessorRecord(found);
    },
    async listRecords() {
      return (await listSandboxObjects(kysely)).map(toProcessorRecord);
    },
  };
}
