// Idempotency-Key on POST (docs/api.md#idempotency). The first answer to a key is stored for 24 hours and replayed
// for the same key and body; the same key with another body is 409. The key row is written before the
// handler runs, so two concurrent requests with one key cannot both run.

import { canonicalJson } from '@group-checkout/node';
import type { FastifyReply, FastifyRequest, onSendHookHandler, preHandlerHookHandler } from 'fastify';
import type { App } from '../app-type.ts';
import type { Deps } from '../deps.ts';
import { ServiceError } from '../errors.ts';
import {
  type AnswerSpec,
  claimKey,
  type IdempotencyClaim,
  releaseKey,
  saveAnswer,
} from '../flows/idempotency.ts';
import { sha256 } from '../ids.ts';
import { hooksOf } from './schemas.ts';

const KEY_FORMAT = /^[\x21-\x7e]{1,255}$/;

declare module 'fastify' {
  interface FastifyRequest {
    idempotency?: IdempotencyClaim;
  }
}

/** Who a key belongs to: the merchant, or for pay-page routes the token or share that authorized it. */
type ScopeOf = (request: FastifyRequest) => string;

/** Gives every POST route registered after this call in `app`'s plugin the Idempotency-Key handling. */
export function idempotentPosts(app: App, deps: Deps, scopeOf: ScopeOf): void {
  const hook = idempotency(deps, scopeOf) as preHandlerHookHandler;
  // The answer is stored by the same routes' onSend: no other request can hold a claim.
  const store = idempotencyOnSend(deps) as onSendHookHandler;
  app.addHook('onRoute', (route) => {
    if (route.method !== 'POST') return;
    route.preHandler = [...hooksOf(route.preHandler), hook];
    route.onSend = [...hooksOf(route.onSend), store];
  });
}

function idempotency(deps: Deps, scopeOf: ScopeOf) {
  return async function idempotencyHook(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const key = request.headers['idempotency-key'];
    if (key === undefined) return;
    if (typeof key !== 'string' || !KEY_FORMAT.test(key)) throw new ServiceError('invalid_idempotency_key');
    const scope = scopeOf(request);
    // The same body with its keys in another order is the same request, and no body is the same as {}.
    const requestHash = sha256(`${request.method} ${request.url}\n${canonicalJson(request.body ?? {})}`);
    const claim: IdempotencyClaim = { scope, key };
    const existing = await claimKey(deps, claim, requestHash);
    if (!existing) {
      request.idempotency = claim;
      return;
    }
    if (existing.requestHash !== requestHash) throw new ServiceError('idempotency_key_reused');
    // Most requests finish within the second; one that died is taken over a minute after it began.
    if (existing.statusCode === null || existing.responseBody === null)
      throw new ServiceError('idempotency_in_progress', { retryAfterSeconds: 1 });
    reply
      .code(existing.statusCode)
      .header('content-type', 'application/json; charset=utf-8')
      .header('idempotent-replayed', 'true')
      .send(existing.responseBody);
    return reply;
  };
}

const REFUSED = new Set([400, 401, 403, 429]);

/**
 * Runs a flow that changes something, giving it the AnswerSpec of the request's claimed key (if any),
 * so that the flow commits the 200 answer with its change (flows/idempotency.ts); answers the wire shape.
 */
export async function withAnswer<R>(
  request: FastifyRequest,
  toWire: (result: R) => object,
  run: (answer: AnswerSpec<R> | undefined) => Promise<R>,
): Promise<object> {
  const claim = request.idempotency;
  const spec = claim && {
    claim,
    render: (result: R) => JSON.stringify({ request_id: request.id, ...toWire(result) }),
  };
  const result = await run(spec);
  // The flow committed its answer with its change, unless it said "not yet" (the onSend hook frees the key).
  if (claim && !claim.notYet) claim.answered = true;
  return toWire(result);
}

/** onSend hook: stores the answer of a claimed key, or frees the key when the server failed. */
function idempotencyOnSend(deps: Deps) {
  async function store(claim: IdempotencyClaim, statusCode: number, payload: unknown) {
    // A 400 means the request was refused as sent and nothing ran: free the key so that the corrected
    // request may use it. 401 and 403 are answers to whoever sent them, not outcomes of the request (and
    // must not let anyone write rows). A "not yet" (a 409 *_in_progress, a payment waiting on the
    // payer's authentication), a 429 or a 5xx may be retried as it is, and the retry must run: the
    // moment after, the answer may be another. Every other answer is the request's outcome.
    if (claim.notYet || REFUSED.has(statusCode) || statusCode >= 500 || typeof payload !== 'string') {
      await releaseKey(deps, claim);
    } else {
      await saveAnswer(deps, claim, statusCode, payload);
    }
  }
  // Callback style: most requests carry no key, and they should not pay for a promise here.
  return function storeIdempotentResponse(
    request: FastifyRequest,
    reply: FastifyReply,
    payload: unknown,
    done: (error: Error | null, payload?: unknown) => void,
  ): void {
    const claim = request.idempotency;
    if (!claim || claim.answered) {
      done(null, payload);
      return;
    }
    request.idempotency = undefined;
    store(claim, reply.statusCode, payload).then(
      () => done(null, payload),
      (error: Error) => done(error),
    );
  };
}
