// Housekeeping: the clean-up the workers run (stored idempotent answers past their 24 hours,
// docs/api.md#idempotency; the API request log's rows past their 7 days, docs/dashboard.md#api-request-log)
// and the readiness probe.
import type { Deps } from '../deps.ts';
import { deleteApiRequestsBefore } from '../store/api-requests.ts';
import { ping } from '../store/db.ts';
import { deleteExpiredIdempotencyKeys } from '../store/idempotency.ts';
import { listMerchantIds } from '../store/merchants.ts';

export const purgeExpiredIdempotencyKeys = (deps: Deps): Promise<number> =>
  deleteExpiredIdempotencyKeys(deps.db.kysely, deps.clock.now());

/** How long the API request log keeps a request: 7 days, in milliseconds. */
export const API_REQUEST_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
/** Rows one sweep statement deletes: a sweep never holds the write lock long. */
const SWEEP_BATCH = 5000;

/**
 * Deletes the API request log's rows older than 7 days, merchant by merchant (the log's one index leads
 * with the merchant), in bounded batches; answers how many.
 */
export async function purgeOldApiRequests(deps: Deps): Promise<number> {
  const before = deps.clock.now() - API_REQUEST_RETENTION_MS;
  let total = 0;
  for (const merchantId of await listMerchantIds(deps.db.kysely)) {
    for (;;) {
      const deleted = await deleteApiRequestsBefore(deps.db.kysely, merchantId, before, SWEEP_BATCH);
      total += deleted;
      if (deleted < SWEEP_BATCH) break;
    }
  }
  return total;
}

/** Whether the database answers (GET /readyz). */
export const databaseReady = (deps: Deps): Promise<boolean> => ping(deps.db);
