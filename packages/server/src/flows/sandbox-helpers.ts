// The sandbox's test helpers that play the payer's bank and the card network (docs/api.md#test-cards):
// completing a 3-D Secure step, closing a dispute. Each goes through the same paths as the real thing —
// the page's refresh or the processor's events — so the sandbox rehearses production.
import type { Deps } from '../deps.ts';
import { ServiceError } from '../errors.ts';
import type { SandboxTestHelpers } from '../processor/types.ts';
import { type Dispute, findDispute } from '../store/disputes.ts';
import { takeProcessorEvent } from './processor-events.ts';

/** The sandbox's helpers; in production, or with Stripe, there are none and the routes answer 404. */
function helpersOf(deps: Deps, notFound: ServiceError): SandboxTestHelpers {
  const helpers = deps.config.serviceEnv === 'sandbox' ? deps.processor.testHelpers : undefined;
  if (!helpers) throw notFound;
  return helpers;
}

/**
 * Completes (`succeed`) or fails the authentication step of a payment waiting on it, as the payer's bank
 * would. The payment is recorded when the payer's page calls refresh, or by the processor-events worker.
 */
export async function authenticateInSandbox(
  deps: Deps,
  clientSecret: string,
  outcome: 'succeed' | 'fail',
): Promise<void> {
  const helpers = helpersOf(deps, new ServiceError('route_not_found'));
  if (!(await helpers.authenticate(clientSecret, outcome)))
    throw new ServiceError('authentication_not_found');
}

/** Closes one of the merchant's disputes as the card network would decide it, and records the close. */
export async function closeSandboxDispute(
  deps: Deps,
  merchantId: string,
  disputeId: string,
  status: 'won' | 'lost',
): Promise<Dispute> {
  const helpers = helpersOf(deps, new ServiceError('route_not_found'));
  const dispute = await findDispute(deps.db.kysely, disputeId);
  if (!dispute || dispute.merchantId !== merchantId) throw new ServiceError('dispute_not_found');
  if (dispute.status !== 'needs_response') throw new ServiceError('dispute_not_open');
  const event = await helpers.closeDispute(disputeId, status);
  if (!event) throw new ServiceError('dispute_not_open');
  await takeProcessorEvent(deps, event);
  return (await findDispute(deps.db.kysely, disputeId)) as Dispute;
}
