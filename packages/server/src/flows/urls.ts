// Rules for URLs that merchants hand us: where we redirect organizers and where we deliver webhooks.
// In production a webhook target must be https and must resolve only to public addresses, so that
// nobody can aim our delivery workers at the inside of our own network.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { ServiceEnv } from '../config.ts';
import { isPublicAddress } from '../domain/addresses.ts';
import { isLoopbackHost } from '../domain/origins.ts';

/** Control characters, spaces and lone surrogates: the URL parser would drop or replace them silently, so the
 * URL we stored would not be the one we call. */
const UNSAFE_CHARACTERS =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
  /[\u0000-\u0020\u007f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function parse(raw: string): URL | undefined {
  if (UNSAFE_CHARACTERS.test(raw)) return undefined;
  try {
    return new URL(raw);
  } catch {
    return undefined;
  }
}

/**
 * The URL a webhook is sent to and queued under: the WHATWG serialization (scheme and host in lower case,
 * dot segments resolved, the scheme's default port dropped), without a fragment, which is never sent, or an
 * empty query. Two spellings of one URL, as an endpoint and a session's webhook_url say, are one queue
 * and one lease, so the receiver still gets one delivery at a time (docs/decisions.md#webhook-delivery).
 */
export function deliveryUrl(raw: string): string {
  const url = parse(raw);
  if (!url) return raw;
  url.hash = '';
  if (url.search === '') url.search = '';
  return url.href;
}

/**
 * A redirect or per-session webhook URL (success_url, cancel_url, webhook_url): https, or in the sandbox
 * http on a loopback host for local development. Answers an error sentence, or undefined when fine.
 */
export function checkMerchantUrl(field: string, raw: string, env: ServiceEnv): string | undefined {
  const url = parse(raw);
  if (!url?.hostname) return `${field} must be an absolute URL`;
  if (url.username || url.password) return `${field} must not contain credentials`;
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && env === 'sandbox' && isLoopbackHost(url.hostname)) return undefined;
  return env === 'sandbox'
    ? `${field} must be an https URL (http is allowed only for localhost in the sandbox)`
    : `${field} must be an https URL`;
}

/**
 * A registered webhook endpoint: any http(s) URL in the sandbox; in production https whose host resolves
 * only to public addresses.
 */
export async function checkWebhookEndpointUrl(
  field: string,
  raw: string,
  env: ServiceEnv,
  resolve: (host: string) => Promise<string[]> = resolveAll,
): Promise<string | undefined> {
  const url = parse(raw);
  if (!url?.hostname || !['http:', 'https:'].includes(url.protocol)) return `${field} must be an http(s) URL`;
  if (url.username || url.password) return `${field} must not contain credentials`;
  if (env === 'sandbox') return undefined;
  if (url.protocol !== 'https:') return `${field} must be an https URL`;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : await resolve(host);
  } catch {
    return `${field} host ${host} does not resolve`;
  }
  if (addresses.length === 0) return `${field} host ${host} does not resolve`;
  if (!addresses.every(isPublicAddress)) return `${field} must resolve to public addresses only`;
  return undefined;
}

async function resolveAll(host: string): Promise<string[]> {
  return (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
}
