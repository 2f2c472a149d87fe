// Webhook deliveries (docs/decisions.md#webhook-delivery): one row per event and target, queued per
// receiver URL in the order the database numbered them (deliveries.seq), and one delivery_attempts row
// per attempt. A URL is delivered to by one dispatcher at a time across processes: the holder of its
// delivery_urls row (a lease taken by one conditional update of that row, and renewed while it sends).
import { type Selectable, sql, type Transaction } from 'kysely';
import type { Database, DeliveriesTable, DeliveryAttemptsTable, Executor } from './schema.ts';

export interface Delivery {
  id: string;
  eventId: string;
  merchantId: string;
  /** The endpoint delivered to; null for the session's webhook_url. */
  webhookId: string | null;
  url: string;
  state: DeliveriesTable['state'];
  attemptCount: number;
  /** When the next attempt is due; null once delivered or failed for good. */
  nextAttemptAt: number | null;
  createdAt: number;
  updatedAt: number;
}
export interface DeliveryAttempt {
  deliveryId: string;
  /** 1 for the first attempt of the delivery. */
  number: number;
  at: number;
  /** The receiver's HTTP status; null when no answer came. */
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
}

function toDelivery(row: Selectable<DeliveriesTable>): Delivery {
  return {
    id: row.id,
    eventId: row.event_id,
    merchantId: row.merchant_id,
    webhookId: row.webhook_id,
    url: row.url,
    state: row.state,
    attemptCount: row.attempt_count,
    nextAttemptAt: row.next_attempt_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function deliveryRow(d: Delivery): Omit<Selectable<DeliveriesTable>, 'seq'> {
  return {
    id: d.id,
    event_id: d.eventId,
    merchant_id: d.merchantId,
    webhook_id: d.webhookId,
    url: d.url,
    state: d.state,
    attempt_count: d.attemptCount,
    next_attempt_at: d.nextAttemptAt,
    created_at: d.createdAt,
    updated_at: d.updatedAt,
  };
}

const toDeliveryAttempt = (row: Selectable<DeliveryAttemptsTable>): DeliveryAttempt => ({
  deliveryId: row.delivery_id,
  number: row.number,
  at: row.at,
  statusCode: row.status_code,
  latencyMs: row.latency_ms,
  error: row.error,
});

/** An event the dispatcher has not fanned out yet, with the session's webhook_url. */
export interface UndispatchedEvent {
  id: string;
  merchantId: string;
  type: string;
  webhookUrl: string | null;
}

/** Any constant: the key of the advisory lock one fan-out at a time holds on PostgreSQL. */
const FAN_OUT_LOCK = 0x67632d66616e;

/**
 * Up to `limit` events not fanned out yet, in commit order (events.seq). On PostgreSQL the caller's
 * transaction first takes the fan-out lock, held until it ends: fan-outs run one at a time, so deliveries
 * are numbered in the order their events were (docs/decisions.md#webhook-delivery). When another process
 * holds it, answers none at once rather than wait: that process hears of every commit too (NOTIFY) and
 * fans out again after its current batch.
 */
export async function takeUndispatchedEvents(
  trx: Transaction<Database>,
  dialect: 'sqlite' | 'postgres',
  limit: number,
): Promise<UndispatchedEvent[]> {
  if (dialect === 'postgres') {
    const { rows } = await sql<{ locked: boolean }>`
      select pg_try_advisory_xact_lock(${FAN_OUT_LOCK}) as locked`.execute(trx);
    if (!rows[0]?.locked) return [];
  }
  const events = await trx
    .selectFrom('events')
    .select(['id', 'merchant_id', 'session_id', 'type'])
    .where('dispatched_at', 'is', null)
    .orderBy('seq')
    .limit(limit)
    .execute();
  const sessionIds = [...new Set(events.flatMap((e) => (e.session_id ? [e.session_id] : [])))];
  const urls = new Map(
    sessionIds.length === 0
      ? []
      : (
          await trx
            .selectFrom('sessions')
            .select(['id', 'webhook_url'])
            .where('id', 'in', sessionIds)
            .execute()
        ).map((s) => [s.id, s.webhook_url]),
  );
  return events.map((e) => ({
    id: e.id,
    merchantId: e.merchant_id,
    type: e.type,
    webhookUrl: (e.session_id && urls.get(e.session_id)) || null,
  }));
}

export async function findSessionWebhookUrl(db: Executor, sessionId: string): Promise<string | null> {
  const row = await db
    .selectFrom('sessions')
    .select('webhook_url')
    .where('id', '=', sessionId)
    .executeTakeFirst();
  return row?.webhook_url ?? null;
}

export async function markEventsDispatched(
  trx: Transaction<Database>,
  eventIds: readonly string[],
  now: number,
): Promise<void> {
  if (eventIds.length === 0) return;
  await trx.updateTable('events').set({ dispatched_at: now }).where('id', 'in', eventIds).execute();
}

/**
 * Queues deliveries at the end of their URLs' queues, in the order given (the database numbers them as
 * they are inserted), and makes sure each URL has its delivery_urls row: a queue that was empty falls due
 * now; one whose head waits for a retry keeps waiting.
 */
export async function insertDeliveries(
  trx: Transaction<Database>,
  deliveries: readonly Delivery[],
  now: number,
): Promise<void> {
  // SQLite binds at most 32766 variables a statement: 10 columns × 500 rows stays well inside.
  for (let i = 0; i < deliveries.length; i += 500) {
    await trx
      .insertInto('deliveries')
      .values(deliveries.slice(i, i + 500).map(deliveryRow))
      .execute();
  }
  // Sorted, so that two transactions queueing to the same URLs lock their rows in one order.
  const urls = [...new Set(deliveries.map((d) => d.url))].sort();
  for (let i = 0; i < urls.length; i += 500) {
    await trx
      .insertInto('delivery_urls')
      .values(urls.slice(i, i + 500).map((url) => ({ url, due_at: now, holder: null, held_until: null })))
      .onConflict((oc) =>
        oc.column('url').doUpdateSet({ due_at: sql`coalesce(delivery_urls.due_at, excluded.due_at)` }),
      )
      .execute();
  }
}

/**
 * Makes the queues of these URLs due now: a head waiting for its retry is tried now, in its place, and so
 * are the deliveries behind it (a redelivery asked for by the merchant: docs/api.md#webhook-delivery). The order
 * of each queue is unchanged; a delivery that fails again goes on with its retry schedule.
 */
export async function bringQueuesForward(
  trx: Transaction<Database>,
  urls: readonly string[],
  now: number,
): Promise<void> {
  if (urls.length === 0) return;
  await trx
    .updateTable('deliveries')
    .set({ next_attempt_at: now, updated_at: now })
    .where('url', 'in', urls)
    .where('state', '=', 'pending')
    .where('next_attempt_at', '>', now)
    .execute();
  await trx
    .updateTable('delivery_urls')
    .set({ due_at: now })
    .where('url', 'in', urls)
    .where((eb) => eb.or([eb('due_at', 'is', null), eb('due_at', '>', now)]))
    .execute();
}

export interface LeaseRequest {
  now: number;
  /** Identifies this lease: only its holder renews it, records attempts under it, and gives it back. */
  holder: string;
  /** Until when the URLs are this holder's; past it, another may take them. */
  until: number;
  /** At most this many URLs. */
  limit: number;
  /** URLs this process is delivering to right now: not taken again, even if their lease ran out. */
  busy: readonly string[];
}

/**
 * Takes the lease of up to `limit` URLs whose queue head is due and which nobody holds, soonest due
 * first, in one statement. On PostgreSQL the rows are locked as they are read (SKIP LOCKED passes over
 * those another dispatcher is taking), and the update checks the lease again on the row as locked: of
 * two processes, one gets the URL. Answers the URLs taken.
 */
export async function takeDueUrls(
  db: Executor,
  dialect: 'sqlite' | 'postgres',
  request: LeaseRequest,
): Promise<string[]> {
  const { now, holder, until, limit } = request;
  const busy = request.busy.length === 0 ? sql`` : sql`and url not in (${sql.join(request.busy)})`;
  const free = sql`due_at <= ${now} and (held_until is null or held_until <= ${now}) ${busy}`;
  const lock = dialect === 'postgres' ? sql`for update skip locked` : sql``;
  // On SQLite an UPDATE takes the database's one write lock even when it matches nothing, and a wake
  // mostly finds nothing due (an event with no endpoint to go to): look first, with a read.
  if (dialect === 'sqlite') {
    const due = await sql`select 1 from delivery_urls where ${free} limit 1`.execute(db);
    if (due.rows.length === 0) return [];
  }
  const { rows } = await sql<{ url: string; due_at: number }>`
    update delivery_urls set holder = ${holder}, held_until = ${until}
    where url in (select url from delivery_urls where ${free} order by due_at limit ${limit} ${lock})
      and ${free}
    returning url, due_at`.execute(db);
  return rows.sort((a, b) => Number(a.due_at) - Number(b.due_at)).map((r) => r.url);
}

/** When the first lease held elsewhere on a URL with due deliveries runs out, if any. */
export async function findHeldDueUrlExpiry(
  db: Executor,
  now: number,
  busy: readonly string[],
): Promise<number | undefined> {
  let query = db
    .selectFrom('delivery_urls')
    .select((eb) => eb.fn.min('held_until').as('at'))
    .where('due_at', '<=', now)
    .where('held_until', '>', now);
  if (busy.length > 0) query = query.where('url', 'not in', busy);
  const row = await query.executeTakeFirst();
  return row?.at === null || row?.at === undefined ? undefined : Number(row.at);
}

/** Queues read by one statement of queueHeads (SQLite takes at most 500 selects in a compound). */
const QUEUES_PER_READ = 100;

/** A delivery as read from its URL's queue, with its place in it. */
export type QueuedDelivery = Delivery & { seq: number };

/**
 * The heads of the URLs' queues: for each, its oldest pending deliveries in queue order (after `after`,
 * the last one a chain already sent, when given), at most `perUrl`, up to the first that is not due yet
 * (a delivery waiting for its retry holds the ones behind it). A URL with nothing due answers [].
 */
export async function queueHeads(
  db: Executor,
  urls: readonly string[],
  now: number,
  perUrl: number,
  after = 0,
): Promise<Map<string, QueuedDelivery[]>> {
  const heads = new Map<string, QueuedDelivery[]>(urls.map((url) => [url, []]));
  if (urls.length === 0) return heads;
  // One limited read per URL, each walking the queue's index (url, seq) from its head and stopping after
  // perUrl rows: a long queue costs what its head costs (a window over every pending row of the URLs read
  // the whole queue; docs/benchmarks.md#against-table-size-postgresql).
  const rows: Selectable<DeliveriesTable>[] = [];
  for (let start = 0; start < urls.length; start += QUEUES_PER_READ) {
    const perQueue = urls.slice(start, start + QUEUES_PER_READ).map(
      (url, i) => sql`select * from (
        select * from deliveries where url = ${url} and state = 'pending' and seq > ${after}
        order by seq limit ${perUrl}
      ) as ${sql.raw(`q${i}`)}`,
    );
    const read = await sql<Selectable<DeliveriesTable>>`${sql.join(perQueue, sql` union all `)}
      order by url, seq`.execute(db);
    rows.push(...read.rows);
  }
  const blocked = new Set<string>();
  for (const row of rows) {
    if (blocked.has(row.url)) continue;
    if (row.next_attempt_at === null || Number(row.next_attempt_at) > now) {
      blocked.add(row.url);
      continue;
    }
    heads.get(row.url)?.push({ seq: Number(row.seq), ...toDelivery(row) });
  }
  return heads;
}

/** Renews the holder's lease of a URL until `until`; false when the lease is no longer this holder's. */
export async function renewUrlLease(
  db: Executor,
  lease: { url: string; holder: string; until: number },
): Promise<boolean> {
  const result = await db
    .updateTable('delivery_urls')
    .set({ held_until: lease.until })
    .where('url', '=', lease.url)
    .where('holder', '=', lease.holder)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Gives a URL back, if this holder still has it: its row says afresh when the queue's head falls due, or
 * goes when nothing waits. The row is locked before the queue is read, and a fan-out writes its
 * deliveries before it updates the row in one transaction, so a delivery queued meanwhile is never
 * missed: either this read sees it, or the fan-out's update comes after and marks the queue due.
 */
export async function releaseUrl(db: Executor, dialect: 'sqlite' | 'postgres', url: string, holder: string) {
  await db.transaction().execute(async (trx) => {
    let owned = trx
      .selectFrom('delivery_urls')
      .select('url')
      .where('url', '=', url)
      .where('holder', '=', holder);
    if (dialect === 'postgres') owned = owned.forUpdate();
    if (!(await owned.executeTakeFirst())) return;
    const head = await trx
      .selectFrom('deliveries')
      .select('next_attempt_at')
      .where('url', '=', url)
      .where('state', '=', 'pending')
      .orderBy('seq')
      .limit(1)
      .executeTakeFirst();
    if (head) {
      await trx
        .updateTable('delivery_urls')
        .set({ holder: null, held_until: null, due_at: head.next_attempt_at })
        .where('url', '=', url)
        .execute();
    } else {
      await trx.deleteFrom('delivery_urls').where('url', '=', url).execute();
    }
  });
}

export interface AttemptOutcome {
  at: number;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  /** The delivery's state after this attempt, and when the next is due (null unless pending). */
  state: Delivery['state'];
  nextAttemptAt: number | null;
}

/** An attempt to record: the delivery (as read from its queue) and how the attempt went. */
export interface AttemptRecord {
  delivery: Pick<Delivery, 'id' | 'url' | 'attemptCount'>;
  outcome: AttemptOutcome;
}

/**
 * Records attempts of deliveries to URLs this holder leases, and moves each delivery on, in a few
 * statements whatever their number (one update per outcome, one insert). A delivery whose URL's lease
 * was lost meanwhile (its holder ran out of time and another dispatcher took the URL) is left alone;
 * answers the ids recorded.
 */
export async function recordDeliveryAttempts(
  trx: Transaction<Database>,
  dialect: 'sqlite' | 'postgres',
  holder: string,
  records: readonly AttemptRecord[],
): Promise<Set<string>> {
  const recorded = new Set<string>();
  // The URL rows of this holder's leases, locked (FOR SHARE) until the attempts are written: a dispatcher
  // taking a URL over waits for them, and so reads the queue with these attempts in it, never before.
  const urls = [...new Set(records.map((r) => r.delivery.url))].sort();
  let held = trx
    .selectFrom('delivery_urls')
    .select('url')
    .where('url', 'in', urls)
    .where('holder', '=', holder);
  if (dialect === 'postgres') held = held.forShare();
  const still = new Set((await held.execute()).map((r) => r.url));
  const groups = new Map<string, AttemptRecord[]>();
  for (const record of records) {
    if (!still.has(record.delivery.url)) continue;
    const { state, nextAttemptAt } = record.outcome;
    const key = `${state}:${nextAttemptAt}`;
    groups.set(key, [...(groups.get(key) ?? []), record]);
  }
  for (const group of groups.values()) {
    const { state, nextAttemptAt } = (group[0] as AttemptRecord).outcome;
    const at = Math.max(...group.map((r) => r.outcome.at));
    const moved = await trx
      .updateTable('deliveries')
      .set((eb) => ({
        state,
        attempt_count: eb('attempt_count', '+', 1),
        next_attempt_at: nextAttemptAt,
        updated_at: at,
      }))
      .where(
        'id',
        'in',
        group.map((r) => r.delivery.id),
      )
      .returning('id')
      .execute();
    for (const row of moved) recorded.add(row.id);
  }
  const rows = records
    .filter((r) => recorded.has(r.delivery.id))
    .map((r) => ({
      delivery_id: r.delivery.id,
      // The lease was held since the delivery was read: nobody else attempted it meanwhile.
      number: r.delivery.attemptCount + 1,
      at: r.outcome.at,
      status_code: r.outcome.statusCode,
      latency_ms: r.outcome.latencyMs,
      error: r.outcome.error,
    }));
  for (let i = 0; i < rows.length; i += 500) {
    await trx
      .insertInto('delivery_attempts')
      .values(rows.slice(i, i + 500))
      .execute();
  }
  return recorded;
}

/**
 * Ends, as failed, the pending deliveries to an endpoint that will not get them (disabled by a 410, or
 * deleted). An attempt in flight meanwhile is still recorded as it went by its URL's holder.
 */
export async function failPendingDeliveriesTo(db: Executor, webhookId: string, now: number): Promise<void> {
  await db
    .updateTable('deliveries')
    .set({ state: 'failed', next_attempt_at: null, updated_at: now })
    .where('webhook_id', '=', webhookId)
    .where('state', '=', 'pending')
    .execute();
}

/** Payloads of events, by id. */
export async function findEventPayloads(
  db: Executor,
  eventIds: readonly string[],
): Promise<Map<string, string>> {
  if (eventIds.length === 0) return new Map();
  const rows = await db.selectFrom('events').select(['id', 'payload']).where('id', 'in', eventIds).execute();
  return new Map(rows.map((r) => [r.id, r.payload]));
}

/** The event's deliveries, oldest first, each with its attempts in order. */
export async function listDeliveriesOfEvent(
  db: Executor,
  eventId: string,
): Promise<(Delivery & { attempts: DeliveryAttempt[] })[]> {
  const deliveries = await db
    .selectFrom('deliveries')
    .selectAll()
    .where('event_id', '=', eventId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  if (deliveries.length === 0) return [];
  const attempts = await listAttemptsOf(
    db,
    deliveries.map((d) => d.id),
  );
  return deliveries.map((d) => ({ attempts: attempts.get(d.id) ?? [], ...toDelivery(d) }));
}

/** The attempts of these deliveries, first to last, by delivery id. */
export async function listAttemptsOf(
  db: Executor,
  deliveryIds: readonly string[],
): Promise<Map<string, DeliveryAttempt[]>> {
  const byDelivery = new Map<string, DeliveryAttempt[]>();
  if (deliveryIds.length === 0) return byDelivery;
  const rows = await db
    .selectFrom('delivery_attempts')
    .selectAll()
    .where('delivery_id', 'in', deliveryIds)
    .orderBy('number')
    .execute();
  for (const row of rows) {
    const list = byDelivery.get(row.delivery_id) ?? [];
    list.push(toDeliveryAttempt(row));
    byDelivery.set(row.delivery_id, list);
  }
  return byDelivery;
}
