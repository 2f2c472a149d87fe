// The workers that run inside every server process. Each claims its rows so that any number of
// processes may run them side by side (DESIGN.md §1).
import type { Deps } from '../deps.ts';
import { deleteExpiredIdempotencyKeys } from '../store/idempotency.ts';
import { expireDueSessions } from './expiry.ts';
import { type Loop, startLoop } from './loop.ts';

const IDEMPOTENCY_CLEANUP_MS = 10 * 60 * 1000;

export function startWorkers(deps: Deps): Loop {
  const loops = [
    startLoop('expiry-sweeper', deps.config.sweepIntervalMs, deps.logger, (signal) =>
      expireDueSessions(deps, signal),
    ),
    startLoop('idempotency-cleanup', IDEMPOTENCY_CLEANUP_MS, deps.logger, () =>
      deleteExpiredIdempotencyKeys(deps.db.kysely, deps.clock.now()),
    ),
  ];
  return {
    async stop() {
      await Promise.all(loops.map((loop) => loop.stop()));
    },
  };
}
