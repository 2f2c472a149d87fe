// Attempts: one row per call to the payment processor, committed before the call is made and settled
// by a conditional update after it (docs/decisions.md#payments). The idempotency key is unique, so of two
// processes claiming the same piece of work only one gets to call.
import type { Selectable, Transaction } from 'kysely';
import type { AttemptsTable, Database } from './schema.ts';
import type { Executor } from './sessions.ts';

type AttemptKind = AttemptsTable['kind'];
type AttemptState = AttemptsTable['state'];

export interface Attempt {
  id: string;
  key: string;
  kind: AttemptKind;
  merchantId: string;
  sessionId: string;
  memberId: string | null;
  targetId: string | null;
  amountCents: number;
  feeCents: number;
  currency: string;
  paymentMethod: string | null;
  destination: string | null;
  state: AttemptState;
  processorId: string | null;
  cardBrand: string | null;
  cardLast4: string | null;
  declineCode: string | null;
  error: string | null;
  createdAt: number;
  updatedAt: number;
}

function toAttempt(row: Selectable<AttemptsTable>): Attempt {
  return {
    id: row.id,
    key: row.idempotency_key,
    kind: row.kind,
    merchantId: row.merchant_id,
    sessionId: row.session_id,
    memberId: row.member_id,
    targetId: row.target_id,
    amountCents: row.amount_cents,
    feeCents: row.fee_cents,
    currency: row.currency,
    paymentMethod: row.payment_method,
    destination: row.destination,
    state: row.state,
    processorId: row.processor_id,
    cardBrand: row.card_brand,
    cardLast4: row.card_last4,
    declineCode: row.decline_code,
    error: row.error,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** A new attempt, about to be claimed: started, with nothing known of its outcome yet. */
export function startedAttempt(
  fields: Pick<
    Attempt,
    | 'id'
    | 'key'
    | 'kind'
    | 'merchantId'
    | 'sessionId'
    | 'memberId'
    | 'targetId'
    | 'amountCents'
    | 'feeCents'
    | 'currency'
    | 'paymentMethod'
    | 'destination'
  >,
  now: number,
): Attempt {
  return {
    ...fields,
    state: 'started',
    processorId: null,
    cardBrand: null,
    cardLast4: null,
    declineCode: null,
    error: null,
    createdAt: now,
    updatedAt: now,
  };
}

export async function insertAttempt(trx: Transaction<Database>, a: Attempt): Promise<void> {
  await trx
    .insertInto('attempts')
    .values({
      id: a.id,
      idempotency_key: a.key,
      kind: a.kind,
      merchant_id: a.merchantId,
      session_id: a.sessionId,
      member_id: a.memberId,
      target_id: a.targetId,
      amount_cents: a.amountCents,
      fee_cents: a.feeCents,
      currency: a.currency,
      payment_method: a.paymentMethod,
      destination: a.destination,
      state: a.state,
      processor_id: a.processorId,
      card_brand: a.cardBrand,
      card_last4: a.cardLast4,
      decline_code: a.declineCode,
      error: a.error,
      created_at: a.createdAt,
      updated_at: a.updatedAt,
    })
    .execute();
}

export interface AttemptResult {
  state: Exclude<AttemptState, 'started'>;
  processorId?: string | null;
  cardBrand?: string | null;
  cardLast4?: string | null;
  declineCode?: string | null;
  error?: string | null;
}

/**
 * Writes the outcome of a started attempt and answers it as settled; undefined when it was no longer
 * started (another process, the recovery, settled it first), in which case nothing is written.
 */
export async function settleAttempt(
  trx: Transaction<Database>,
  attemptId: string,
  result: AttemptResult,
  now: number,
): Promise<Attempt | undefined> {
  const row = await trx
    .updateTable('attempts')
    .set({
      state: result.state,
      processor_id: result.processorId ?? null,
      card_brand: result.cardBrand ?? null,
      card_last4: result.cardLast4 ?? null,
      decline_code: result.declineCode ?? null,
      error: result.error ?? null,
      updated_at: now,
    })
    .where('id', '=', attemptId)
    .where('state', '=', 'started')
    .returningAll()
    .executeTakeFirst();
  return row && toAttempt(row);
}

/** Marks that the recovery asked about a started attempt and got no answer it could use: it asks again later. */
export async function touchStartedAttempt(db: Executor, attemptId: string, now: number): Promise<void> {
  await db
    .updateTable('attempts')
    .set({ updated_at: now })
    .where('id', '=', attemptId)
    .where('state', '=', 'started')
    .execute();
}

/** How many attempts the member has had so far (their next try's number is one more). */
export async function countMemberAttempts(
  db: Executor,
  sessionId: string,
  memberId: string,
): Promise<number> {
  const row = await db
    .selectFrom('attempts')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('session_id', '=', sessionId)
    .where('member_id', '=', memberId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function findAttempt(db: Executor, attemptId: string): Promise<Attempt | undefined> {
  const row = await db.selectFrom('attempts').selectAll().where('id', '=', attemptId).executeTakeFirst();
  return row && toAttempt(row);
}

/** Every attempt of a session, oldest first. */
export async function listSessionAttempts(db: Executor, sessionId: string): Promise<Attempt[]> {
  const rows = await db
    .selectFrom('attempts')
    .selectAll()
    .where('session_id', '=', sessionId)
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .execute();
  return rows.map(toAttempt);
}
