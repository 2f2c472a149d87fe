// Housekeeping: the clean-up the workers run (stored idempotent answers past their 24 hours,
// docs/api.md#idempotency) and the readiness probe.
import type { Deps } from '../deps.ts';
import { ping } from '../store/db.ts';
import { deleteExpiredIdempotencyKeys } from '../store/idempotency.ts';

export const purgeExpiredIdempotencyKeys = (deps: Deps): Promise<number> =>
  deleteExpiredIdempotencyKeys(deps.db.kysely, deps.clock.now());

/** Whether the database answers (GET /readyz). */
export const databaseReady = (deps: Deps): Promise<boolean> => ping(deps.db);
