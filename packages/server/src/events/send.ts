// One webhook attempt over HTTP (docs/decisions.md#webhook-delivery): Standard Webhooks headers, signed by
// @group-checkout/node's signWebhook (the signer its verifyWebhook is tested against), a deadline for the
// whole exchange, no redirects followed, and in production a check of every address the request would
// connect to, made inside the DNS lookup the connection itself uses, so that nothing can answer the check
// with a public address and the connection with a private one (DNS rebinding).
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { signWebhook } from '@group-checkout/node';
import { isPublicAddress } from '../domain/addresses.ts';

interface SendResult {
  /** The receiver's HTTP status; null when none came. */
  statusCode: number | null;
  /** From the start of the attempt to the answer's headers (or the failure). */
  latencyMs: number;
  /** What went wrong, in words; null on a 2xx answer. */
  error: string | null;
}

interface WebhookRequest {
  url: string;
  eventId: string;
  body: string;
  /** Every secret in force: each signs, and the signatures go space-separated. */
  secrets: readonly string[];
  /** webhook-timestamp, seconds. */
  timestamp: number;
}

function webhookHeaders(request: WebhookRequest, body: Buffer): Record<string, string> {
  return {
    'content-type': 'application/json',
    'content-length': String(body.length),
    'user-agent': 'GroupCheckout-Webhooks/1.0',
    'webhook-id': request.eventId,
    'webhook-timestamp': String(request.timestamp),
    'webhook-signature': signWebhook(request.eventId, request.timestamp, request.body, request.secrets),
  };
}

class BlockedAddressError extends Error {
  readonly code = 'EBLOCKED';
}

/** dns.lookup, refusing any answer that holds a non-public address. */
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(
    hostname,
    Object.assign({}, options, { all: true }) as LookupAllOptions,
    (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      const blocked = addresses.find((a) => !isPublicAddress(a.address));
      if (blocked) {
        return callback(
          new BlockedAddressError(
            `${hostname} resolves to ${blocked.address}, which is not a public address`,
          ),
          '',
          0,
        );
      }
      if ((options as { all?: boolean }).all)
        return (callback as (e: null, a: LookupAddress[]) => void)(null, addresses);
      const first = addresses[0] as LookupAddress;
      callback(null, first.address, first.family);
    },
  );
};

export interface Sender {
  send(request: WebhookRequest): Promise<SendResult>;
  close(): void;
}

/**
 * A sender with its own keep-alive connection pools. `publicOnly` (production) refuses every
 * non-public address, whether the URL names it or DNS answers it.
 */
export function createSender(options: { timeoutMs: number; publicOnly: boolean }): Sender {
  const agentOptions = {
    keepAlive: true,
    maxSockets: 8,
    ...(options.publicOnly ? { lookup: publicOnlyLookup } : {}),
  };
  const agents = { 'http:': new http.Agent(agentOptions), 'https:': new https.Agent(agentOptions) };
  return {
    send: (request) => send(request, agents, options),
    close() {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
}

function send(
  request: WebhookRequest,
  agents: { 'http:': http.Agent; 'https:': https.Agent },
  options: { timeoutMs: number; publicOnly: boolean },
): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const failed = (error: string): SendResult => ({ statusCode: null, latencyMs: elapsed(), error });
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return Promise.resolve(failed('the URL is not valid'));
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return Promise.resolve(failed('the URL is not http(s)'));
  const host = url.hostname.replace(/^\[|\]$/g, '');
  // An address written in the URL is connected to without a lookup: check it here.
  if (options.publicOnly && isIP(host) && !isPublicAddress(host)) {
    return Promise.resolve(failed(`refused: ${host} is not a public address`));
  }
  const body = Buffer.from(request.body);
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: SendResult) => {
      if (settled) return;
      settled = true;
      resolve(result);
    };
    const req = client.request(url, {
      method: 'POST',
      agent: agents[url.protocol as 'http:' | 'https:'],
      headers: webhookHeaders(request, body),
    });
    // One deadline for everything: connecting, sending, and the answer's headers and body.
    const deadline = setTimeout(
      () => req.destroy(new Error(`no answer within ${options.timeoutMs} ms`)),
      options.timeoutMs,
    );
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      finish({
        statusCode: status,
        latencyMs: elapsed(),
        error: status >= 200 && status < 300 ? null : `the receiver answered ${status}`,
      });
      // Drain the answer so the connection can carry the next delivery; the deadline still bounds it.
      res.resume();
      res.on('end', () => clearTimeout(deadline));
      res.on('error', () => clearTimeout(deadline));
    });
    req.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(deadline);
      finish(failed(describe(error, url)));
    });
    req.end(body);
  });
}

function describe(error: NodeJS.ErrnoException, url: URL): string {
  if (error instanceof BlockedAddressError) return `refused: ${error.message}`;
  switch (error.code) {
    case 'ECONNREFUSED':
      return `connection refused by ${url.host}`;
    case 'ENOTFOUND':
      return `${url.hostname} does not resolve`;
    case 'ECONNRESET':
      return `${url.host} closed the connection without answering`;
    default:
      return error.code ? `${error.message} (${error.code})` : error.message;
  }
}
