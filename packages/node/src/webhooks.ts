// Verifying the webhooks Group Checkout sends (Standard Webhooks, https://www.standardwebhooks.com):
// headers webhook-id, webhook-timestamp and webhook-signature, the signature being
// `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` keyed with the base64 part of the whsec_ secret.
// During a secret's rotation several signatures come space-separated; any one that matches will do.
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';

/** What verifyWebhook refused, with what was wrong in its message. */
export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

export interface VerifyOptions {
  /** How far the timestamp may be from now, either way, in seconds (default 300). */
  tolerance?: number;
  /** Now, in milliseconds (default Date.now()); for tests. */
  now?: number;
}

/** Headers as Node's `IncomingMessage.headers`, a Fetch `Headers`, or a plain object. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

const DEFAULT_TOLERANCE_SECONDS = 300;

function keyOf(secret: string): Buffer {
  const encoded = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  const key = Buffer.from(encoded, 'base64');
  if (key.length === 0)
    throw new WebhookVerificationError('the webhook secret is empty: pass the whsec_… secret');
  return key;
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const value = record[name] ?? Object.entries(record).find(([k]) => k.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value[0] : value;
}

/** `v1,<signature>` of `body` for `id` at `timestamp` (seconds), with `secret`. */
function sign(id: string, timestamp: number, body: string, secret: string): string {
  const digest = createHmac('sha256', keyOf(secret)).update(`${id}.${timestamp}.${body}`).digest('base64');
  return `v1,${digest}`;
}

/**
 * The webhook-signature header of a webhook with `body`, `id` and `timestamp` (seconds): one `v1,…`
 * signature per secret, space-separated (two while a secret is rotated). The one signer: Group Checkout
 * sends its webhooks signed with it.
 */
export function signWebhook(
  id: string,
  timestamp: number,
  body: string,
  secrets: string | readonly string[],
): string {
  return (typeof secrets === 'string' ? [secrets] : secrets)
    .map((secret) => sign(id, timestamp, body, secret))
    .join(' ');
}

/**
 * Checks that `body` (the raw request body, exactly as received: parse it after) was sent by Group
 * Checkout with `secret`, and recently; answers the parsed event. Throws WebhookVerificationError
 * saying what is wrong: a header missing, a timestamp too old or too new, or no signature matching.
 */
export function verifyWebhook<T = unknown>(
  body: string | Buffer,
  headers: WebhookHeaders,
  secret: string,
  options: VerifyOptions = {},
): T {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  const missing = [
    ['webhook-id', id],
    ['webhook-timestamp', timestamp],
    ['webhook-signature', signatures],
  ].filter(([, value]) => !value);
  if (missing.length > 0) {
    throw new WebhookVerificationError(
      `missing header${missing.length > 1 ? 's' : ''} ${missing.map(([name]) => name).join(', ')}: is this request from Group Checkout?`,
    );
  }
  const seconds = Number(timestamp);
  if (!/^\d+$/.test(timestamp as string) || !Number.isSafeInteger(seconds)) {
    throw new WebhookVerificationError(
      `webhook-timestamp must be whole seconds since the epoch, got "${timestamp}"`,
    );
  }
  const tolerance = options.tolerance ?? DEFAULT_TOLERANCE_SECONDS;
  const now = Math.floor((options.now ?? Date.now()) / 1000);
  if (seconds < now - tolerance)
    throw new WebhookVerificationError(
      `the timestamp is too old: ${now - seconds} s ago, more than the ${tolerance} s allowed (a replay?)`,
    );
  if (seconds > now + tolerance)
    throw new WebhookVerificationError(
      `the timestamp is too new: ${seconds - now} s ahead, more than the ${tolerance} s allowed (check the clock)`,
    );
  const text = typeof body === 'string' ? body : body.toString('utf8');
  const expected = Buffer.from(sign(id as string, seconds, text, secret).slice(3), 'base64');
  const matches = (signatures as string).split(' ').some((candidate) => {
    const [version, value] = candidate.split(',', 2);
    if (version !== 'v1' || !value) return false;
    const given = Buffer.from(value, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) {
    throw new WebhookVerificationError(
      'no signature matches: check that you use this endpoint’s whsec_ secret (or the session webhook secret for webhook_url deliveries), and verify the raw body as received, before any parsing',
    );
  }
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new WebhookVerificationError('the signed body is not JSON');
  }
}

/** Options of generateTestHeaders. */
export interface TestHeadersOptions {
  /** The webhook-id header (default: the payload's string `id`, else a new random `evt_test_…` id). */
  id?: string;
  /** The webhook-timestamp header, in seconds since the epoch (default: now). */
  timestamp?: number;
}

/** The payload's own `id` when it is a string: the event id, which webhook-id carries. */
function idOf(payload: unknown): string | undefined {
  let value = payload;
  if (typeof payload === 'string') {
    try {
      value = JSON.parse(payload);
    } catch {
      return undefined; // a body that is not JSON has no id of its own
    }
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const id = (value as { id?: unknown }).id;
  return typeof id === 'string' ? id : undefined;
}

/**
 * Headers a webhook of `payload` would carry, signed with `secret`, for a merchant's own tests of their
 * receiver. `payload` is sent as is when a string, else as JSON.stringify(payload); the body to send is
 * answered with the headers. webhook-id is the event id, as in a real delivery: `options.id`, else the
 * payload's `id`, else a random id, so two calls never share one by accident.
 */
export function generateTestHeaders(
  payload: unknown,
  secret: string,
  options: TestHeadersOptions = {},
): { body: string; headers: Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> } {
  const body = typeof payload === 'string' ? payload : JSON.stringify(payload);
  const id = options.id ?? idOf(payload) ?? `evt_test_${randomUUID().replaceAll('-', '')}`;
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  return {
    body,
    headers: {
      'webhook-id': id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signWebhook(id, timestamp, body, secret),
    },
  };
}
