// Webhook delivery (docs/decisions.md#webhook-delivery). An event committed to the outbox is fanned out
// into one delivery per target: the session's webhook_url (signed with the merchant's session webhook
// secret) and every enabled endpoint subscribed to its type (signed with its own). Each URL's deliveries
// form a queue in commit order. A dispatcher takes the lease of a URL whose queue head is due, sends the
// queue's deliveries one after another and records every attempt; a failure is retried on the configured
// schedule and holds the deliveries behind it, a 410 disables the endpoint. A lease runs out at most twice
// the send timeout after it was last renewed, so a dispatcher that dies holds up its own URLs alone, and
// briefly: nothing is lost, and a delivery may arrive twice (at least once).
import { randomUUID } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { Deps } from '../deps.ts';
import { secretsInForce } from '../domain/rotation.ts';
import { createSender, type Sender } from '../events/send.ts';
import { ids } from '../ids.ts';
import {
  type AttemptOutcome,
  type AttemptRecord,
  type Delivery,
  failPendingDeliveriesTo,
  findEventPayloads,
  findHeldDueUrlExpiry,
  findSessionWebhookUrl,
  insertDeliveries,
  markEventsDispatched,
  type QueuedDelivery,
  queueHeads,
  recordDeliveryAttempts,
  releaseUrl,
  renewUrlLease,
  takeDueUrls,
  takeUndispatchedEvents,
} from '../store/deliveries.ts';
import { findMerchantById } from '../store/merchants.ts';
import type { Database } from '../store/schema.ts';
import { disableWebhookEndpoint, findWebhookEndpointsById, listWebhookEndpoints } from '../store/webhooks.ts';
import { queueEventMails } from './mails.ts';
import { deliveryUrl } from './urls.ts';

/** The HTTP sender deliveries go through; in production it calls public addresses only. */
export const openSender = (deps: Deps): Sender =>
  createSender({
    timeoutMs: deps.config.webhookTimeoutMs,
    publicOnly: deps.config.serviceEnv === 'production',
  });

/** Events fanned out per transaction. */
const FAN_OUT_BATCH = 100;

interface Target {
  webhookId: string | null;
  url: string;
}

/** The event's targets as they are now: the session's webhook_url, and enabled endpoints of its type. */
export async function currentTargets(
  deps: Deps,
  trx: Transaction<Database>,
  event: { merchantId: string; type: string; sessionId: string | null },
): Promise<Target[]> {
  const webhookUrl = event.sessionId ? await findSessionWebhookUrl(trx, event.sessionId) : null;
  return targetsOf(
    { type: event.type, webhookUrl },
    await listWebhookEndpoints(trx, deps.db.secrets, event.merchantId),
  );
}

function targetsOf(
  event: { type: string; webhookUrl: string | null },
  endpoints: { id: string; url: string; events: string[]; disabledAt: number | null }[],
): Target[] {
  const targets: Target[] = event.webhookUrl ? [{ webhookId: null, url: event.webhookUrl }] : [];
  for (const endpoint of endpoints) {
    if (endpoint.disabledAt !== null) continue;
    if (endpoint.events.includes('*') || endpoint.events.includes(event.type)) {
      targets.push({ webhookId: endpoint.id, url: endpoint.url });
    }
  }
  return targets;
}

export function newDelivery(
  event: { id: string; merchantId: string },
  target: Target,
  now: number,
): Delivery {
  return {
    id: ids.delivery(),
    eventId: event.id,
    merchantId: event.merchantId,
    webhookId: target.webhookId,
    url: deliveryUrl(target.url),
    state: 'pending',
    attemptCount: 0,
    nextAttemptAt: now,
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * Fans out the oldest events not fanned out yet, in commit order, one batch in one transaction (on
 * PostgreSQL under a lock that lets one dispatcher fan out at a time, so that deliveries are queued in the
 * order of their events); answers whether a full batch was found, in which case more may be waiting. One
 * batch at a time lets deliveries start while a backlog is fanned out.
 */
export async function fanOutEvents(deps: Deps): Promise<boolean> {
  const fanned = await deps.db.kysely.transaction().execute(async (trx) => {
    const now = deps.clock.now();
    const events = await takeUndispatchedEvents(trx, deps.db.dialect, FAN_OUT_BATCH);
    const endpointsOf = new Map<string, Awaited<ReturnType<typeof listWebhookEndpoints>>>();
    const deliveries: Delivery[] = [];
    for (const event of events) {
      let endpoints = endpointsOf.get(event.merchantId);
      if (!endpoints) {
        endpoints = await listWebhookEndpoints(trx, deps.db.secrets, event.merchantId);
        endpointsOf.set(event.merchantId, endpoints);
      }
      for (const target of targetsOf(event, endpoints)) deliveries.push(newDelivery(event, target, now));
    }
    await insertDeliveries(trx, deliveries, now);
    // Mail that follows from these events is queued with their fan-out, once (flows/mails.ts).
    await queueEventMails(trx, events, now);
    await markEventsDispatched(
      trx,
      events.map((e) => e.id),
      now,
    );
    return events.length;
  });
  return fanned === FAN_OUT_BATCH;
}

/** A URL this dispatcher holds the lease of, and the head of its queue, to send in order. */
export interface Chain {
  url: string;
  /** The lease's holder id. */
  holder: string;
  /** Until when the lease is ours, as last taken or renewed. */
  heldUntil: number;
  deliveries: QueuedDelivery[];
  /** How many deliveries the chain reads from its queue at a time. */
  length: number;
}

export interface ClaimOptions {
  /** At most this many URLs (chains)… */
  targets: number;
  /** …with at most this many deliveries read at a time. */
  perTarget: number;
  /** URLs this process is delivering to now. */
  busy: readonly string[];
}

/**
 * How long a lease lasts from its last renewal: 1.75 send timeouts. A holder renews it before an attempt
 * when less than RENEW_BELOW timeouts are left, so every attempt starts with at least one and a half
 * timeouts of lease ahead and ends (the timeout bounds it) with half a timeout to spare before anyone else
 * may take the URL. A holder that dies holds its URLs at most 1.75 timeouts; the quarter left of twice
 * the timeout is for another dispatcher to wake (at the lease's end) and take over.
 */
const leaseMs = (deps: Deps) => Math.floor(1.75 * deps.config.webhookTimeoutMs);
const RENEW_BELOW = 1.5;

/**
 * Takes the lease of URLs whose queue head is due and reads each one's head as a chain. A URL taken with
 * nothing due after all (its head was delivered or failed meanwhile) is given back at once.
 */
export async function claimChains(deps: Deps, options: ClaimOptions): Promise<Chain[]> {
  const now = deps.clock.now();
  // The process id first: an operator (or a test) can tell which process holds a URL.
  const holder = `${process.pid}.${randomUUID()}`;
  const heldUntil = now + leaseMs(deps);
  const urls = await takeDueUrls(deps.db.kysely, deps.db.dialect, {
    now,
    holder,
    until: heldUntil,
    limit: options.targets,
    busy: options.busy,
  });
  const heads = await queueHeads(deps.db.kysely, urls, now, options.perTarget);
  const chains: Chain[] = [];
  for (const url of urls) {
    const deliveries = heads.get(url) ?? [];
    if (deliveries.length === 0) await releaseUrl(deps.db.kysely, deps.db.dialect, url, holder);
    else chains.push({ url, holder, heldUntil, deliveries, length: options.perTarget });
  }
  return chains;
}

/**
 * When the first lease held by another dispatcher on a URL with due deliveries runs out, if any (`busy`:
 * the URLs this process delivers to): wake then to take the URL over from a process that may have died.
 */
export const heldElsewhereUntil = (deps: Deps, busy: readonly string[]) =>
  findHeldDueUrlExpiry(deps.db.kysely, deps.clock.now(), busy);

/**
 * Sends a chain's deliveries in order and records each attempt; while the receiver keeps answering 2xx,
 * the chain goes on with its queue's next deliveries, under the same lease (renewed as it goes). When the
 * receiver fails one, the chain ends there: the deliveries behind it wait for its retry, as a queue does.
 * Attempts are recorded in groups while the chain goes on (a crash before a group is written sends those
 * deliveries again: at least once). The URL is given back at the end, its queue's next due time written.
 * Answers the soonest retry it scheduled, if any.
 */
export async function deliverChain(
  deps: Deps,
  chain: Chain,
  sender: Sender,
  stopping: () => boolean = () => false,
): Promise<number | undefined> {
  const log = new AttemptLog(deps, chain.holder);
  const lease = new Lease(deps, chain);
  let retryAt: number | undefined;
  let batch = chain.deliveries;
  try {
    while (batch.length > 0) {
      const sent = await sendInOrder(deps, batch, sender, log, stopping, lease);
      if (sent.retryAt !== undefined) retryAt = Math.min(retryAt ?? sent.retryAt, sent.retryAt);
      // Reading on past a delivery that was not delivered would send what is behind it first.
      if (!sent.allDelivered || stopping() || lease.lost) break;
      // Every delivery sent so far was delivered; some may not be recorded yet: read on after them.
      const last = (batch.at(-1) as QueuedDelivery).seq;
      const now = deps.clock.now();
      batch = (await queueHeads(deps.db.kysely, [chain.url], now, chain.length, last)).get(chain.url) ?? [];
    }
  } finally {
    await log.flushed();
    if (!lease.lost) await releaseUrl(deps.db.kysely, deps.db.dialect, chain.url, chain.holder);
  }
  return retryAt;
}

/** A chain's lease on its URL: renewed before an attempt when less than RENEW_BELOW timeouts are left. */
class Lease {
  lost = false;
  private heldUntil: number;

  constructor(
    private readonly deps: Deps,
    private readonly chain: Chain,
  ) {
    this.heldUntil = chain.heldUntil;
  }

  /** True when an attempt may start now: the lease is ours for long enough. */
  async ready(): Promise<boolean> {
    if (this.lost) return false;
    const now = this.deps.clock.now();
    if (this.heldUntil - now >= RENEW_BELOW * this.deps.config.webhookTimeoutMs) return true;
    const until = now + leaseMs(this.deps);
    if (await renewUrlLease(this.deps.db.kysely, { url: this.chain.url, holder: this.chain.holder, until })) {
      this.heldUntil = until;
      return true;
    }
    this.lost = true;
    this.deps.logger.warn({ url: this.chain.url }, 'webhook URL lease ran out and was taken over');
    return false;
  }
}

/**
 * Sends deliveries in order until one is not delivered (or the dispatcher stops); answers whether every
 * one of the batch was delivered, and the soonest retry it scheduled.
 */
async function sendInOrder(
  deps: Deps,
  batch: readonly Delivery[],
  sender: Sender,
  log: AttemptLog,
  stopping: () => boolean,
  lease: Lease,
): Promise<{ allDelivered: boolean; retryAt: number | undefined }> {
  // Side by side: on PostgreSQL two connections, two round trips at once.
  const [payloads, endpoints] = await Promise.all([
    findEventPayloads(
      deps.db.kysely,
      batch.map((d) => d.eventId),
    ),
    findWebhookEndpointsById(deps.db.kysely, deps.db.secrets, [
      ...new Set(batch.flatMap((d) => (d.webhookId ? [d.webhookId] : []))),
    ]),
  ]);
  let retryAt: number | undefined;
  let delivered = 0;
  for (const delivery of batch) {
    if (stopping() || !(await lease.ready())) break;
    const secrets = await signingSecrets(deps, delivery, endpoints);
    let outcome: AttemptOutcome;
    if (typeof secrets === 'string') {
      // The endpoint was deleted or disabled after the event was fanned out: it is not sent.
      outcome = {
        at: deps.clock.now(),
        statusCode: null,
        latencyMs: 0,
        error: secrets,
        state: 'failed',
        nextAttemptAt: null,
      };
    } else {
      const now = deps.clock.now();
      const result = await sender.send({
        url: delivery.url,
        eventId: delivery.eventId,
        body: payloads.get(delivery.eventId) ?? '',
        secrets,
        timestamp: Math.floor(now / 1000),
      });
      deps.faults.reach('delivery-sent');
      outcome = { at: now, ...result, ...nextStep(deps, delivery, result.statusCode) };
    }
    log.add({ delivery, outcome });
    if (outcome.nextAttemptAt !== null) retryAt = outcome.nextAttemptAt;
    if (outcome.statusCode === 410 && delivery.webhookId) {
      await log.flushed();
      await disableEndpoint(deps, delivery.webhookId, outcome.at);
    }
    if (outcome.state !== 'delivered') break;
    delivered++;
  }
  return { allDelivered: delivered === batch.length, retryAt };
}

/**
 * Attempts waiting to be recorded: written ten at a time (one transaction, a few statements), or after
 * at most 100 ms, so that a slow receiver's deliveries still show as delivered promptly; one write at a
 * time, while the chain goes on sending.
 */
class AttemptLog {
  private waiting: AttemptRecord[] = [];
  private writing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly deps: Deps,
    private readonly holder: string,
  ) {}

  add(record: AttemptRecord): void {
    this.waiting.push(record);
    if (this.waiting.length >= ATTEMPTS_PER_WRITE) this.start();
    else this.timer ??= setTimeout(() => this.start(), ATTEMPT_WRITE_DELAY_MS);
  }

  /** Resolves once everything added so far is recorded. */
  async flushed(): Promise<void> {
    if (this.waiting.length > 0) this.start();
    while (this.writing) await this.writing;
  }

  private start(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    // A write that fails (the database gone for a moment) loses those records, not the process: their
    // deliveries stay pending and are sent again (at least once).
    this.writing ??= this.write()
      .catch((error: unknown) =>
        this.deps.logger.error({ err: error }, 'webhook delivery attempts could not be recorded'),
      )
      .finally(() => {
        this.writing = undefined;
      });
  }

  private async write(): Promise<void> {
    while (this.waiting.length > 0) {
      const batch = this.waiting;
      this.waiting = [];
      const recorded = await this.deps.db.kysely
        .transaction()
        .execute((trx) => recordDeliveryAttempts(trx, this.deps.db.dialect, this.holder, batch));
      for (const { delivery } of batch) {
        if (!recorded.has(delivery.id)) {
          this.deps.logger.warn(
            { delivery_id: delivery.id },
            'webhook URL lease was taken over before this attempt was recorded',
          );
        }
      }
    }
  }
}

const ATTEMPTS_PER_WRITE = 10;
const ATTEMPT_WRITE_DELAY_MS = 100;

/** A 410: the endpoint gets nothing more, and what it still had waiting fails now. */
async function disableEndpoint(deps: Deps, webhookId: string, at: number): Promise<void> {
  await disableWebhookEndpoint(deps.db.kysely, webhookId, at);
  await failPendingDeliveriesTo(deps.db.kysely, webhookId, deps.clock.now());
  deps.logger.warn({ webhook_id: webhookId }, 'webhook endpoint answered 410: disabled');
}

/** The secrets a delivery is signed with now, or why it cannot be sent. */
async function signingSecrets(
  deps: Deps,
  delivery: Delivery,
  endpoints: Awaited<ReturnType<typeof findWebhookEndpointsById>>,
): Promise<string[] | string> {
  const now = deps.clock.now();
  if (delivery.webhookId) {
    const endpoint = endpoints.get(delivery.webhookId);
    if (!endpoint || endpoint.revoked) return 'the endpoint was deleted';
    if (endpoint.disabledAt !== null) return 'the endpoint is disabled';
    return secretsInForce(endpoint.secret, endpoint.previous, now);
  }
  const merchant = await findMerchantById(deps.db.kysely, deps.db.secrets, delivery.merchantId);
  if (!merchant) return 'the merchant no longer exists';
  return secretsInForce(merchant.sessionWebhookSecret, merchant.previousSessionWebhookSecret, now);
}

/** Where a delivery goes after an attempt answered `status` (null: no answer). */
function nextStep(
  deps: Deps,
  delivery: Delivery,
  status: number | null,
): Pick<AttemptOutcome, 'state' | 'nextAttemptAt'> {
  if (status !== null && status >= 200 && status < 300) return { state: 'delivered', nextAttemptAt: null };
  // 410 Gone: the receiver says it will never want this; no retry.
  if (status === 410) return { state: 'failed', nextAttemptAt: null };
  const wait = deps.config.webhookRetrySchedule[delivery.attemptCount];
  if (wait === undefined) return { state: 'failed', nextAttemptAt: null };
  return { state: 'pending', nextAttemptAt: deps.clock.now() + withJitter(wait) };
}

/** The wait stretched by up to 10%, so that retries of many deliveries that failed together spread out. */
const withJitter = (waitMs: number) => waitMs + Math.floor(Math.random() * waitMs * 0.1);
