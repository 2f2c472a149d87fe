// The events API (docs/api.md#events-api): a merchant's events, one with its deliveries and their attempts,
// and a fresh delivery of one to every current target.
import type { Deps } from '../deps.ts';
import { ServiceError } from '../errors.ts';
import type { EventPayload } from '../events/outbox.ts';
import type { Delivery, DeliveryAttempt } from '../store/deliveries.ts';
import { bringQueuesForward, insertDeliveries, listDeliveriesOfEvent } from '../store/deliveries.ts';
import { type EventListFilter, type EventRow, findEvent, listEvents } from '../store/events.ts';
import { currentTargets, newDelivery } from './deliveries.ts';
import { type AnswerSpec, recordAnswer } from './idempotency.ts';

export interface EventDetail {
  event: EventPayload;
  deliveries: (Delivery & { attempts: DeliveryAttempt[] })[];
}

export async function listMerchantEvents(
  deps: Deps,
  merchantId: string,
  limit: number,
  filter: { type?: string; sessionId?: string; cursor?: string },
): Promise<{ page: EventPayload[]; hasMore: boolean; nextCursor: string | null }> {
  const query: EventListFilter = { type: filter.type, sessionId: filter.sessionId };
  if (filter.cursor !== undefined) {
    // The cursor is the last event of the previous page; one that is not the merchant's is a mistake.
    const last = await findEvent(deps.db.kysely, merchantId, filter.cursor);
    if (!last) throw invalidCursor();
    query.after = { createdAt: last.createdAt, id: last.id };
  }
  const rows = await listEvents(deps.db.kysely, merchantId, limit, query);
  const page = rows.slice(0, limit);
  const hasMore = rows.length > limit;
  return { page: page.map(payloadOf), hasMore, nextCursor: hasMore ? (page.at(-1)?.id ?? null) : null };
}

export async function getEventDetail(deps: Deps, merchantId: string, eventId: string): Promise<EventDetail> {
  const row = await findEvent(deps.db.kysely, merchantId, eventId);
  if (!row) throw new ServiceError('event_not_found');
  return { event: payloadOf(row), deliveries: await listDeliveriesOfEvent(deps.db.kysely, row.id) };
}

/**
 * A fresh delivery of the event to every target it has now (the session's webhook_url, the endpoints
 * subscribed to its type and enabled), at the end of each URL's queue; earlier deliveries stay as they
 * are. Answers the event with all its deliveries.
 */
export async function redeliverEvent(
  deps: Deps,
  merchantId: string,
  eventId: string,
  answer?: AnswerSpec<EventDetail>,
): Promise<EventDetail> {
  const now = deps.clock.now();
  const row = await findEvent(deps.db.kysely, merchantId, eventId);
  if (!row) throw new ServiceError('event_not_found');
  return deps.db.kysely.transaction().execute(async (trx) => {
    const targets = await currentTargets(deps, trx, row);
    const fresh = targets.map((target) => newDelivery(row, target, now));
    await insertDeliveries(trx, fresh, now);
    // Due now means sent now: a queue whose head waits for a retry (perhaps hours away) is tried now, in
    // order, rather than holding the fresh delivery behind that wait.
    await bringQueuesForward(
      trx,
      fresh.map((d) => d.url),
      now,
    );
    // The dispatcher hears of it as of a new event: the fresh deliveries are due now.
    await deps.db.events.announce(trx);
    const detail = { event: payloadOf(row), deliveries: await listDeliveriesOfEvent(trx, row.id) };
    await recordAnswer(trx, answer, detail);
    return detail;
  });
}

const payloadOf = (row: EventRow): EventPayload => JSON.parse(row.payload) as EventPayload;

const invalidCursor = () =>
  new ServiceError('invalid_request', {
    message: 'cursor must be the next_cursor of a previous page',
    details: ['cursor must be the next_cursor of a previous page'],
  });
