// The events outbox table: an event row is written in the same transaction as the change it reports
// (events/outbox.ts builds the payload), and delivery reads the rows afterwards.
import type { Transaction } from 'kysely';
import { TEST_EVENT_TYPE } from '../domain/event-types.ts';
import { newestFirst } from './paging.ts';
import { fieldsOf, prepared } from './prepared.ts';
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

const insertQuery = prepared((db, p: { event: EventRow; dispatchedAt: number | null }) => {
  const field = fieldsOf<EventRow>(p, 'event');
  return db.insertInto('events').values({
    id: field('id'),
    merchant_id: field('merchantId'),
    session_id: field('sessionId'),
    type: field('type'),
    payload: field('payload'),
    created_at: field('createdAt'),
    dispatched_at: p.dispatchedAt,
  });
});

/**
 * Writes an event to the outbox. `dispatchedAt`: an event whose deliveries the caller makes itself (the
 * test event, to one endpoint), which the dispatcher's fan-out must not target again.
 */
export async function insertEvent(
  trx: Transaction<Database>,
  event: EventRow,
  dispatchedAt: number | null = null,
): Promise<void> {
  await insertQuery.execute(trx, { event, dispatchedAt });
}

const latestQuery = prepared((db, p: { sessionId: string }) =>
  db
    .selectFrom('events')
    .select((eb) => eb.fn.max('created_at').as('at'))
    .where('session_id', '=', p.sessionId),
);

/** The outbox time of the session's newest event, if it has one. */
export async function findLatestEventAt(db: Executor, sessionId: string): Promise<number | undefined> {
  const row = await latestQuery.first(db, { sessionId });
  return row?.at === null || row?.at === undefined ? undefined : Number(row.at);
}

export interface EventListFilter {
  type?: string;
  sessionId?: string;
  /** The last event of the previous page: the page starts after it. */
  after?: { createdAt: number; id: string };
}

/**
 * The merchant's events newest first (outbox order, then id); one more than `limit` to tell has_more. Test
 * events are not listed: they report nothing that happened (docs/api.md#test-events).
 */
export async function listEvents(
  db: Executor,
  merchantId: string,
  limit: number,
  filter: EventListFilter,
): Promise<EventRow[]> {
  let query = db
    .selectFrom('events')
    .select(['id', 'merchant_id', 'session_id', 'type', 'payload', 'created_at'])
    .where('merchant_id', '=', merchantId)
    .where('type', '!=', TEST_EVENT_TYPE);
  if (filter.type !== undefined) query = query.where('type', '=', filter.type);
  if (filter.sessionId !== undefined) query = query.where('session_id', '=', filter.sessionId);
  const rows = await newestFirst(query, filter.after, limit).execute();
  return rows.map(toEventRow);
}

/** The merchant's event by id; another merchant's, or a test event, is simply not found. */
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
    .where('type', '!=', TEST_EVENT_TYPE)
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
