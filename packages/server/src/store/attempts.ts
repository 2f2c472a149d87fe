// Attempts: one row per call to the payment processor, committed before the call is made and settled
// by a conditional update after it (docs/decisions.md#payments). The idempotency key is unique, so of two
// processes claiming the same piece of work only one gets to call.
import type { Selectable, Transaction } from 'kysely';
import { prepared } from './prepared.ts';
import type { AttemptsTable, Database, Executor } from './schema.ts';

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
  /** Set once the processor asked the payer to authenticate the payment (3-D Secure): their page needs it. */
  clientSecret: string | null;
  /** A refund the processor took but has not finished (docs/decisions.md#refunds-that-fail-after-they-were-taken). */
  pending: boolean;
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
    clientSecret: row.client_secret,
    pending: Number(row.processor_pending) === 1,
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
    state: 'started',
    processorId: null,
    cardBrand: null,
    cardLast4: null,
    declineCode: null,
    error: null,
    clientSecret: null,
    pending: false,
    createdAt: now,
    updatedAt: now,
    ...fields,
  };
}

const insertQuery = prepared((db, a: Attempt) =>
  db.insertInto('attempts').values({
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
    client_secret: a.clientSecret,
    processor_pending: a.pending ? 1 : 0,
    created_at: a.createdAt,
    updated_at: a.updatedAt,
  }),
);

export async function insertAttempt(trx: Transaction<Database>, a: Attempt): Promise<void> {
  await insertQuery.execute(trx, a);
}

export interface AttemptResult {
  state: Exclude<AttemptState, 'started'>;
  processorId?: string | null;
  cardBrand?: string | null;
  cardLast4?: string | null;
  declineCode?: string | null;
  error?: string | null;
  /** A refund taken but not finished at the processor. */
  pending?: boolean;
}

/**
 * Writes the outcome of a started attempt and answers it as settled; undefined when it was no longer
 * started (another process, the recovery, settled it first), in which case nothing is written.
 */
export async function settleAttempt(
  trx: Transaction<Database>,
  sessionId: string,
  attemptId: string,
  result: AttemptResult,
  now: number,
): Promise<Attempt | undefined> {
  const row = await settleQuery.first(trx, {
    sessionId,
    attemptId,
    state: result.state,
    processorId: result.processorId ?? null,
    cardBrand: result.cardBrand ?? null,
    cardLast4: result.cardLast4 ?? null,
    declineCode: result.declineCode ?? null,
    error: result.error ?? null,
    pending: result.pending === true ? 1 : 0,
    now,
  });
  return row && toAttempt(row);
}

const settleQuery = prepared(
  (
    db,
    p: {
      sessionId: string;
      attemptId: string;
      state: AttemptResult['state'];
      processorId: string | null;
      cardBrand: string | null;
      cardLast4: string | null;
      declineCode: string | null;
      error: string | null;
      pending: number;
      now: number;
    },
  ) =>
    db
      .updateTable('attempts')
      // What an earlier step learnt (the payment's id when it asked for authentication, its card) stays
      // unless the outcome says otherwise.
      .set((eb) => ({
        state: p.state,
        processor_id: eb.fn.coalesce(eb.val(p.processorId), eb.ref('processor_id')),
        card_brand: eb.fn.coalesce(eb.val(p.cardBrand), eb.ref('card_brand')),
        card_last4: eb.fn.coalesce(eb.val(p.cardLast4), eb.ref('card_last4')),
        decline_code: p.declineCode,
        error: p.error,
        processor_pending: p.pending,
        updated_at: p.now,
      }))
      .where('session_id', '=', p.sessionId)
      .where('id', '=', p.attemptId)
      .where('state', '=', 'started')
      .returningAll(),
);

/**
 * Notes that the processor asks the payer to authenticate a started payment: its id there, the secret
 * the payer's page needs, and the card if it told. Answers the attempt; undefined when it was no longer
 * started (settled meanwhile by another process) or was already waiting, in which case nothing is written.
 * updated_at is left alone: it marks the recovery's looks (domain/settling.ts recoveryDueAt).
 */
export async function awaitAuthentication(
  trx: Transaction<Database>,
  attemptId: string,
  action: { processorId: string; clientSecret: string; cardBrand?: string; cardLast4?: string },
): Promise<Attempt | undefined> {
  const row = await trx
    .updateTable('attempts')
    .set({
      processor_id: action.processorId,
      client_secret: action.clientSecret,
      ...(action.cardBrand !== undefined && { card_brand: action.cardBrand }),
      ...(action.cardLast4 !== undefined && { card_last4: action.cardLast4 }),
    })
    .where('id', '=', attemptId)
    .where('state', '=', 'started')
    .where('client_secret', 'is', null)
    .returningAll()
    .executeTakeFirst();
  return row && toAttempt(row);
}

/**
 * A refund the processor took and later reported failed (the card was closed, say): the attempt becomes
 * failed, keeping its processor id, which is how a refund that failed after it was taken is told from one
 * refused at once. Answers the attempt; undefined when it was not a succeeded refund.
 */
export async function failTakenRefund(
  trx: Transaction<Database>,
  attemptId: string,
  error: string,
  now: number,
): Promise<Attempt | undefined> {
  const row = await trx
    .updateTable('attempts')
    .set({ state: 'failed', error, updated_at: now })
    .where('id', '=', attemptId)
    .where('kind', '=', 'refund')
    .where('state', '=', 'succeeded')
    .returningAll()
    .executeTakeFirst();
  return row && toAttempt(row);
}

/**
 * A refund the processor took pending and now reports done: it is no longer pending. Answers whether it
 * was a pending refund that succeeded (a second report, or one for a refund that failed, changes nothing).
 */
export async function confirmTakenRefund(trx: Executor, attemptId: string, now: number): Promise<boolean> {
  const result = await trx
    .updateTable('attempts')
    .set({ processor_pending: 0, updated_at: now })
    .where('id', '=', attemptId)
    .where('kind', '=', 'refund')
    .where('state', '=', 'succeeded')
    .where('processor_pending', '=', 1)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Attempts that name `processorId` (the processor's id of a payment, refund or transfer), oldest first. */
export async function listAttemptsByProcessorId(db: Executor, processorId: string): Promise<Attempt[]> {
  const rows = await db
    .selectFrom('attempts')
    .selectAll()
    .where('processor_id', '=', processorId)
    .orderBy('created_at', 'asc')
    .execute();
  return rows.map(toAttempt);
}

/** The attempt sent with idempotency key `key`. */
export async function findAttemptByKey(db: Executor, key: string): Promise<Attempt | undefined> {
  const row = await db
    .selectFrom('attempts')
    .selectAll()
    .where('idempotency_key', '=', key)
    .executeTakeFirst();
  return row && toAttempt(row);
}

/** Started captures and releases of the hold `targetId`: a processor event about it may settle them. */
export async function listStartedFollowUps(db: Executor, targetId: string): Promise<Attempt[]> {
  const rows = await db
    .selectFrom('attempts')
    .selectAll()
    .where('target_id', '=', targetId)
    .where('state', '=', 'started')
    .execute();
  return rows.map(toAttempt);
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
  const row = await countQuery.first(db, { sessionId, memberId });
  return Number(row?.n ?? 0);
}

const countQuery = prepared((db, p: { sessionId: string; memberId: string }) =>
  db
    .selectFrom('attempts')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('session_id', '=', p.sessionId)
    .where('member_id', '=', p.memberId),
);

const byId = prepared((db, p: { attemptId: string }) =>
  db.selectFrom('attempts').selectAll().where('id', '=', p.attemptId),
);

export async function findAttempt(db: Executor, attemptId: string): Promise<Attempt | undefined> {
  const row = await byId.first(db, { attemptId });
  return row && toAttempt(row);
}

const bySession = prepared((db, p: { sessionId: string }) =>
  db
    .selectFrom('attempts')
    .selectAll()
    .where('session_id', '=', p.sessionId)
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc'),
);

/** What the record step reads of a session's attempts: the live ones (docs/decisions.md#payments). */
export interface LiveAttempts {
  /** The processor's ids of the charges and captures that succeeded, oldest first. */
  charges: string[];
  /** The attempts still with the processor, as far as their recovery time needs them. */
  started: Pick<Attempt, 'state' | 'clientSecret' | 'createdAt' | 'updatedAt'>[];
}

/**
 * The session's attempts still with the processor (started) and its money taken (charges and captures
 * that succeeded), oldest first: what the charge ids and the recovery of calls in flight are read from.
 * Only the columns those need: this runs on every pay, over every share paid before it.
 */
export async function listLiveAttempts(db: Executor, sessionId: string): Promise<LiveAttempts> {
  const live: LiveAttempts = { charges: [], started: [] };
  for (const r of await liveQuery.all(db, { sessionId })) {
    if (r.state === 'started')
      live.started.push({
        state: r.state,
        clientSecret: r.client_secret,
        createdAt: r.created_at,
        updatedAt: r.updated_at,
      });
    else if (r.processor_id !== null) live.charges.push(r.processor_id);
  }
  return live;
}

const liveQuery = prepared((db, p: { sessionId: string }) =>
  db
    .selectFrom('attempts')
    .select(['state', 'processor_id', 'client_secret', 'created_at', 'updated_at'])
    .where('session_id', '=', p.sessionId)
    .where((eb) =>
      eb.or([
        eb('state', '=', 'started'),
        eb.and([eb('state', '=', 'succeeded'), eb('kind', 'in', ['charge', 'capture'])]),
      ]),
    )
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc'),
);

/** Every attempt of a session, oldest first. */
export async function listSessionAttempts(db: Executor, sessionId: string): Promise<Attempt[]> {
  return (await bySession.all(db, { sessionId })).map(toAttempt);
}
