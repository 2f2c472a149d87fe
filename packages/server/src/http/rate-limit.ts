// Per-route rate limits (@fastify/rate-limit, docs/api.md#rate-limits): a route opts in through its
// config (api/schemas.ts rateLimitConfig); counted in Redis when there is one, else in this process.
import { createRequire } from 'node:module';
import rateLimit, { type FastifyRateLimitStore } from '@fastify/rate-limit';
import type { Redis } from 'ioredis';
import { clientNetwork } from '../api/auth.ts';
import type { App } from '../app-type.ts';
import type { Deps } from '../deps.ts';
import { ServiceError } from '../errors.ts';

// The plugin's own two stores. It exports no constructor for them, so they are loaded by path; the
// rate-limit tests fail if a new version moves them.
const load = createRequire(import.meta.url);
const RedisStore: new (
  continueExceeding: boolean,
  exponentialBackoff: boolean,
  redis: Redis,
  key: string,
) => FastifyRateLimitStore = load('@fastify/rate-limit/store/RedisStore.js');
const LocalStore: new (continueExceeding: boolean, exponentialBackoff: boolean) => FastifyRateLimitStore =
  load('@fastify/rate-limit/store/LocalStore.js');

/**
 * The plugin's store, but with one counter per path for GET and HEAD: Fastify answers HEAD with the GET
 * route's handler, and a HEAD costs what a GET costs, so it must not be a second budget beside it. The
 * plugin makes one child store per route; the HEAD route is given its GET route's child.
 */
function headCountsAsGet(base: FastifyRateLimitStore) {
  const children = new Map<string, FastifyRateLimitStore>();
  return class OneCounterForGetAndHead implements FastifyRateLimitStore {
    incr(...args: Parameters<FastifyRateLimitStore['incr']>): void {
      base.incr(...args);
    }
    child(route: Parameters<FastifyRateLimitStore['child']>[0]): FastifyRateLimitStore {
      const { method, url } = (route as unknown as { routeInfo: { method: string; url: string } }).routeInfo;
      const key = `${method === 'HEAD' ? 'GET' : method} ${url}`;
      let child = children.get(key);
      if (!child) {
        child = base.child(route);
        children.set(key, child);
      }
      return child;
    }
  };
}

export async function rateLimits(app: App, deps: Deps) {
  const base = deps.redis
    ? new RedisStore(false, false, deps.redis, `${deps.config.redisKeyPrefix}ratelimit:`)
    : new LocalStore(false, false);
  await app.register(rateLimit, {
    global: false,
    store: headCountsAsGet(base),
    enableDraftSpec: true,
    // Per client: an IPv4 address, or an IPv6 /64 (one allocation), as the failed-auth limits count.
    keyGenerator: (request) => clientNetwork(request.ip),
    // A rate-limit store that does not answer must not take the API down with it.
    skipOnError: true,
    errorResponseBuilder: (_request, context) =>
      new ServiceError('rate_limited', { message: `Too many requests; retry in ${context.after}.` }),
  });
}
