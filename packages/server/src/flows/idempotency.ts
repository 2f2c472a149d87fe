// Idempotency records (docs/api.md#idempotency): a key is claimed before the request runs, its answer
// stored after, and replayed for 24 hours to a retry with the same key and body.
import type { Deps } from '../deps.ts';
import {
  claimIdempotencyKey,
  deleteIdempotencyKey,
  type IdempotencyRecord,
  saveIdempotentResponse,
} from '../store/idempotency.ts';

const TTL_MS = 24 * 60 * 60 * 1000;

export interface IdempotencyClaim {
  scope: string;
  key: string;
}

/** Claims the key for a new request (undefined), or answers the record a request with it left. */
export function claimKey(
  deps: Deps,
  claim: IdempotencyClaim,
  requestHash: string,
): Promise<IdempotencyRecord | undefined> {
  const now = deps.clock.now();
  return claimIdempotencyKey(deps.db.kysely, { ...claim, requestHash, now, expiresAt: now + TTL_MS });
}

/** Keeps the answer to replay it. */
export const saveAnswer = (deps: Deps, claim: IdempotencyClaim, statusCode: number, responseBody: string) =>
  saveIdempotentResponse(deps.db.kysely, { ...claim, statusCode, responseBody });

/** Frees the key: the request was refused as sent, or failed on our side, and may be sent again. */
export const releaseKey = (deps: Deps, claim: IdempotencyClaim) =>
  deleteIdempotencyKey(deps.db.kysely, claim);
