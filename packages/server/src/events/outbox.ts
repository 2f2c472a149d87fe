// The events outbox (docs/api.md#events): an event row is written in the same transaction as the
// change it reports, so a change without its event, or an event without its change, cannot happen.
// Delivery reads the rows afterwards.

import type { Transaction } from 'kysely';
import type { Static } from 'typebox';
import { toIso } from '../clock.ts';
import { type EventType, TEST_EVENT_TYPE } from '../domain/event-types.ts';
import { ids } from '../ids.ts';
import type { EventSignal } from '../store/event-signal.ts';
import { insertEvent, insertSessionEvent } from '../store/events.ts';
import type { Member } from '../store/members.ts';
import type { Database } from '../store/schema.ts';
import type { Session } from '../store/sessions.ts';
import { amountsToWire, memberToWire } from '../wire/mappers.ts';
import type { EventSchema } from '../wire/schemas.ts';

export type EventPayload = Static<typeof EventSchema>;

type MemberBasics = Pick<Member, 'id' | 'name' | 'amountCents' | 'status' | 'isOrganizer'>;

export interface SessionSnapshot {
  session: Pick<Session, 'id' | 'merchantId' | 'orderRef' | 'status' | 'totalCents' | 'currency'>;
  /** What the group has paid (domain/members.ts paidAmountOf). */
  paidCents: number;
  charges?: string[];
  member?: MemberBasics;
  transfer?: string;
  /** group.share_refund_failed: the refund that failed. */
  refund?: EventPayload['data']['refund'];
  /** group.share_disputed, group.share_dispute_closed: the dispute. */
  dispute?: EventPayload['data']['dispute'];
}

function buildEvent(type: EventType, snapshot: SessionSnapshot, now: number): EventPayload {
  const { session, paidCents } = snapshot;
  const data: EventPayload['data'] = {
    session_id: session.id,
    order_ref: session.orderRef,
    status: session.status,
    total_cents: session.totalCents,
    currency: session.currency,
    ...amountsToWire(session, paidCents),
    charges: snapshot.charges ?? [],
  };
  if (snapshot.member) data.member = memberToWire(snapshot.member);
  if (snapshot.transfer) data.transfer = snapshot.transfer;
  if (snapshot.refund) data.refund = snapshot.refund;
  if (snapshot.dispute) data.dispute = snapshot.dispute;
  return { id: ids.event(), type, timestamp: toIso(now), data };
}

/**
 * Writes the event inside `trx`; answers it. The database numbers the row as it is inserted (events.seq):
 * the order delivery follows. Every caller has locked the session row in `trx` first, so no other event of
 * the session is written concurrently, and the session's next event is numbered only after this one
 * committed: per session, number order is commit order (docs/decisions.md#webhook-delivery). The row's
 * created_at also strictly increases per session (GET /events reads in that order); the payload's
 * timestamp stays `now`. The dispatcher is told through `signal` once the transaction commits.
 */
export async function recordEvent(
  signal: EventSignal,
  trx: Transaction<Database>,
  type: EventType,
  snapshot: SessionSnapshot,
  now: number,
): Promise<EventPayload> {
  const event = buildEvent(type, snapshot, now);
  // One statement: the insert reads the session's newest event time itself (group.created is a session's
  // first event by definition: nothing to order it after), and on PostgreSQL sends the NOTIFY too.
  await insertSessionEvent(
    trx,
    {
      id: event.id,
      merchantId: snapshot.session.merchantId,
      sessionId: snapshot.session.id,
      type,
      payload: JSON.stringify(event),
      createdAt: now,
    },
    { first: type === 'group.created', notifyChannel: signal.notifyChannel },
  );
  if (signal.notifyChannel === undefined) await signal.announce(trx);
  return event;
}

/** The test event's payload (docs/api.md#test-events): which endpoint it tests, and nothing else. */
export interface TestEventPayload {
  id: string;
  type: typeof TEST_EVENT_TYPE;
  timestamp: string;
  data: { webhook_id: string };
}

/**
 * Writes a test event for one endpoint inside `trx`, marked as fanned out already: its one delivery, to
 * that endpoint, is the caller's to queue (flows/webhooks.ts sendTestEvent). No session, so no session's
 * order to keep.
 */
export async function recordTestEvent(
  trx: Transaction<Database>,
  endpoint: { merchantId: string; id: string },
  now: number,
): Promise<TestEventPayload> {
  const event: TestEventPayload = {
    id: ids.event(),
    type: TEST_EVENT_TYPE,
    timestamp: toIso(now),
    data: { webhook_id: endpoint.id },
  };
  await insertEvent(
    trx,
    {
      id: event.id,
      merchantId: endpoint.merchantId,
      sessionId: null,
      type: event.type,
      payload: JSON.stringify(event),
      createdAt: now,
    },
    now,
  );
  return event;
}
