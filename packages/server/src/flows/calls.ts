// The processor as the flows call it: the operation an attempt stands for, and a call whose throw is an
// outcome we cannot know (docs/decisions.md#claim-call-record). Paying and settling both call through here.
import type { Deps } from '../deps.ts';
import { type Operation, type Outcome, perform } from '../processor/types.ts';
import type { Attempt } from '../store/attempts.ts';

/** The operation an attempt stands for, as the processor is sent it (again, for recovery). */
export function operationOf(attempt: Attempt): Operation {
  switch (attempt.kind) {
    case 'charge':
    case 'authorize':
      return {
        key: attempt.key,
        sessionId: attempt.sessionId,
        kind: attempt.kind,
        amountCents: attempt.amountCents,
        currency: attempt.currency,
        memberId: attempt.memberId as string,
        // The card itself is never kept: the sandbox answers by key alone; Stripe needs the PaymentMethod.
        source: { paymentMethod: attempt.paymentMethod ?? '' },
      };
    case 'capture':
    case 'release':
    case 'refund':
      return {
        key: attempt.key,
        sessionId: attempt.sessionId,
        kind: attempt.kind,
        paymentId: attempt.targetId as string,
        amountCents: attempt.amountCents,
        currency: attempt.currency,
        memberId: attempt.memberId as string,
      };
    case 'transfer':
      return {
        key: attempt.key,
        sessionId: attempt.sessionId,
        kind: 'transfer',
        amountCents: attempt.amountCents,
        currency: attempt.currency,
        destination: attempt.destination,
      };
  }
}

/** Calls the processor; a throw is an outcome we cannot know. */
export async function call(deps: Deps, operation: Operation): Promise<Outcome> {
  try {
    return await perform(deps.processor, operation);
  } catch (error) {
    deps.logger.warn({ err: error, kind: operation.kind, key: operation.key }, 'processor call failed');
    return { status: 'unknown', message: error instanceof Error ? error.message : String(error) };
  }
}
