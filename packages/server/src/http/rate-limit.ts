// Per-route rate limits (@fastify/rate-limit, docs/api.md#rate-limits): a route opts in through its
// config (api/schemas.ts rateLimitConfig); counted in Redis when there is one, else in this process.
import rateLimit from '@fastify/rate-limit';
import { clientNetwork } from '../api/auth.ts';
import type { App } from '../app-type.ts';
import type { Deps } from '../deps.ts';
import { ServiceError } from '../errors.ts';

export async function rateLimits(app: App, deps: Deps) {
  await app.register(rateLimit, {
    global: false,
    redis: deps.redis,
    nameSpace: `${deps.config.redisKeyPrefix}ratelimit:`,
    enableDraftSpec: true,
    // Per client: an IPv4 address, or an IPv6 /64 (one allocation), as the failed-auth limits count.
    keyGenerator: (request) => clientNetwork(request.ip),
    // A rate-limit store that does not answer must not take the API down with it.
    skipOnError: true,
    errorResponseBuilder: (_request, context) =>
      new ServiceError('rate_limited', { message: `Too many requests; retry in ${context.after}.` }),
  });
}
