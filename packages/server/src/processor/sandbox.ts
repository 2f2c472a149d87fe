// The sandbox processor (docs/api.md#test-cards): deterministic outcomes chosen by the test card number,
// its records kept in our database (store/sandbox.ts) so that they survive restarts. Like a real
// processor it answers the same idempotency key with the same result, whatever the request.
import type { Clock } from '../clock.ts';
import { cardBrand, normalizeCardNumber } from '../domain/card.ts';
import { ids } from '../ids.ts';
import type { Db } from '../store/db.ts';
import { isUniqueViolation } from '../store/db.ts';
import {
  findSandboxObject,
  findSandboxRecordByKey,
  insertSandboxRecord,
  listSandboxObjects,
  moveSandboxObject,
  type SandboxRecord,
} from '../store/sandbox.ts';
import type { Executor } from '../store/sessions.ts';
import type {
  CardFacts,
  DeclineCode,
  FollowUpRequest,
  Operation,
  OperationKind,
  Outcome,
  PaymentProcessor,
  PaymentRequest,
  ProcessorRecord,
  TransferRequest,
} from './types.ts';

/** What each test card does; any other valid number succeeds. */
type CardBehaviour = { decline: DeclineCode } | { processingError: true } | { failsAtCapture: true };

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
};

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

interface Stored {
  outcome: Outcome;
  /** Sandbox-only facts about a hold, never shown: the test card that fails at capture. */
  failsAtCapture?: boolean;
}

export function createSandboxProcessor(db: Db, clock: Clock): PaymentProcessor {
  const kysely = db.kysely;

  /**
   * Answers what `key` answered before, or runs `make` and keeps its record, in one transaction. Two
   * calls racing with one key both answer the record that was committed first.
   */
  async function once(key: string, make: (now: number) => Promise<SandboxRecord>): Promise<Outcome> {
    const known = await findSandboxRecordByKey(kysely, key);
    if (known) return (JSON.parse(known.outcome) as Stored).outcome;
    try {
      const record = await make(clock.now());
      return (JSON.parse(record.outcome) as Stored).outcome;
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      const raced = await findSandboxRecordByKey(kysely, key);
      if (!raced) throw error;
      return (JSON.parse(raced.outcome) as Stored).outcome;
    }
  }

  /** Builds the record answering `key` with `stored` and writes it (in `db`: a transaction, or not). */
  async function keep(
    db: Executor,
    key: string,
    kind: OperationKind,
    fields: {
      id: string | null;
      targetId?: string | null;
      amountCents: number;
      currency: string;
      state: string;
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
      createdAt: now,
      updatedAt: now,
    };
    await insertSandboxRecord(db, r);
    return r;
  }

  function pay(kind: 'charge' | 'authorize', request: PaymentRequest): Promise<Outcome> {
    return once(request.key, async (now) => {
      if (!('card' in request.source)) {
        const stored: Stored = {
          outcome: { status: 'failed', message: 'The sandbox takes test card numbers, not payment_method.' },
        };
        return keep(
          kysely,
          request.key,
          kind,
          { id: null, amountCents: request.amountCents, currency: request.currency, state: 'failed' },
          stored,
          now,
        );
      }
      const digits = normalizeCardNumber(request.source.card.number);
      const card: CardFacts = { brand: cardBrand(digits), last4: digits.slice(-4) };
      const behaviour = TEST_CARDS[digits];
      let stored: Stored;
      let id: string | null = null;
      let state: string;
      if (behaviour && 'decline' in behaviour) {
        stored = {
          outcome: {
            status: 'declined',
            declineCode: behaviour.decline,
            message: DECLINE_MESSAGES[behaviour.decline],
            card,
          },
        };
        state = 'declined';
      } else if (behaviour && 'processingError' in behaviour) {
        stored = { outcome: { status: 'failed', message: PROCESSING_ERROR } };
        state = 'failed';
      } else if (behaviour && kind === 'charge') {
        // Authorizes, then fails at capture: a charge is both at once, so it is declined.
        stored = {
          outcome: {
            status: 'declined',
            declineCode: 'generic_decline',
            message: DECLINE_MESSAGES.generic_decline,
            card,
          },
        };
        state = 'declined';
      } else {
        id = ids.sandboxCharge();
        state = kind === 'charge' ? 'succeeded' : 'authorized';
        stored = {
          outcome: { status: 'succeeded', processorId: id, amountCents: request.amountCents, card },
          ...(behaviour ? { failsAtCapture: true } : {}),
        };
      }
      return keep(
        kysely,
        request.key,
        kind,
        { id, amountCents: request.amountCents, currency: request.currency, state },
        stored,
        now,
      );
    });
  }

  /** A capture, release or refund of `request.paymentId`, made and recorded in one transaction. */
  function followUp(kind: 'capture' | 'release' | 'refund', request: FollowUpRequest): Promise<Outcome> {
    return once(request.key, (now) =>
      kysely.transaction().execute(async (trx) => {
        const target = await findSandboxObject(trx, request.paymentId);
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
            {
              id: null,
              targetId: request.paymentId,
              amountCents: request.amountCents,
              currency: request.currency,
              state: 'failed',
            },
            stored,
            now,
          );
        };
        if (!target || (target.kind !== 'charge' && target.kind !== 'authorize')) {
          return fail(`No such charge: ${request.paymentId}.`);
        }
        if (request.amountCents !== target.amountCents) {
          return fail(`The amount ${request.amountCents} is not the charge's ${target.amountCents}.`);
        }
        let id: string;
        if (kind === 'capture') {
          if ((JSON.parse(target.outcome) as Stored).failsAtCapture) {
            // The card fails at capture, and its hold is gone with it.
            await moveSandboxObject(trx, target.id as string, ['authorized'], 'released', now);
            return fail('', 'generic_decline');
          }
          if (!(await moveSandboxObject(trx, target.id as string, ['authorized'], 'captured', now))) {
            return fail(`The hold ${target.id} is ${target.state}, not authorized.`);
          }
          id = target.id as string;
        } else if (kind === 'release') {
          if (!(await moveSandboxObject(trx, target.id as string, ['authorized'], 'released', now))) {
            return fail(`The hold ${target.id} is ${target.state}, not authorized.`);
          }
          id = target.id as string;
        } else {
          if (
            !(await moveSandboxObject(trx, target.id as string, ['succeeded', 'captured'], 'refunded', now))
          ) {
            return fail(
              `The charge ${target.id} is ${target.state}; only a captured charge can be refunded.`,
            );
          }
          id = ids.sandboxRefund();
        }
        const stored: Stored = {
          outcome: { status: 'succeeded', processorId: id, amountCents: request.amountCents },
        };
        return keep(
          trx,
          request.key,
          kind,
          {
            id: kind === 'refund' ? id : null,
            targetId: request.paymentId,
            amountCents: request.amountCents,
            currency: request.currency,
            state: 'succeeded',
          },
          stored,
          now,
        );
      }),
    );
  }

  function transfer(request: TransferRequest): Promise<Outcome> {
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
    kind: r.kind as OperationKind,
    amountCents: r.amountCents,
    currency: r.currency,
    state: r.state as ProcessorRecord['state'],
  });

  return {
    name: 'sandbox',
    charge: (request) => pay('charge', request),
    authorize: (request) => pay('authorize', request),
    capture: (request) => followUp('capture', request),
    release: (request) => followUp('release', request),
    refund: (request) => followUp('refund', request),
    transfer,
    async retrieve(operation: Operation) {
      const known = await findSandboxRecordByKey(kysely, operation.key);
      return known && (JSON.parse(known.outcome) as Stored).outcome;
    },
    async lookup(_kind, processorId) {
      const found = await findSandboxObject(kysely, processorId);
      return found && toProcessorRecord(found);
    },
    async listRecords() {
      return (await listSandboxObjects(kysely)).map(toProcessorRecord);
    },
  };
}
