// The workers that run inside every server process. Each claims its rows so that any number of
// processes may run them side by side (docs/architecture.md).
import type { Deps } from '../deps.ts';
import { purgeExpiredIdempotencyKeys, purgeOldApiRequests } from '../flows/housekeeping.ts';
import { sendDueMails } from '../flows/mails.ts';
import { handleDueProcessorEvents } from '../flows/processor-events.ts';
import { startDispatcher } from './dispatcher.ts';
import { expireDueSessions } from './expiry.ts';
import { type Loop, startLoop } from './loop.ts';
import { settleDueSessions } from './settle.ts';

/** How often the housekeeping loop runs (idempotent answers, the API request log). */
const HOUSEKEEPING_MS = 10 * 60 * 1000;

export async function startWorkers(deps: Deps): Promise<Loop> {
  const loops = [
    await startDispatcher(deps),
    startLoop('expiry-sweeper', deps.config.sweepIntervalMs, deps.logger, (signal) =>
      expireDueSessions(deps, signal),
    ),
    startLoop('settler', deps.config.settleIntervalMs, deps.logger, (signal) =>
      settleDueSessions(deps, signal),
    ),
    // The processor's events that are due and not handled yet (docs/decisions.md#stripes-webhooks).
    startLoop('processor-events', deps.config.settleIntervalMs, deps.logger, () =>
      handleDueProcessorEvents(deps),
    ),
    // Receipts, refunds and the organizer's mails queued by the fan-out and by declines (flows/mails.ts).
    startLoop('mail-sender', deps.config.settleIntervalMs, deps.logger, (signal) =>
      sendDueMails(deps, signal),
    ),
    startLoop('housekeeping', HOUSEKEEPING_MS, deps.logger, async () => {
      await purgeExpiredIdempotencyKeys(deps);
      await purgeOldApiRequests(deps);
    }),
  ];
  return {
    async stop() {
      await Promise.all(loops.map((loop) => loop.stop()));
    },
  };
}
