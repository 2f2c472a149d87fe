// The events outbox (DESIGN.md §11): an event row is written in the same transaction as the change it
// reports, so a change without its event, or an event without its change, cannot happen. Delivery reads
// the rows afterwards.
import type { Transaction } from 'kysely';
import { toIso } from '../clock.ts';
import { ids } from '../ids.ts';
import type { Database } from '../store/schema.ts';
import type { Member, Session } from '../store/sessions.ts';
import type { EventType } from './types.ts';

export interface EventMember {
  id: string;
  name: string;
  amount_cents: number;
  status: string;
}

export interface EventPayload {
  id: string;
  type: EventType;
  timestamp: string;
  data: {
    session_id: string;
    order_ref: string | null;
    status: string;
    total_cents: number;
    currency: string;
    paid_amount: number;
    pending_amount: number;
    charges: string[];
    member?: EventMember;
    transfer?: string;
  };
}

export interface SessionSnapshot {
  session: Pick<Session, 'id' | 'merchantId' | 'orderRef' | 'status' | 'totalCents' | 'currency'>;
  members: Pick<Member, 'amountCents' | 'status'>[];
  charges?: string[];
  member?: Pick<Member, 'id' | 'name' | 'amountCents' | 'status'>;
  transfer?: string;
}

export const paidAmountOf = (members: SessionSnapshot['members']): number =>
  members.reduce((sum, m) => sum + (m.status === 'paid' ? m.amountCents : 0), 0);

export function buildEvent(type: EventType, snapshot: SessionSnapshot, now: number): EventPayload {
  const { session, members } = snapshot;
  const paid = paidAmountOf(members);
  const data: EventPayload['data'] = {
    session_id: session.id,
    order_ref: session.orderRef,
    status: session.status,
    total_cents: session.totalCents,
    currency: session.currency,
    paid_amount: paid,
    pending_amount: session.totalCents - paid,
    charges: snapshot.charges ?? [],
  };
  if (snapshot.member) {
    const m = snapshot.member;
    data.member = { id: m.id, name: m.name, amount_cents: m.amountCents, status: m.status };
  }
  if (snapshot.transfer) data.transfer = snapshot.transfer;
  return { id: ids.event(), type, timestamp: toIso(now), data };
}

/**
 * Writes the event inside `trx`; answers it. The row's created_at is the outbox order: strictly
 * increasing per session, so that two events of one session in one millisecond (a create and a cancel)
 * still read back, and go out, in the order they happened. The payload's timestamp stays `now`. Every
 * caller has claimed the session row in `trx` first, so no other event of the session is written
 * concurrently.
 */
export async function recordEvent(
  trx: Transaction<Database>,
  type: EventType,
  snapshot: SessionSnapshot,
  now: number,
): Promise<EventPayload> {
  const event = buildEvent(type, snapshot, now);
  // group.created is a session's first event by definition: nothing to order it after.
  const last =
    type === 'group.created'
      ? undefined
      : await trx
          .selectFrom('events')
          .select((eb) => eb.fn.max('created_at').as('at'))
          .where('session_id', '=', snapshot.session.id)
          .executeTakeFirst();
  const lastAt = last?.at === null || last?.at === undefined ? undefined : Number(last.at);
  await trx
    .insertInto('events')
    .values({
      id: event.id,
      merchant_id: snapshot.session.merchantId,
      session_id: snapshot.session.id,
      type,
      payload: JSON.stringify(event),
      created_at: lastAt === undefined ? now : Math.max(now, lastAt + 1),
    })
    .execute();
  return event;
}
