// The processor's events (Stripe's webhooks, the sandbox's own), one row each by the processor's event id:
// a second delivery of one finds its row and changes nothing, so each is acted on once
// (docs/decisions.md#stripes-webhooks). A row is claimed for a while by the process handling it, so
// several processes share the backlog without handling one twice at a time.
import type { Executor } from './schema.ts';

/** What the store needs of an event: its id and type; the rest is kept as JSON for the flows to read. */
interface EventBasics {
  id: string;
  type: string;
}

export interface StoredProcessorEvent<E extends EventBasics> {
  event: E;
  receivedAt: number;
  dueAt: number;
  tries: number;
}

/** Keeps `event`; false when it was kept before (the processor sent it again), in which case nothing changes. */
export async function insertProcessorEvent(
  db: Executor,
  event: EventBasics,
  receivedAt: number,
  dueAt: number = receivedAt,
): Promise<boolean> {
  const inserted = await db
    .insertInto('processor_events')
    .values({
      id: event.id,
      type: event.type,
      payload: JSON.stringify(event),
      received_at: receivedAt,
      due_at: dueAt,
      claimed_until: null,
      processed_at: null,
      tries: 0,
      error: null,
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted !== undefined;
}

/**
 * Claims events due by `now`, not handled yet, and not held by another process: each row is taken by a
 * conditional update, so two processes never hold one at once. `holdMs`: how long the claim lasts.
 */
export async function claimDueProcessorEvents<E extends EventBasics>(
  db: Executor,
  now: number,
  holdMs: number,
  limit: number,
): Promise<StoredProcessorEvent<E>[]> {
  const candidates = await db
    .selectFrom('processor_events')
    .select('id')
    .where('processed_at', 'is', null)
    .where('due_at', '<=', now)
    .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', now)]))
    .orderBy('due_at')
    .limit(limit)
    .execute();
  const claimed: StoredProcessorEvent<E>[] = [];
  for (const { id } of candidates) {
    const row = await db
      .updateTable('processor_events')
      .set({ claimed_until: now + holdMs })
      .where('id', '=', id)
      .where('processed_at', 'is', null)
      .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', now)]))
      .returning(['payload', 'received_at', 'due_at', 'tries'])
      .executeTakeFirst();
    if (row)
      claimed.push({
        event: JSON.parse(row.payload) as E,
        receivedAt: row.received_at,
        dueAt: row.due_at,
        tries: row.tries,
      });
  }
  return claimed;
}

/** Claims one event by id (the webhook route handles the event it just kept at once); false when held or done. */
export async function claimProcessorEvent(
  db: Executor,
  id: string,
  now: number,
  holdMs: number,
): Promise<boolean> {
  const result = await db
    .updateTable('processor_events')
    .set({ claimed_until: now + holdMs })
    .where('id', '=', id)
    .where('processed_at', 'is', null)
    .where('due_at', '<=', now)
    .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', now)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function markProcessorEventHandled(db: Executor, id: string, now: number): Promise<void> {
  await db
    .updateTable('processor_events')
    .set({ processed_at: now, claimed_until: null, error: null })
    .where('id', '=', id)
    .execute();
}

/** Handling failed: tried again at `retryAt`, with why it failed kept for the operator. */
export async function markProcessorEventFailed(
  db: Executor,
  id: string,
  error: string,
  retryAt: number,
): Promise<void> {
  await db
    .updateTable('processor_events')
    .set((eb) => ({ tries: eb('tries', '+', 1), error, due_at: retryAt, claimed_until: null }))
    .where('id', '=', id)
    .execute();
}
