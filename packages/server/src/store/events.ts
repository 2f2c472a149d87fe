// The events outbox table: an event row is written in the same transaction as the change it reports
// (events/outbox.ts builds the payload), and delivery reads the rows afterwards.
import type { Transaction } from 'kysely';
import type { Database, Executor } from './schema.ts';

export interface EventRow {
  id: string;
  merchantId: string;
  sessionId: string | null;
  type: string;
  /** The payload as JSON text, exactly as it is delivered. */
  payload: string;
  createdAt: number;
}

export async function insertEvent(trx: Transaction<Database>, event: EventRow): Promise<void> {
  await trx
    .insertInto('events')
    .values({
      id: event.id,
      merchant_id: event.merchantId,
      session_id: event.sessionId,
      type: event.type,
      payload: event.payload,
      created_at: event.createdAt,
    })
    .execute();
}

/** The outbox time of the session's newest event, if it has one. */
export async function findLatestEventAt(db: Executor, sessionId: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('events')
    .select((eb) => eb.fn.max('created_at').as('at'))
    .where('session_id', '=', sessionId)
    .executeTakeFirst();
  return row?.at === null || row?.at === undefined ? undefined : Number(row.at);
}

export interface EventListFilter {
  type?: string;
  sessionId?: string;
  /** The last event of the previous page: the page starts after it. */
  after?: { createdAt: number; id: string };
}

/** The merchant's events newest first (outbox order, then id); one more than `limit` to tell has_more. */
export async function listEvents(
  db: Executor,
  merchantId: string,
  limit: number,
  filter: EventListFilter,
): Promise<EventRow[]> {
  let query = db
    .selectFrom('events')
    .select(['id', 'merchant_id', 'session_id', 'type', 'payload', 'created_at'])
    .where('merchant_id', '=', merchantId);
  if (filter.type !== undefined) query = query.where('type', '=', filter.type);
  if (filter.sessionId !== undefined) query = query.where('session_id', '=', filter.sessionId);
  const after = filter.after;
  if (after) {
    query = query.where((eb) =>
      eb.or([
        eb('created_at', '<', after.createdAt),
        eb.and([eb('created_at', '=', after.createdAt), eb('id', '<', after.id)]),
      ]),
    );
  }
  const rows = await query
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
  return rows.map(toEventRow);
}

/** The merchant's event by id; another merchant's is simply not found. */
export async function findEvent(
  db: Executor,
  merchantId: string,
  eventId: string,
): Promise<EventRow | undefined> {
  const row = await db
    .selectFrom('events')
    .select(['id', 'merchant_id', 'session_id', 'type', 'payload', 'created_at'])
    .where('id', '=', eventId)
    .where('merchant_id', '=', merchantId)
    .executeTakeFirst();
  return row && toEventRow(row);
}

function toEventRow(row: {
  id: string;
  merchant_id: string;
  session_id: string | null;
  type: string;
  payload: string;
  created_at: number;
}): EventRow {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    sessionId: row.session_id,
    type: row.type,
    payload: row.payload,
    createdAt: Number(row.created_at),
  };
}
