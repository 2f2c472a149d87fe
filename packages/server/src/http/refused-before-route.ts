// The IP blocklist and a URL holding NUL (no id, token or parameter of ours does, and PostgreSQL cannot
// compare text with one). A rate-limited route checks them after its limit, in its first preParsing
// hook, so that refused requests are counted and carry the RateLimit headers like any other; other
// routes at once. Chosen per route as it is registered: nothing is looked up per request. Routes marked
// `public` (health probes, documents) answer blocked addresses too.
import type { FastifyRequest, onRequestHookHandler, preParsingHookHandler } from 'fastify';
import { nulInUrl, urlHoldsNul } from '../api/json.ts';
import { hooksOf } from '../api/schemas.ts';
import type { App } from '../app-type.ts';
import type { Deps } from '../deps.ts';
import { ServiceError } from '../errors.ts';

export function refuseBeforeRoute(app: App, deps: Deps) {
  app.addHook('onRoute', (route) => {
    const checkBlocklist = !route.config?.public;
    if (route.config?.rateLimit) {
      const guard: preParsingHookHandler = (request, _reply, payload, done) => {
        const refused = refusedBeforeRoute(deps, request, checkBlocklist);
        return refused ? done(refused) : done(null, payload);
      };
      route.preParsing = [guard, ...hooksOf(route.preParsing)];
    } else {
      const guard: onRequestHookHandler = (request, _reply, done) => {
        const refused = refusedBeforeRoute(deps, request, checkBlocklist);
        return refused ? done(refused) : done();
      };
      route.onRequest = [guard, ...hooksOf(route.onRequest)];
    }
  });
}

/** Why the request is refused before any route sees it, if it is. */
export function refusedBeforeRoute(
  deps: Deps,
  request: FastifyRequest,
  checkBlocklist: boolean,
): ServiceError | undefined {
  if (checkBlocklist && isBlocked(deps, request.ip)) return new ServiceError('ip_blocked');
  if (urlHoldsNul(request.url)) return nulInUrl();
  return undefined;
}

function isBlocked(deps: Deps, ip: string): boolean {
  const list = deps.config.ipBlocklist;
  if (!deps.config.ipBlocklistText) return false;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped?.[1]) return list.check(mapped[1], 'ipv4');
  return list.check(ip, ip.includes(':') ? 'ipv6' : 'ipv4');
}
