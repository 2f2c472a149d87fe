// Idempotency records (docs/api.md#idempotency): a key is claimed before the request runs; the answer of
// a request that changed something is committed in the same transaction as the change (recordAnswer),
// so a crash between the two cannot happen and a retry replays the first answer instead of running
// again; any other answer is stored after it was made. The key is kept only as a hash, and the answer
// sealed with AES-256-GCM under a key derived from the Idempotency-Key itself: a stored answer holds an
// organizer's link, and only someone holding the Idempotency-Key can read it back.
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { Deps } from '../deps.ts';
import { sha256 } from '../ids.ts';
import {
  claimIdempotencyKey,
  deleteIdempotencyKey,
  type IdempotencyRecord,
  saveIdempotentResponse,
} from '../store/idempotency.ts';
import type { Database } from '../store/schema.ts';

const TTL_MS = 24 * 60 * 60 * 1000;
const SEALED = 'sealed:v1:';

export interface IdempotencyClaim {
  scope: string;
  /** The Idempotency-Key as the client sent it; never stored. */
  key: string;
  /** Set once the answer is stored, so that it is not stored twice. */
  answered?: boolean;
}

/** How the answer to a request is written, given what its flow did. */
export interface AnswerSpec<R> {
  claim: IdempotencyClaim;
  render(result: R): string;
}

const stored = (claim: IdempotencyClaim) => ({ scope: claim.scope, key: sha256(claim.key) });

function sealingKey(claim: IdempotencyClaim): Buffer {
  return createHmac('sha256', claim.key)
    .update(`group-checkout idempotent answer\u0000${claim.scope}`)
    .digest();
}

function seal(claim: IdempotencyClaim, body: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealingKey(claim), iv);
  const sealed = Buffer.concat([cipher.update(body, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `${SEALED}${iv.toString('base64')}:${sealed.toString('base64')}`;
}

function open(claim: IdempotencyClaim, text: string): string {
  if (!text.startsWith(SEALED)) return text;
  const [iv = '', sealed = ''] = text.slice(SEALED.length).split(':');
  const bytes = Buffer.from(sealed, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', sealingKey(claim), Buffer.from(iv, 'base64'));
  decipher.setAuthTag(bytes.subarray(bytes.length - 16));
  return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]).toString(
    'utf8',
  );
}

/** Claims the key for a new request (undefined), or answers the record a request with it left, opened. */
export async function claimKey(
  deps: Deps,
  claim: IdempotencyClaim,
  requestHash: string,
): Promise<IdempotencyRecord | undefined> {
  const now = deps.clock.now();
  const existing = await claimIdempotencyKey(deps.db.kysely, {
    ...stored(claim),
    requestHash,
    now,
    expiresAt: now + TTL_MS,
  });
  if (!existing || existing.responseBody === null || existing.requestHash !== requestHash) return existing;
  return { ...existing, responseBody: open(claim, existing.responseBody) };
}

/** Stores an answer made after the request ran (an error, or a request whose flow records none). */
export async function saveAnswer(deps: Deps, claim: IdempotencyClaim, statusCode: number, body: string) {
  await saveIdempotentResponse(deps.db.kysely, {
    ...stored(claim),
    statusCode,
    responseBody: seal(claim, body),
  });
  claim.answered = true;
}

/** Writes the 200 answer inside the flow's transaction, with the change it reports. */
export async function recordAnswer<R>(
  trx: Transaction<Database>,
  spec: AnswerSpec<R> | undefined,
  result: R,
): Promise<void> {
  if (!spec) return;
  await saveIdempotentResponse(trx, {
    ...stored(spec.claim),
    statusCode: 200,
    responseBody: seal(spec.claim, spec.render(result)),
  });
}

/** Frees the key: the request was refused as sent, or failed on our side, and may be sent again. */
export const releaseKey = (deps: Deps, claim: IdempotencyClaim) =>
  deleteIdempotencyKey(deps.db.kysely, stored(claim));
