// The events outbox table: an event row is written in the same transaction as the change it reports
// (events/outbox.ts builds the payload), and delivery reads the rows afterwards.
import type { Transaction } from 'kysely';
import type { Database } from './schema.ts';
import type { Executor } from './sessions.ts';

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
