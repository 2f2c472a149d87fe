// Idempotency records (docs/api.md#idempotency): a key is claimed before the request runs; the answer of
// a request that changed something is committed in the same transaction as the change (recordAnswer),
// so a crash between the two cannot happen and a retry replays the first answer instead of running
// again; any other answer is stored after it was made. The key is kept only as a hash, and the answer
// sealed with AES-256-GCM under a key derived from the Idempotency-Key itself: a stored answer holds an
// organizer's link, and only someone holding the Idempotency-Key can read it back.
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { Deps } from '../deps.ts';
import { ServiceError } from '../errors.ts';
import { sha256 } from '../ids.ts';
import {
  ABANDONED_CLAIM_MS,
  type ClaimedKey,
  claimIdempotencyKey,
  deleteIdempotencyKey,
  type IdempotencyRecord,
  replaceIdempotentResponse,
  saveIdempotentResponse,
} from '../store/idempotency.ts';
import type { Database } from '../store/schema.ts';

const TTL_MS = 24 * 60 * 60 * 1000;
const SEALED = 'sealed:v1:';
/**
 * Marks an answer committed with a change while the request still has work to do before it answers (a
 * cancel's refunds): the same key is 409 idempotency_in_progress meanwhile, as for any request still
 * running, and the request replaces it with the answer it gives (updateAnswer). Only a request that died
 * before that leaves it, and its retry, once the claim counts as abandoned, replays it.
 */
const PROVISIONAL = 'provisional:';

export interface IdempotencyClaim {
  scope: string;
  /** The Idempotency-Key as the client sent it; never stored. */
  key: string;
  /** When this request's claim row was written: its writes touch that row only (set by claimKey). */
  claimedAt?: number;
  /** Secrets the sealing key is derived from besides the key: SECRETS_KEY, then its predecessor. */
  peppers?: Buffer[];
  /** Set once the answer is stored, so that it is not stored twice. */
  answered?: boolean;
  /**
   * Set when the answer means "not yet": by a flow (a payment waiting on the payer's authentication), or
   * by the error answer (409 payment_in_progress, idempotency_in_progress). The key is freed, never
   * stored, so that the same key sent again runs again (docs/api.md#idempotency).
   */
  notYet?: boolean;
}

/** How the answer to a request is written, given what its flow did. */
export interface AnswerSpec<R> {
  claim: IdempotencyClaim;
  render(result: R): string;
}

const stored = (claim: IdempotencyClaim): ClaimedKey => ({
  scope: claim.scope,
  key: sha256(claim.key),
  claimedAt: claim.claimedAt ?? Number.NaN,
});

/**
 * The key an answer is sealed under: HMAC of the Idempotency-Key and the scope, keyed with SECRETS_KEY
 * when one is set (always in production). Without SECRETS_KEY, only the Idempotency-Key protects it.
 */
function sealingKey(claim: IdempotencyClaim, pepper: Buffer | undefined): Buffer {
  const inner = createHmac('sha256', claim.key)
    .update(`group-checkout idempotent answer\u0000${claim.scope}`)
    .digest();
  return pepper ? createHmac('sha256', pepper).update(inner).digest() : inner;
}

function seal(claim: IdempotencyClaim, body: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealingKey(claim, claim.peppers?.[0]), iv);
  const sealed = Buffer.concat([cipher.update(body, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `${SEALED}${iv.toString('base64')}:${sealed.toString('base64')}`;
}

/** The answer, opened with the current or the previous SECRETS_KEY; undefined when neither opens it. */
function open(claim: IdempotencyClaim, text: string): string | undefined {
  if (!text.startsWith(SEALED)) return text;
  const [iv = '', sealed = ''] = text.slice(SEALED.length).split(':');
  const bytes = Buffer.from(sealed, 'base64');
  const peppers = claim.peppers?.length ? claim.peppers : [undefined];
  for (const pepper of peppers) {
    try {
      const decipher = createDecipheriv('aes-256-gcm', sealingKey(claim, pepper), Buffer.from(iv, 'base64'));
      decipher.setAuthTag(bytes.subarray(bytes.length - 16));
      return Buffer.concat([
        decipher.update(bytes.subarray(0, bytes.length - 16)),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      // Sealed under another key: try the next.
    }
  }
  return undefined;
}

/** Claims the key for a new request (undefined), or answers the record a request with it left, opened. */
export async function claimKey(
  deps: Deps,
  claim: IdempotencyClaim,
  requestHash: string,
): Promise<IdempotencyRecord | undefined> {
  const now = deps.clock.now();
  claim.peppers = [deps.config.secretsKey, deps.config.secretsKeyPrevious].filter(
    (key): key is Buffer => key !== undefined,
  );
  const { scope, key } = stored(claim);
  const existing = await claimIdempotencyKey(deps.db.kysely, {
    scope,
    key,
    requestHash,
    now,
    expiresAt: now + TTL_MS,
  });
  if (!existing) {
    claim.claimedAt = now;
    return undefined;
  }
  if (existing.responseBody === null || existing.requestHash !== requestHash) return existing;
  let text = existing.responseBody;
  if (text.startsWith(PROVISIONAL)) {
    // The request that holds the key is still finishing (or died, past the abandon time: replay this).
    if (existing.createdAt > now - ABANDONED_CLAIM_MS) return { ...existing, statusCode: null };
    text = text.slice(PROVISIONAL.length);
  }
  const body = open(claim, text);
  if (body === undefined) {
    // Sealed under a SECRETS_KEY that is no longer configured: the answer cannot be given back.
    throw new ServiceError('idempotency_key_reused', {
      message:
        'The answer stored for this Idempotency-Key can no longer be read (the service key was rotated); send the request with a new key.',
    });
  }
  return { ...existing, responseBody: body };
}

/** Stores an answer made after the request ran (an error, or a request whose flow records none). */
export async function saveAnswer(deps: Deps, claim: IdempotencyClaim, statusCode: number, body: string) {
  await saveIdempotentResponse(deps.db.kysely, stored(claim), {
    statusCode,
    responseBody: seal(claim, body),
  });
  claim.answered = true;
}

/**
 * Writes the 200 answer inside the flow's transaction, with the change it reports. A claim that is no
 * longer this request's (taken over by a retry after the abandon time) makes the flow's transaction
 * fail, so the change is not made twice: the retry's run is the one that counts.
 */
export async function recordAnswer<R>(
  trx: Transaction<Database>,
  spec: AnswerSpec<R> | undefined,
  result: R,
  /** The request answers later, with updateAnswer: until then the key is in progress (PROVISIONAL). */
  options: { provisional?: boolean } = {},
): Promise<void> {
  if (!spec) return;
  const sealed = seal(spec.claim, spec.render(result));
  const saved = await saveIdempotentResponse(trx, stored(spec.claim), {
    statusCode: 200,
    responseBody: options.provisional ? `${PROVISIONAL}${sealed}` : sealed,
  });
  if (!saved) {
    throw new ServiceError('idempotency_in_progress', {
      message: 'A retry with this Idempotency-Key took the request over; its answer is the one that counts.',
    });
  }
}

/**
 * Writes the 200 answer inside a transaction that records money that already moved: unlike recordAnswer,
 * a claim taken over by a retry does not fail the transaction (the money moved whatever the answer);
 * the answer is then simply not stored, and the retry's is the one that counts. Answers whether it was.
 */
export async function recordAnswerIfStillOurs<R>(
  trx: Transaction<Database>,
  spec: AnswerSpec<R> | undefined,
  result: R,
): Promise<boolean> {
  if (!spec) return false;
  return saveIdempotentResponse(trx, stored(spec.claim), {
    statusCode: 200,
    responseBody: seal(spec.claim, spec.render(result)),
  });
}

/**
 * Rewrites the answer recordAnswer committed with the change, once the request's follow-up work is done
 * (a cancel's refunds, made after the close committed): a retry then replays the answer the client was
 * given. A crash before this leaves the answer committed with the change, which is still true of it.
 */
export async function updateAnswer<R>(deps: Deps, spec: AnswerSpec<R> | undefined, result: R): Promise<void> {
  if (!spec) return;
  await replaceIdempotentResponse(deps.db.kysely, stored(spec.claim), seal(spec.claim, spec.render(result)));
}

/** Frees the key: the request was refused as sent, or failed on our side, and may be sent again. */
export const releaseKey = (deps: Deps, claim: IdempotencyClaim) =>
  deleteIdempotencyKey(deps.db.kysely, stored(claim));
