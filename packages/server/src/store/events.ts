// The events outbox table: an event row is written in the same transaction as the change it reports
// (events/outbox.ts builds the payload), and delivery reads the rows afterwards.
import { type QueryCreator, sql, type Transaction } from 'kysely';
import { TEST_EVENT_TYPE } from '../domain/event-types.ts';
import { newestFirst } from './paging.ts';
import { fieldsOf, prepared, preparedBy } from './prepared.ts';
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

/** An event's columns, as placeholders of a prepared statement's `event`. */
const eventValues = (p: { event: EventRow }) => {
  const field = fieldsOf<EventRow>(p, 'event');
  return {
    id: field('id'),
    merchant_id: field('merchantId'),
    session_id: field('sessionId'),
    type: field('type'),
    payload: field('payload'),
    created_at: field('createdAt'),
  };
};

const insertQuery = prepared((db, p: { event: EventRow; dispatchedAt: number | null }) =>
  db.insertInto('events').values(Object.assign(eventValues(p), { dispatched_at: p.dispatchedAt })),
);

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

/**
 * A session's event as one statement: the insert numbers the row (events.seq) and, unless it is the
 * session's first event, gives it the time `createdAt` or, when the session already has an event at or
 * after that, the next millisecond after its newest one (events of a session strictly increase in
 * created_at), read by the insert itself; with a `notify` channel it also sends NOTIFY, which PostgreSQL
 * delivers only when the transaction commits (store/event-signal.ts). One shape per choice.
 */
const sessionEventQuery = preparedBy(
  (db, p: { event: EventRow; channel: string }, shape: `${'first' | 'next'}:${'notify' | 'quiet'}`) => {
    const field = fieldsOf<EventRow>(p, 'event');
    const columns = ['id', 'merchant_id', 'session_id', 'type', 'payload', 'created_at'] as const;
    const [order, notify] = shape.split(':');
    const insert = (into: QueryCreator<Database>) => {
      const base = into.insertInto('events').columns(columns);
      if (order === 'first') return base.values(eventValues(p));
      // max() over no rows is null, and `null >= x` is not true: the session's first event takes createdAt.
      return base.expression(
        into
          .selectFrom('events')
          .select([
            sql<string>`${field('id')}`.as('id'),
            sql<string>`${field('merchantId')}`.as('merchant_id'),
            sql<string>`${field('sessionId')}`.as('session_id'),
            sql<string>`${field('type')}`.as('type'),
            sql<string>`${field('payload')}`.as('payload'),
            sql<number>`case when max("created_at") >= ${field('createdAt')} then max("created_at") + 1 else ${field('createdAt')} end`.as(
              'created_at',
            ),
          ])
          .where('session_id', '=', field('sessionId')),
      );
    };
    if (notify === 'quiet') return insert(db);
    return db
      .with('written', (w) => insert(w).returning('seq'))
      .selectFrom('written')
      .select(sql<string>`pg_notify(${p.channel}, '')`.as('notified'));
  },
);

/**
 * Writes the session's event `event` in `trx` (whose caller holds the session's lock). `first`: the
 * session's first event (group.created), with nothing to order it after. `notifyChannel`: on PostgreSQL,
 * the channel to NOTIFY in the same statement (store/event-signal.ts).
 */
export async function insertSessionEvent(
  trx: Transaction<Database>,
  event: EventRow & { sessionId: string },
  options: { first: boolean; notifyChannel: string | undefined },
): Promise<void> {
  const shape =
    `${options.first ? 'first' : 'next'}:${options.notifyChannel === undefined ? 'quiet' : 'notify'}` as const;
  await sessionEventQuery(shape).execute(trx, { event, channel: options.notifyChannel ?? '' });
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
