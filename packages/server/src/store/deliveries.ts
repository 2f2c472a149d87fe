// Webhook deliveries (docs/decisions.md#webhook-delivery): one row per event and target, claimed by one
// dispatcher at a time, and one delivery_attempts row per attempt. Every claim is a single statement (on
// PostgreSQL over rows locked with FOR UPDATE SKIP LOCKED), so two dispatchers never hold one delivery.
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
  /** The dispatcher holding the delivery, and until when. */
  claim: string | null;
  claimedUntil: number | null;
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
    claim: row.claim,
    claimedUntil: row.claimed_until,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function deliveryRow(d: Delivery): Selectable<DeliveriesTable> {
  return {
    id: d.id,
    event_id: d.eventId,
    merchant_id: d.merchantId,
    webhook_id: d.webhookId,
    url: d.url,
    state: d.state,
    attempt_count: d.attemptCount,
    next_attempt_at: d.nextAttemptAt,
    claim: d.claim,
    claimed_until: d.claimedUntil,
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

/** Due order: when the next attempt is due, then when the delivery was made. */
const byDueTime = (a: Delivery, b: Delivery) =>
  (a.nextAttemptAt ?? 0) - (b.nextAttemptAt ?? 0) || a.createdAt - b.createdAt;

/** An event the dispatcher has not fanned out yet, with the session's webhook_url. */
export interface UndispatchedEvent {
  id: string;
  merchantId: string;
  type: string;
  webhookUrl: string | null;
}

/**
 * Up to `limit` events not fanned out yet, oldest first. On PostgreSQL they are locked (SKIP LOCKED: a
 * dispatcher working on some leaves them to it) until `trx` ends.
 */
export async function lockUndispatchedEvents(
  trx: Transaction<Database>,
  dialect: 'sqlite' | 'postgres',
  limit: number,
): Promise<UndispatchedEvent[]> {
  let query = trx
    .selectFrom('events')
    .select(['id', 'merchant_id', 'session_id', 'type'])
    .where('dispatched_at', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .limit(limit);
  if (dialect === 'postgres') query = query.forUpdate().skipLocked();
  const events = await query.execute();
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

export async function insertDeliveries(
  trx: Transaction<Database>,
  deliveries: readonly Delivery[],
): Promise<void> {
  // SQLite binds at most 32766 variables a statement: 12 columns × 500 rows stays well inside.
  for (let i = 0; i < deliveries.length; i += 500) {
    await trx
      .insertInto('deliveries')
      .values(deliveries.slice(i, i + 500).map(deliveryRow))
      .execute();
  }
}

export interface ClaimRequest {
  now: number;
  /** Identifies this claim: only its holder may record the attempt. */
  claim: string;
  /** Until when the claimed deliveries are this dispatcher's; past it, another may take them. */
  until: number;
  /** At most this many targets (URLs)… */
  targets: number;
  /** …and at most this many deliveries of each. */
  perTarget: number;
  /** URLs this process is delivering to right now: none of theirs is claimed. */
  busy: readonly string[];
}

/**
 * How many due deliveries one claim looks at, oldest first, before choosing among them: the window
 * functions cost in proportion (2.4 ms for 500 on SQLite, 0.5 ms for 100). A claim that finds one busy
 * URL's backlog fills one chain; the dispatcher claims again at once for the others.
 */
const CLAIM_SCAN = 100;

/**
 * Claims due deliveries, oldest first, in one statement: at most `perTarget` of a URL, from at most
 * `targets` URLs, none of a URL another claim is still delivering to (so one slow receiver holds one
 * slot, never the queue). Answers them in due order, each with the claim set.
 */
export async function claimDueDeliveries(
  db: Executor,
  dialect: 'sqlite' | 'postgres',
  request: ClaimRequest,
): Promise<Delivery[]> {
  const { now, claim, until, targets, perTarget } = request;
  // Another process's deliveries in flight count too: their rows carry a live claim.
  const busy = request.busy.length === 0 ? sql`` : sql`and url not in (${sql.join(request.busy)})`;
  const lock = dialect === 'postgres' ? sql`for update skip locked` : sql``;
  const { rows } = await sql<Selectable<DeliveriesTable>>`
    with candidates as (
      select id, url, next_attempt_at from deliveries
      where state = 'pending' and next_attempt_at <= ${now}
        and (claimed_until is null or claimed_until <= ${now})
        ${busy}
        and url not in (select url from deliveries where claim is not null and claimed_until > ${now})
      order by next_attempt_at, id
      limit ${CLAIM_SCAN}
      ${lock}
    ),
    ranked as (
      select id, url,
        row_number() over (partition by url order by next_attempt_at, id) as n,
        min(next_attempt_at) over (partition by url) as first_due
      from candidates
    ),
    chosen as (
      select id, dense_rank() over (order by first_due, url) as t from ranked where n <= ${perTarget}
    )
    update deliveries set claim = ${claim}, claimed_until = ${until}, updated_at = ${now}
    where id in (select id from chosen where t <= ${targets})
    returning *`.execute(db);
  return rows.map(toDelivery).sort(byDueTime);
}

/**
 * Claims, for a chain that is going on, the next due deliveries of its own URL (at most `limit`), under
 * the same claim; answers them in due order.
 */
export async function claimMoreOfUrl(
  db: Executor,
  dialect: 'sqlite' | 'postgres',
  request: { now: number; claim: string; until: number; url: string; limit: number },
): Promise<Delivery[]> {
  const { now, claim, until, url, limit } = request;
  const lock = dialect === 'postgres' ? sql`for update skip locked` : sql``;
  const { rows } = await sql<Selectable<DeliveriesTable>>`
    update deliveries set claim = ${claim}, claimed_until = ${until}, updated_at = ${now}
    where id in (
      select id from deliveries
      where url = ${url} and state = 'pending' and next_attempt_at <= ${now}
        and (claimed_until is null or claimed_until <= ${now})
      order by next_attempt_at, id
      limit ${limit}
      ${lock}
    )
    returning *`.execute(db);
  return rows.map(toDelivery).sort(byDueTime);
}

/** Gives back claimed deliveries not attempted (the rest of a chain whose receiver just failed). */
export async function releaseDeliveries(db: Executor, ids: readonly string[], claim: string): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('deliveries')
    .set({ claim: null, claimed_until: null })
    .where('id', 'in', ids)
    .where('claim', '=', claim)
    .execute();
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

/** An attempt to record: the delivery (as claimed) and how the attempt went. */
export interface AttemptRecord {
  delivery: Pick<Delivery, 'id' | 'attemptCount'>;
  outcome: AttemptOutcome;
}

/**
 * Records attempts of deliveries this claim holds, and moves each delivery on, in a few statements
 * whatever their number (one update per outcome, one insert). A delivery whose claim was lost meanwhile
 * (its holder ran out of time and another dispatcher took it) is left alone; answers the ids recorded.
 */
export async function recordDeliveryAttempts(
  trx: Transaction<Database>,
  claim: string,
  records: readonly AttemptRecord[],
): Promise<Set<string>> {
  const groups = new Map<string, AttemptRecord[]>();
  for (const record of records) {
    const { state, nextAttemptAt } = record.outcome;
    const key = `${state}:${nextAttemptAt}`;
    groups.set(key, [...(groups.get(key) ?? []), record]);
  }
  const recorded = new Set<string>();
  for (const group of groups.values()) {
    const { state, nextAttemptAt } = (group[0] as AttemptRecord).outcome;
    const at = Math.max(...group.map((r) => r.outcome.at));
    const moved = await trx
      .updateTable('deliveries')
      .set((eb) => ({
        state,
        attempt_count: eb('attempt_count', '+', 1),
        next_attempt_at: nextAttemptAt,
        claim: null,
        claimed_until: null,
        updated_at: at,
      }))
      .where(
        'id',
        'in',
        group.map((r) => r.delivery.id),
      )
      .where('claim', '=', claim)
      .returning('id')
      .execute();
    for (const row of moved) recorded.add(row.id);
  }
  const rows = records
    .filter((r) => recorded.has(r.delivery.id))
    .map((r) => ({
      delivery_id: r.delivery.id,
      // The claim held the delivery since it was read: nobody else attempted it meanwhile.
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
 * deleted), except those a dispatcher holds: their holder records them.
 */
export async function failPendingDeliveriesTo(db: Executor, webhookId: string, now: number): Promise<void> {
  await db
    .updateTable('deliveries')
    .set({ state: 'failed', next_attempt_at: null, updated_at: now })
    .where('webhook_id', '=', webhookId)
    .where('state', '=', 'pending')
    .where((eb) => eb.or([eb('claim', 'is', null), eb('claimed_until', '<=', now)]))
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
  const attempts = await db
    .selectFrom('delivery_attempts')
    .selectAll()
    .where(
      'delivery_id',
      'in',
      deliveries.map((d) => d.id),
    )
    .orderBy('number')
    .execute();
  return deliveries.map((d) => ({
    ...toDelivery(d),
    attempts: attempts.filter((a) => a.delivery_id === d.id).map(toDeliveryAttempt),
  }));
}
