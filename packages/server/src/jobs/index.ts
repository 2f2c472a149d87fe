// The workers that run inside every server process. Each claims its rows so that any number of
// processes may run them side by side (docs/architecture.md).
import type { Deps } from '../deps.ts';
import { purgeExpiredIdempotencyKeys } from '../flows/housekeeping.ts';
import { handleDueProcessorEvents } from '../flows/processor-events.ts';
import { startDispatcher } from './dispatcher.ts';
import { expireDueSessions } from './expiry.ts';
import { type Loop, startLoop } from './loop.ts';
import { settleDueSessions } from './settle.ts';

const IDEMPOTENCY_CLEANUP_MS = 10 * 60 * 1000;

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
    startLoop('idempotency-cleanup', IDEMPOTENCY_CLEANUP_MS, deps.logger, () =>
      purgeExpiredIdempotencyKeys(deps),
    ),
  ];
  return {
    async stop() {
      await Promise.all(loops.map((loop) => loop.stop()));
    },
  };
}
