// Answers read over and over, serialized once (docs/decisions.md#answers-serialized-once): the SDK polls
// the same session, and a merchant's server reads the same profile, many times between two changes. The
// answer's bytes after its request_id are kept beside the cached read they were made from (the read
// cache's entry, which a write replaces: docs/decisions.md#read-caches), so they are never older than it;
// each request only puts its own request_id in front. The bytes are the route's own serializer's, from
// its response schema, so they are the answer a fresh serialization would give, to the byte.
import type { FastifyReply, FastifyRequest } from 'fastify';

const JSON_TYPE = 'application/json; charset=utf-8';
const HEAD = '{"request_id":"",';

/** Per cached read, per variant of its answer (the caller's kind of key, say): the bytes after request_id. */
const kept = new WeakMap<object, Map<string, string>>();

/**
 * Sends the 200 answer made by `build` from the cached read `source`: serialized the first time for that
 * read and variant, its bytes reused after. `source` must be an object no write changes in place. Where
 * reads are not cached (`cached` false: PostgreSQL), every read is new and its answer is sent as any other.
 */
export function sendKept(
  request: FastifyRequest,
  reply: FastifyReply,
  source: { value: object; variant: string; cached: boolean },
  build: () => object,
): FastifyReply {
  if (!source.cached) return reply.send(build());
  const { value, variant } = source;
  let byVariant = kept.get(value);
  if (!byVariant) {
    byVariant = new Map();
    kept.set(value, byVariant);
  }
  let rest = byVariant.get(variant);
  if (rest === undefined) {
    const whole = reply.serialize({ request_id: '', ...build() });
    // Every answer's schema starts with request_id (api/schemas.ts withRequestId); one that did not, or
    // an empty answer, would have no place to put it: it is sent as any other answer.
    if (typeof whole !== 'string' || !whole.startsWith(HEAD)) return reply.send(build());
    rest = whole.slice(HEAD.length);
    byVariant.set(variant, rest);
  }
  // A request id is ours (http/request-id.ts): letters, digits and underscores, nothing to escape.
  return reply.type(JSON_TYPE).send(`{"request_id":"${request.id}",${rest}`);
}
