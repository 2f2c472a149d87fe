// Authentication and access for the merchant API (docs/api.md#authentication). Runs as a preParsing hook
// of the merchant plugin, after the route's rate limit and before the body is read: the key decides the
// merchant and the scope, and the request gets its Caller, the one thing flows learn of who asked.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ServiceEnv } from '../config.ts';
import type { Deps } from '../deps.ts';
import { parseOrigin } from '../domain/origins.ts';
import { ServiceError } from '../errors.ts';
import { type Caller, findKeyByHash } from '../flows/caller.ts';
import { KEY_PREFIX_LENGTH, type KeyEnvironment, keyEnvironmentFor, sha256 } from '../ids.ts';

export type AuthRequirement = 'secret' | 'publishable-or-secret';

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller | null;
  }
}

const KEY_FORMAT = /^svc_(pk|sk)_(test|live)_[0-9A-Za-z]{16,128}$/;
const BEARER_SCHEME = /^Bearer(?:\s+|$)/i;
const FAILURE_WINDOW_MS = 60_000;

export const CORS_ALLOWED_HEADERS =
  'Authorization, Content-Type, X-Merchant-ID, X-Service-Signature, Idempotency-Key';
const CORS_EXPOSED_HEADERS =
  'X-Request-Id, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Idempotent-Replayed';

/**
 * What failed authentications are counted against: the IPv4 address, or the /64 of an IPv6 address, since
 * one subscriber holds a whole /64 and may send each attempt from a new address in it.
 */
export function clientNetwork(ip: string): string {
  const address = ip.replace(/%.*$/, '');
  if (!address.includes(':')) return address;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1]) return mapped[1];
  const [head = '', tail] = address.split('::');
  const front = head ? head.split(':') : [];
  const back = tail ? tail.split(':') : [];
  const groups =
    tail === undefined ? front : [...front, ...Array(8 - front.length - back.length).fill('0'), ...back];
  const prefix = [...groups, '0', '0', '0', '0']
    .slice(0, 4)
    .map((g) => g.toLowerCase().replace(/^0+(?=.)/, ''));
  return `${prefix.join(':')}::/64`;
}

/**
 * Why an Authorization header holds no well-formed API key, and what to send instead: the cart signing
 * secret, a key without the Bearer scheme, another scheme, or a token of the wrong form.
 */
function keyFormatProblem(header: string, environment: KeyEnvironment): string {
  const send = `send Authorization: Bearer svc_sk_${environment}_… (secret key) or svc_pk_${environment}_… (publishable key)`;
  const hasScheme = BEARER_SCHEME.test(header);
  const token = (hasScheme ? header.replace(BEARER_SCHEME, '') : header).trim();
  if (token.startsWith('svc_sig_'))
    return `This is the cart signing secret (svc_sig_…), which signs carts on your server and is never an API key: ${send}.`;
  if (!hasScheme && /^svc_(pk|sk)_/.test(token))
    return `The Authorization header must be "Bearer " followed by the key, not the key alone: ${send}.`;
  if (!hasScheme) return `The Authorization header must use the Bearer scheme: ${send}.`;
  if (!token || /\s/.test(token))
    return `Authorization: Bearer must be followed by exactly one API key: ${send}.`;
  return (
    'Invalid API key format: an API key is svc_pk_test_, svc_pk_live_, svc_sk_test_ or svc_sk_live_ ' +
    `followed by 16 to 128 letters and digits; ${send}.`
  );
}

/** A key of the other environment: says which environment the key is for and which this deployment is. */
function environmentMismatch(kind: string, keyEnvironment: KeyEnvironment): string {
  const [other, here, deployment] =
    keyEnvironment === 'live' ? ['live', 'test', 'the sandbox'] : ['test', 'live', 'production'];
  return (
    `This is a ${other} key (svc_${kind}_${other}_…), but this deployment is ${deployment} and accepts ` +
    `only ${here} keys (svc_pk_${here}_…, svc_sk_${here}_…).`
  );
}

/**
 * The request's Origin in its canonical spelling when it is a web origin (domain/origins.ts), else
 * undefined: `*`, `null` or anything malformed is never echoed into Access-Control-Allow-Origin.
 */
export function corsOrigin(request: FastifyRequest, env: ServiceEnv): string | undefined {
  const parsed = parseOrigin(request.headers.origin, env);
  return parsed.ok ? parsed.origin : undefined;
}

/**
 * CORS for a publishable key (docs/api.md#cors): the browser must be able to read our answer, errors and
 * 429s included, so it is set before anything can refuse the request. Routes that need the secret key
 * send no CORS allowance at all, nor does an Origin that is not a web origin.
 */
export function allowBrowser(request: FastifyRequest, reply: FastifyReply, env: ServiceEnv) {
  const origin = corsOrigin(request, env);
  if (!origin) return;
  reply.header('Access-Control-Allow-Origin', origin);
  reply.header('Access-Control-Expose-Headers', CORS_EXPOSED_HEADERS);
  reply.header('Vary', 'Origin');
}

/** A failure count in its window, as the counter store answers it. */
interface WindowCount {
  count: number;
  resetMs: number;
}

/** Builds the hook that authenticates a route with the given requirement (run after its rate limit). */
export function authenticate(deps: Deps, requirement: AuthRequirement) {
  const limits = deps.config.rateLimits;
  const environment = keyEnvironmentFor(deps.config.serviceEnv);

  async function fail(
    request: FastifyRequest,
    prefix: string | undefined,
    code: 'missing_api_key' | 'invalid_api_key_format' | 'invalid_api_key',
    message?: string,
  ): Promise<never> {
    const writes = [deps.counters.increment(`auth-ip:${clientNetwork(request.ip)}`, FAILURE_WINDOW_MS)];
    if (prefix) writes.push(deps.counters.increment(`auth-key:${prefix}`, FAILURE_WINDOW_MS));
    const [byIp, byKey] = await Promise.all(writes);
    // Judged by the count this failure's own increment answered (atomic, shared through Redis): of a burst
    // that all passed the check before any was counted, only the failures within the limit are told why.
    throw tooMany(byIp, byKey, 1) ?? new ServiceError(code, { message });
  }

  /**
   * 429 too_many_failed_authentications when a count is past its limit by `past` (0: the limit's failures
   * were made; 1: this failure is one more than it allows), else undefined.
   */
  function tooMany(
    byIp: WindowCount | undefined,
    byKey: WindowCount | undefined,
    past: 0 | 1,
  ): ServiceError | undefined {
    const ipOver = byIp !== undefined && byIp.count >= limits.AUTH_FAILURES_IP + past;
    const keyOver = byKey !== undefined && byKey.count >= limits.AUTH_FAILURES_KEY + past;
    if (!ipOver && !keyOver) return undefined;
    const resetMs = Math.max(ipOver ? (byIp?.resetMs ?? 0) : 0, keyOver ? (byKey?.resetMs ?? 0) : 0);
    return new ServiceError('too_many_failed_authentications', {
      retryAfterSeconds: Math.max(1, Math.ceil(resetMs / 1000)),
    });
  }

  return async function authHook(request: FastifyRequest): Promise<void> {
    request.caller = null;
    const header = request.headers.authorization;
    const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    const key = match?.[1];
    const prefix = key?.slice(0, KEY_PREFIX_LENGTH);

    // Past the failure limit, even a correct key from this IP or with this prefix is refused.
    const byNetwork = `auth-ip:${clientNetwork(request.ip)}`;
    const [byIp, byKey] = await deps.counters.read(prefix ? [byNetwork, `auth-key:${prefix}`] : [byNetwork]);
    const limited = tooMany(byIp, byKey, 0);
    if (limited) throw limited;

    if (!header) return fail(request, undefined, 'missing_api_key');
    if (!key)
      return fail(request, undefined, 'invalid_api_key_format', keyFormatProblem(header, environment));
    const format = KEY_FORMAT.exec(key);
    if (!format)
      return fail(request, prefix, 'invalid_api_key_format', keyFormatProblem(header, environment));
    const kind = format[1] === 'sk' ? 'secret' : 'publishable';
    if (format[2] !== environment)
      throw new ServiceError('key_environment_mismatch', {
        message: environmentMismatch(format[1] as string, format[2] as KeyEnvironment),
      });
    if (kind === 'secret' && request.headers.origin !== undefined)
      throw new ServiceError('secret_key_from_browser');

    const hash = sha256(key);
    const found = await findKeyByHash(deps, hash);
    // The row was found by its hash; compare again in constant time so no lookup shortcut leaks.
    if (!found || !timingSafeEqual(Buffer.from(found.keyHash), Buffer.from(hash))) {
      return fail(request, prefix, 'invalid_api_key');
    }
    const merchantHeader = request.headers['x-merchant-id'];
    if (merchantHeader !== undefined && merchantHeader !== found.merchant.id)
      throw new ServiceError('merchant_mismatch');
    if (requirement === 'secret' && kind !== 'secret') throw new ServiceError('secret_key_required');
    request.caller = { merchant: found.merchant, keyKind: kind, presentedKey: key };
  };
}

/** Who called an authenticated route; for use in handlers of authenticated routes only. */
export function callerOf(request: FastifyRequest): Caller {
  if (!request.caller) throw new Error('route is not authenticated');
  return request.caller;
}
