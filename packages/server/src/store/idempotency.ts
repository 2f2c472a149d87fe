// Idempotency records: one row per (scope, key hash), claimed before a request runs and answered with
// the request's outcome (docs/api.md#idempotency). The key itself is not stored, only its hash, and the
// answer is stored sealed with a key derived from it (flows/idempotency.ts).
import type { Kysely } from 'kysely';
import { isUniqueViolation } from './db.ts';
import type { Database, Executor } from './schema.ts';

export interface IdempotencyRecord {
  requestHash: string;
  statusCode: number | null;
  responseBody: string | null;
  /** When the request that holds the key claimed it. */
  createdAt: number;
}

/** A claim with no answer after this long belongs to a process that died mid-request: take it over. */
export const ABANDONED_CLAIM_MS = 60_000;

/**
 * Claims (scope, key) for a new request. Answers undefined when this request now owns the key, or the
 * record already there. An expired or abandoned record is replaced.
 */
export async function claimIdempotencyKey(
  db: Kysely<Database>,
  input: { scope: string; key: string; requestHash: string; now: number; expiresAt: number },
): Promise<IdempotencyRecord | undefined> {
  const { scope, key, requestHash, now, expiresAt } = input;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await db
        .insertInto('idempotency_keys')
        .values({
          scope,
          key,
          request_hash: requestHash,
          status_code: null,
          response_body: null,
          created_at: now,
          expires_at: expiresAt,
        })
        .execute();
      return undefined;
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
    }
    const row = await db
      .selectFrom('idempotency_keys')
      .select(['request_hash', 'status_code', 'response_body', 'created_at', 'expires_at'])
      .where('scope', '=', scope)
      .where('key', '=', key)
      .executeTakeFirst();
    if (!row) continue;
    const abandoned = row.status_code === null && row.created_at <= now - ABANDONED_CLAIM_MS;
    if (row.expires_at > now && !abandoned) {
      return {
        requestHash: row.request_hash,
        statusCode: row.status_code,
        responseBody: row.response_body,
        createdAt: row.created_at,
      };
    }
    // Only the row just judged, and only while it is still unanswered (or expired): a request that
    // answers it meanwhile keeps its answer.
    await db
      .deleteFrom('idempotency_keys')
      .where('scope', '=', scope)
      .where('key', '=', key)
      .where('created_at', '=', row.created_at)
      .where((eb) => eb.or([eb('status_code', 'is', null), eb('expires_at', '<=', now)]))
      .execute();
  }
  throw new Error('idempotency key could not be claimed');
}

/** A claim: the row a request wrote when it took the key, named by its creation time. */
export interface ClaimedKey {
  scope: string;
  key: string;
  claimedAt: number;
}

/**
 * Answers the claim, if it is still this request's and still unanswered; false otherwise (it was taken
 * over by a retry after the abandon time), and then nothing was written.
 */
export async function saveIdempotentResponse(
  db: Executor,
  claim: ClaimedKey,
  answer: { statusCode: number; responseBody: string },
): Promise<boolean> {
  const result = await db
    .updateTable('idempotency_keys')
    .set({ status_code: answer.statusCode, response_body: answer.responseBody })
    .where('scope', '=', claim.scope)
    .where('key', '=', claim.key)
    .where('created_at', '=', claim.claimedAt)
    .where('status_code', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Replaces the 200 answer a request stored with its change by the answer it finally gave (a cancel whose
 * refunds settled after the change committed); false when the claim is no longer this request's.
 */
export async function replaceIdempotentResponse(
  db: Executor,
  claim: ClaimedKey,
  responseBody: string,
): Promise<boolean> {
  const result = await db
    .updateTable('idempotency_keys')
    .set({ response_body: responseBody })
    .where('scope', '=', claim.scope)
    .where('key', '=', claim.key)
    .where('created_at', '=', claim.claimedAt)
    .where('status_code', '=', 200)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Frees the claim, if it is still this request's and unanswered: an answered key is never freed. */
export async function deleteIdempotencyKey(db: Kysely<Database>, claim: ClaimedKey): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('scope', '=', claim.scope)
    .where('key', '=', claim.key)
    .where('created_at', '=', claim.claimedAt)
    .where('status_code', 'is', null)
    .execute();
}

/** Removes records past their 24 hours; run by the sweeper. */
export async function deleteExpiredIdempotencyKeys(db: Kysely<Database>, now: number): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}
