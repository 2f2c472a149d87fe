// The processor's own events (docs/decisions.md#stripes-webhooks): Stripe's webhooks, and the sandbox's
// equivalents. Each is kept once by its id, then acted on through the one record path: a payment settled
// as the recovery would (read from the processor, recorded by flows/record.ts), a refund that failed
// after it was taken, a dispute opened or closed. Handling is safe to repeat: every record is conditional.
import type { Deps } from '../deps.ts';
import { ServiceError } from '../errors.ts';
import { type ProcessorEvent, WebhookRefused } from '../processor/types.ts';
import {
  type Attempt,
  findAttemptByKey,
  listAttemptsByProcessorId,
  listStartedFollowUps,
} from '../store/attempts.ts';
import {
  claimDueProcessorEvents,
  claimProcessorEvent,
  insertProcessorEvent,
  markProcessorEventFailed,
  markProcessorEventHandled,
} from '../store/processor-events.ts';
import {
  recordDisputeClosed,
  recordDisputeOpened,
  recordRefundConfirmed,
  recordRefundFailure,
} from './record.ts';
import { settleFromProcessor, settleIfDue } from './settle.ts';

/** How long a process holds an event it is handling before another may take it over. */
const HOLD_MS = 60_000;
/** Waits before an event whose handling failed is tried again; the last repeats. */
const RETRY_DELAYS_MS = [5_000, 30_000, 120_000, 600_000];

/**
 * Takes one event as it arrives: kept (or found kept before: `duplicate`, nothing happens), then handled at
 * once. Answers `deferred` when handling failed: the event is kept, and the worker tries it again.
 */
export async function takeProcessorEvent(
  deps: Deps,
  event: ProcessorEvent,
): Promise<'handled' | 'duplicate' | 'deferred'> {
  const now = deps.clock.now();
  deps.faults.reach('processor-event-received');
  if (!(await insertProcessorEvent(deps.db.kysely, event, now))) return 'duplicate';
  deps.faults.reach('processor-event-kept');
  // Another process may have claimed it between the insert and now (the worker): it handles it then.
  if (!(await claimProcessorEvent(deps.db.kysely, event.id, now, HOLD_MS))) return 'deferred';
  return (await handleClaimed(deps, event, 0)) ? 'handled' : 'deferred';
}

/**
 * A webhook from the processor (Stripe's), as it arrived: verified on its raw bytes, then taken once.
 * Answers `ignored` for a type we do not act on. A missing, wrong or stale signature is
 * invalid_webhook_signature and changes nothing; without a processor that sends webhooks, route_not_found.
 */
export async function takeWebhook(
  deps: Deps,
  body: Buffer,
  signature: string | undefined,
): Promise<'handled' | 'duplicate' | 'deferred' | 'ignored'> {
  const webhooks = deps.processor.webhooks;
  if (!webhooks) throw new ServiceError('route_not_found');
  let event: ProcessorEvent | null;
  try {
    event = webhooks.parse(body, signature);
  } catch (error) {
    if (!(error instanceof WebhookRefused)) throw error;
    throw new ServiceError('invalid_webhook_signature', {
      message: `Stripe's webhook was refused: ${error.message}.`,
    });
  }
  return event ? takeProcessorEvent(deps, event) : 'ignored';
}

/** The worker's round: every kept event now due that no process holds, handled in turn; answers how many. */
export async function handleDueProcessorEvents(deps: Deps, limit = 50): Promise<number> {
  const due = await claimDueProcessorEvents<ProcessorEvent>(deps.db.kysely, deps.clock.now(), HOLD_MS, limit);
  for (const { event, tries } of due) await handleClaimed(deps, event, tries);
  return due.length;
}

async function handleClaimed(deps: Deps, event: ProcessorEvent, tries: number): Promise<boolean> {
  try {
    await deps.processor.applyScheduled?.(event);
    await handle(deps, event);
    await markProcessorEventHandled(deps.db.kysely, event.id, deps.clock.now());
    return true;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const wait = RETRY_DELAYS_MS[Math.min(tries, RETRY_DELAYS_MS.length - 1)] as number;
    deps.logger.warn(
      { err: error, event_id: event.id, type: event.type },
      'processor event not handled; trying again later',
    );
    await markProcessorEventFailed(deps.db.kysely, event.id, message, deps.clock.now() + wait);
    return false;
  }
}

async function handle(deps: Deps, event: ProcessorEvent): Promise<void> {
  const db = deps.db.kysely;
  switch (event.type) {
    case 'payment.updated': {
      // The payment itself (found by its id, or by our key before we learnt its id), and captures or
      // releases of it still open: each read again from the processor and recorded.
      const found = new Map<string, Attempt>();
      for (const a of await listAttemptsByProcessorId(db, event.paymentId)) found.set(a.id, a);
      const byKey = event.key ? await findAttemptByKey(db, event.key) : undefined;
      if (byKey) found.set(byKey.id, { ...byKey, processorId: byKey.processorId ?? event.paymentId });
      for (const a of await listStartedFollowUps(db, event.paymentId)) found.set(a.id, a);
      for (const a of found.values()) {
        if (a.state !== 'started') continue;
        const recorded = await settleFromProcessor(deps, a);
        if (!recorded) throw new Error(`could not read ${event.paymentId} at the processor`);
        await settleIfDue(deps, recorded.session, recorded.state);
      }
      return;
    }
    case 'refund.failed': {
      const refund = (await listAttemptsByProcessorId(db, event.refundId)).find((a) => a.kind === 'refund');
      if (!refund) {
        deps.logger.info({ refund: event.refundId }, 'a refund we have no record of failed; nothing to do');
        return;
      }
      if (await recordRefundFailure(deps, refund, event.reason))
        deps.logger.error(
          {
            refund: event.refundId,
            session_id: refund.sessionId,
            member_id: refund.memberId,
            reason: event.reason,
          },
          'a refund failed after the processor took it: an operator must return the money (docs/operations.md#a-refund-failed)',
        );
      return;
    }
    case 'refund.succeeded': {
      const refund = (await listAttemptsByProcessorId(db, event.refundId)).find((a) => a.kind === 'refund');
      if (refund) await recordRefundConfirmed(deps, refund);
      return;
    }
    case 'dispute.opened': {
      const payment = (await listAttemptsByProcessorId(db, event.dispute.paymentId)).find(
        (a) => (a.kind === 'charge' || a.kind === 'authorize') && a.state === 'succeeded',
      );
      if (!payment) {
        deps.logger.info(
          { dispute: event.dispute.id },
          'a dispute on a payment we have no record of; nothing to do',
        );
        return;
      }
      if (await recordDisputeOpened(deps, payment, event.dispute))
        deps.logger.warn(
          { dispute: event.dispute.id, session_id: payment.sessionId, member_id: payment.memberId },
          'a payer disputed their payment (docs/operations.md#a-dispute-opened)',
        );
      return;
    }
    case 'dispute.closed': {
      const { dispute } = event;
      if (dispute.status === 'needs_response') return;
      // Told of the close before the opening (webhooks come in any order): record the opening first.
      const payment = (await listAttemptsByProcessorId(db, dispute.paymentId)).find(
        (a) => (a.kind === 'charge' || a.kind === 'authorize') && a.state === 'succeeded',
      );
      if (!payment) return;
      if (!(await recordDisputeClosed(deps, dispute.id, dispute.status)))
        await recordDisputeOpened(deps, payment, dispute);
      return;
    }
  }
}
