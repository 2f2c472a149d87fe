// Webhook delivery (docs/decisions.md#webhook-delivery). An event committed to the outbox is fanned out
// into one delivery per target: the session's webhook_url (signed with the merchant's session webhook
// secret) and every enabled endpoint subscribed to its type (signed with its own). A dispatcher claims
// due deliveries, a few per target, sends each, and records every attempt; a failure is retried on the
// configured schedule, a 410 disables the endpoint. A claim runs out, so a dispatcher that dies mid-batch
// leaves its deliveries to the next one: nothing is lost, and a delivery may arrive twice (at least once).
import { randomUUID } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { Deps } from '../deps.ts';
import { secretsInForce } from '../domain/rotation.ts';
import { createSender, type Sender } from '../events/send.ts';
import { ids } from '../ids.ts';
import {
  type AttemptOutcome,
  claimDueDeliveries,
  type Delivery,
  failPendingDeliveriesTo,
  findEventPayloads,
  findSessionWebhookUrl,
  insertDeliveries,
  lockUndispatchedEvents,
  markEventsDispatched,
  recordDeliveryAttempt,
  releaseDeliveries,
} from '../store/deliveries.ts';
import { findMerchantById } from '../store/merchants.ts';
import type { Database } from '../store/schema.ts';
import { disableWebhookEndpoint, findWebhookEndpointsById, listWebhookEndpoints } from '../store/webhooks.ts';

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
    event_id: event.id,
    merchant_id: event.merchantId,
    webhook_id: target.webhookId,
    url: target.url,
    state: 'pending',
    attempt_count: 0,
    next_attempt_at: now,
    claim: null,
    claimed_until: null,
    created_at: now,
    updated_at: now,
  };
}

/**
 * Fans out events not fanned out yet, a batch per transaction (on PostgreSQL each batch's events are
 * locked, so several dispatchers share the work); answers how many deliveries were made.
 */
export async function fanOutEvents(deps: Deps): Promise<number> {
  let made = 0;
  for (;;) {
    const { events, deliveries } = await deps.db.kysely.transaction().execute(async (trx) => {
      const now = deps.clock.now();
      const events = await lockUndispatchedEvents(trx, deps.db.dialect, FAN_OUT_BATCH);
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
      await insertDeliveries(trx, deliveries);
      await markEventsDispatched(
        trx,
        events.map((e) => e.id),
        now,
      );
      return { events, deliveries };
    });
    made += deliveries.length;
    if (events.length < FAN_OUT_BATCH) return made;
  }
}

/** Due deliveries to one URL, claimed together and sent one after another, oldest first. */
export interface Chain {
  url: string;
  claim: string;
  deliveries: Delivery[];
}

export interface ClaimOptions {
  /** At most this many chains (targets)… */
  targets: number;
  /** …of at most this many deliveries each. */
  perTarget: number;
  /** URLs this process is delivering to now. */
  busy: readonly string[];
}

/**
 * Claims due deliveries as chains, one per URL. The claim lasts long enough to send a whole chain with
 * every attempt taking the full timeout; past that another dispatcher may take them.
 */
export async function claimChains(deps: Deps, options: ClaimOptions): Promise<Chain[]> {
  const now = deps.clock.now();
  const claim = randomUUID();
  const rows = await claimDueDeliveries(deps.db.kysely, deps.db.dialect, {
    now,
    claim,
    until: now + claimLifetimeMs(deps, options.perTarget),
    targets: options.targets,
    perTarget: options.perTarget,
    busy: options.busy,
  });
  const chains = new Map<string, Chain>();
  for (const row of rows) {
    let chain = chains.get(row.url);
    if (!chain) {
      chain = { url: row.url, claim, deliveries: [] };
      chains.set(row.url, chain);
    }
    chain.deliveries.push(row);
  }
  return [...chains.values()];
}

/**
 * A chain goes on only while its receiver answers 2xx, each attempt within the timeout: its length plus
 * one timeouts, and a second for the writes, bound it. Past that a dispatcher is presumed dead.
 */
const claimLifetimeMs = (deps: Deps, perTarget: number) =>
  (perTarget + 1) * deps.config.webhookTimeoutMs + 1000;

/**
 * Sends a chain's deliveries in order and records each attempt. When the receiver fails one, the rest
 * are given back unattempted: they are retried in their turn without piling onto a receiver that is down.
 * Answers the soonest retry it scheduled, if any.
 */
export async function deliverChain(
  deps: Deps,
  chain: Chain,
  sender: Sender,
  stopping: () => boolean = () => false,
): Promise<number | undefined> {
  const payloads = await findEventPayloads(
    deps.db.kysely,
    chain.deliveries.map((d) => d.event_id),
  );
  const endpoints = await findWebhookEndpointsById(deps.db.kysely, deps.db.secrets, [
    ...new Set(chain.deliveries.flatMap((d) => (d.webhook_id ? [d.webhook_id] : []))),
  ]);
  let retryAt: number | undefined;
  for (const [index, delivery] of chain.deliveries.entries()) {
    if (stopping()) {
      // Shutting down: the rest go back now rather than wait for the claim to run out.
      await releaseDeliveries(
        deps.db.kysely,
        chain.deliveries.slice(index).map((d) => d.id),
        chain.claim,
      );
      break;
    }
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
        eventId: delivery.event_id,
        body: payloads.get(delivery.event_id) ?? '',
        secrets,
        timestamp: Math.floor(now / 1000),
      });
      deps.faults.reach('delivery-sent');
      outcome = { at: now, ...result, ...nextStep(deps, delivery, result.statusCode) };
    }
    const recorded = await deps.db.kysely.transaction().execute(async (trx) => {
      if (!(await recordDeliveryAttempt(trx, delivery.id, chain.claim, outcome))) return false;
      if (outcome.statusCode === 410 && delivery.webhook_id) {
        await disableWebhookEndpoint(trx, delivery.webhook_id, outcome.at);
      }
      return true;
    });
    if (!recorded) {
      deps.logger.warn(
        { delivery_id: delivery.id },
        'webhook delivery claim ran out before its attempt was recorded',
      );
    }
    if (outcome.statusCode === 410 && delivery.webhook_id) {
      await failPendingDeliveriesTo(deps.db.kysely, delivery.webhook_id, deps.clock.now());
      deps.logger.warn({ webhook_id: delivery.webhook_id }, 'webhook endpoint answered 410: disabled');
    }
    if (outcome.nextAttemptAt !== null)
      retryAt = Math.min(retryAt ?? outcome.nextAttemptAt, outcome.nextAttemptAt);
    if (outcome.state !== 'delivered') {
      await releaseDeliveries(
        deps.db.kysely,
        chain.deliveries.slice(index + 1).map((d) => d.id),
        chain.claim,
      );
      break;
    }
  }
  return retryAt;
}

/** The secrets a delivery is signed with now, or why it cannot be sent. */
async function signingSecrets(
  deps: Deps,
  delivery: Delivery,
  endpoints: Awaited<ReturnType<typeof findWebhookEndpointsById>>,
): Promise<string[] | string> {
  const now = deps.clock.now();
  if (delivery.webhook_id) {
    const endpoint = endpoints.get(delivery.webhook_id);
    if (!endpoint || endpoint.revoked) return 'the endpoint was deleted';
    if (endpoint.disabledAt !== null) return 'the endpoint is disabled';
    return secretsInForce(endpoint.secret, endpoint.previous, now);
  }
  const merchant = await findMerchantById(deps.db.kysely, deps.db.secrets, delivery.merchant_id);
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
  const wait = deps.config.webhookRetrySchedule[delivery.attempt_count];
  if (wait === undefined) return { state: 'failed', nextAttemptAt: null };
  return { state: 'pending', nextAttemptAt: deps.clock.now() + withJitter(wait) };
}

/** The wait stretched by up to 10%, so that retries of many deliveries that failed together spread out. */
const withJitter = (waitMs: number) => waitMs + Math.floor(Math.random() * waitMs * 0.1);
