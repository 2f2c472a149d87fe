// A typed client of the merchant API (docs/api.md), on Node's own fetch. Every POST carries an
// Idempotency-Key, the same on each retry of one call, so a retry after a lost answer can never create
// a second session or cancel twice: the server replays the first answer (docs/api.md#idempotency).
import { randomUUID } from 'node:crypto';
import type {
  ClosedSession,
  CreatedSession,
  CreatedWebhookEndpoint,
  CreateSessionParams,
  CreateWebhookParams,
  DeletedWebhookEndpoint,
  EventWithDeliveries,
  ListEventsParams,
  ListParams,
  MerchantProfile,
  Page,
  RemindResult,
  RotatedWebhookSecret,
  Session,
  SessionListItem,
  WebhookEndpointList,
  WebhookEvent,
} from './types.ts';

export interface ClientOptions {
  /** The merchant API's address, its version included: for example `https://api.example.com/v1`. */
  baseUrl: string;
  /** Retries after a 429, a 503, an idempotency conflict or no answer; default 2 (so 3 tries at most). */
  maxRetries?: number;
  /** Per try, in milliseconds; default 30,000. */
  timeoutMs?: number;
  /** Another fetch (a proxy agent, a test double); default the global fetch. */
  fetch?: typeof fetch;
}

/** Per call. */
export interface RequestOptions {
  /** POST only: your own Idempotency-Key (1 to 255 visible ASCII characters); default a random UUID. */
  idempotencyKey?: string;
  /** Cancels the call, retries included. */
  signal?: AbortSignal;
  /** Overrides the client's timeoutMs for this call. */
  timeoutMs?: number;
}

/** The error body of the API (docs/api.md#errors). */
interface ErrorBody {
  request_id?: unknown;
  error?: unknown;
  code?: unknown;
  details?: unknown;
  decline_code?: unknown;
}

/**
 * A call that did not succeed. `code` is stable, for programs: the API's error code
 * (docs/api.md#error-codes), or `connection_error`, `timeout` or `unexpected_response` when no API answer
 * came. `message` is for people. Quote `request_id` to support.
 */
export class GroupCheckoutError extends Error {
  /** The HTTP status, or null when no answer came. */
  readonly status: number | null;
  readonly code: string;
  /** `req_…`, or null when no answer came. */
  readonly request_id: string | null;
  /** Every rule the request broke, when the API says more than the message. */
  readonly details?: string[];
  /** card_declined only: why the card was declined. */
  readonly decline_code?: string;

  constructor(
    init: {
      status: number | null;
      code: string;
      message: string;
      request_id: string | null;
      details?: string[];
      decline_code?: string;
    },
    options?: { cause?: unknown },
  ) {
    super(init.message, options);
    this.name = 'GroupCheckoutError';
    this.status = init.status;
    this.code = init.code;
    this.request_id = init.request_id;
    if (init.details) this.details = init.details;
    if (init.decline_code) this.decline_code = init.decline_code;
  }
}

const DEFAULT_MAX_RETRIES = 2;
const DEFAULT_TIMEOUT_MS = 30_000;
const BASE_DELAY_MS = 500;
const MAX_DELAY_MS = 8_000;
/** A Retry-After longer than this is not waited for: the error goes back to the caller instead. */
const MAX_RETRY_AFTER_MS = 60_000;

type Query = Record<string, string | number | undefined>;

interface Call {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  query?: Query;
  body?: unknown;
  options?: RequestOptions;
}

/** Whether another try may succeed where this status failed: rate limits, an unavailable processor, and
 *  a first try with the same key still running (docs/api.md#idempotency). */
function retryable(status: number, code: string | undefined): boolean {
  return status === 429 || status === 503 || (status === 409 && code === 'idempotency_in_progress');
}

/** Retry-After in milliseconds, when the answer gives it in seconds. */
function retryAfterMs(headers: Headers): number | undefined {
  const value = headers.get('retry-after');
  if (value === null || !/^\d+$/.test(value.trim())) return undefined;
  return Number(value.trim()) * 1000;
}

/** Exponential backoff with full jitter: spreads the retries of many clients failing at once. */
function backoffMs(retry: number): number {
  return Math.random() * Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** retry);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function pathId(value: unknown, what: string, method: string): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new TypeError(`${method} needs the ${what} as a non-empty string`);
  }
  return encodeURIComponent(value);
}

function errorFromAnswer(status: number, headers: Headers, text: string): GroupCheckoutError {
  let body: ErrorBody | undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed !== null && typeof parsed === 'object') body = parsed as ErrorBody;
  } catch {
    body = undefined;
  }
  const requestId =
    typeof body?.request_id === 'string' ? body.request_id : (headers.get('x-request-id') ?? null);
  if (typeof body?.code !== 'string' || typeof body.error !== 'string') {
    return new GroupCheckoutError({
      status,
      code: 'unexpected_response',
      message: `Group Checkout answered HTTP ${status} without an API error body: is baseUrl the merchant API (ending in /v1)?`,
      request_id: requestId,
    });
  }
  const details = Array.isArray(body.details)
    ? body.details.filter((d): d is string => typeof d === 'string')
    : undefined;
  return new GroupCheckoutError({
    status,
    code: body.code,
    message: body.error,
    request_id: requestId,
    ...(details ? { details } : {}),
    ...(typeof body.decline_code === 'string' ? { decline_code: body.decline_code } : {}),
  });
}

/**
 * The merchant API, with the secret key (`svc_sk_…`) of your server.
 *
 * ```ts
 * const groupCheckout = new GroupCheckout(process.env.GROUP_CHECKOUT_SECRET_KEY!, {
 *   baseUrl: 'https://api.example.com/v1',
 * });
 * const session = await groupCheckout.sessions.create({ cart, signature: signCart(cart, signingSecret) });
 * ```
 */
export class GroupCheckout {
  readonly sessions = {
    /** POST /sessions: a new session for a cart; send the organizer to `session_url`. */
    create: (params: CreateSessionParams, options?: RequestOptions): Promise<CreatedSession> =>
      this.#request({ method: 'POST', path: '/sessions', body: params, options }),
    /** GET /sessions: your sessions, newest first. */
    list: (params: ListParams = {}, options?: RequestOptions): Promise<Page<SessionListItem>> =>
      this.#request({ method: 'GET', path: '/sessions', query: { ...params }, options }),
    /** GET /sessions/{sessionId}: one session with its group, charges and refunds. */
    get: (sessionId: string, options?: RequestOptions): Promise<Session> =>
      this.#request({
        method: 'GET',
        path: `/sessions/${pathId(sessionId, 'session id (gs_…)', 'sessions.get')}`,
        options,
      }),
    /** POST /sessions/{sessionId}/cancel: cancels an open session and refunds its paid shares. */
    cancel: (sessionId: string, options?: RequestOptions): Promise<ClosedSession> =>
      this.#request({
        method: 'POST',
        path: `/sessions/${pathId(sessionId, 'session id (gs_…)', 'sessions.cancel')}/cancel`,
        options,
      }),
    /** POST /sessions/{sessionId}/remind: mails members whose share is still pending. */
    remind: (sessionId: string, options?: RequestOptions): Promise<RemindResult> =>
      this.#request({
        method: 'POST',
        path: `/sessions/${pathId(sessionId, 'session id (gs_…)', 'sessions.remind')}/remind`,
        options,
      }),
  };

  readonly events = {
    /** GET /events: events newest first, optionally of one type or one session. */
    list: (params: ListEventsParams = {}, options?: RequestOptions): Promise<Page<WebhookEvent, string>> =>
      this.#request({ method: 'GET', path: '/events', query: { ...params }, options }),
    /** GET /events/{eventId}: the event with each delivery and its attempts. */
    get: (eventId: string, options?: RequestOptions): Promise<EventWithDeliveries> =>
      this.#request({
        method: 'GET',
        path: `/events/${pathId(eventId, 'event id (evt_…)', 'events.get')}`,
        options,
      }),
    /** POST /events/{eventId}/redeliver: sends the event again, now, to every current receiver. */
    redeliver: (eventId: string, options?: RequestOptions): Promise<EventWithDeliveries> =>
      this.#request({
        method: 'POST',
        path: `/events/${pathId(eventId, 'event id (evt_…)', 'events.redeliver')}/redeliver`,
        options,
      }),
  };

  readonly webhooks = {
    /** GET /webhooks: every endpoint, oldest first, without secrets. */
    list: (options?: RequestOptions): Promise<WebhookEndpointList> =>
      this.#request({ method: 'GET', path: '/webhooks', options }),
    /** POST /webhooks: registers an endpoint; its `secret` is shown in this answer only. */
    create: (params: CreateWebhookParams, options?: RequestOptions): Promise<CreatedWebhookEndpoint> =>
      this.#request({ method: 'POST', path: '/webhooks', body: params, options }),
    /** DELETE /webhooks/{webhookId}: nothing more is sent to the endpoint. */
    delete: (webhookId: string, options?: RequestOptions): Promise<DeletedWebhookEndpoint> =>
      this.#request({
        method: 'DELETE',
        path: `/webhooks/${pathId(webhookId, 'webhook endpoint id (we_…)', 'webhooks.delete')}`,
        options,
      }),
    /** POST /webhooks/{webhookId}/rotate_secret: a new secret; the old one also signs for 24 hours. */
    rotateSecret: (webhookId: string, options?: RequestOptions): Promise<RotatedWebhookSecret> =>
      this.#request({
        method: 'POST',
        path: `/webhooks/${pathId(webhookId, 'webhook endpoint id (we_…)', 'webhooks.rotateSecret')}/rotate_secret`,
        options,
      }),
  };

  readonly merchants = {
    /** GET /merchants/me: the merchant the key belongs to. */
    me: (options?: RequestOptions): Promise<MerchantProfile> =>
      this.#request({ method: 'GET', path: '/merchants/me', options }),
  };

  readonly #secretKey: string;
  readonly #baseUrl: string;
  readonly #maxRetries: number;
  readonly #timeoutMs: number;
  readonly #fetch: typeof fetch;

  constructor(secretKey: string, options: ClientOptions) {
    if (typeof secretKey !== 'string' || secretKey.trim() === '') {
      throw new TypeError('GroupCheckout needs your secret API key (svc_sk_…) as its first argument');
    }
    if (secretKey.startsWith('svc_sig_')) {
      throw new TypeError(
        'This is the cart signing secret (svc_sig_…), which signs carts and is never an API key: pass the secret API key (svc_sk_…)',
      );
    }
    if (!options || typeof options.baseUrl !== 'string' || !/^https?:\/\//.test(options.baseUrl)) {
      throw new TypeError(
        'GroupCheckout needs { baseUrl }: the merchant API address with its version, such as https://api.example.com/v1',
      );
    }
    const maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
    if (!Number.isInteger(maxRetries) || maxRetries < 0) {
      throw new TypeError(`maxRetries must be a whole number, 0 or more (got ${maxRetries})`);
    }
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!(timeoutMs > 0)) throw new TypeError(`timeoutMs must be more than 0 (got ${timeoutMs})`);
    const fetchImpl = options.fetch ?? globalThis.fetch;
    if (typeof fetchImpl !== 'function') {
      throw new TypeError('No fetch: use Node 20 or later, or pass { fetch }');
    }
    this.#secretKey = secretKey;
    this.#baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#maxRetries = maxRetries;
    this.#timeoutMs = timeoutMs;
    this.#fetch = fetchImpl;
  }

  async #request<T>(call: Call): Promise<T> {
    const { method, options = {} } = call;
    const url = new URL(this.#baseUrl + call.path);
    for (const [name, value] of Object.entries(call.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.#secretKey}`,
      accept: 'application/json',
    };
    // One key for the call, not one per try: that is what lets the server recognise a retry.
    if (method === 'POST') headers['idempotency-key'] = options.idempotencyKey ?? randomUUID();
    let body: string | undefined;
    if (call.body !== undefined) {
      body = JSON.stringify(call.body);
      headers['content-type'] = 'application/json';
    }
    const timeoutMs = options.timeoutMs ?? this.#timeoutMs;

    for (let retry = 0; ; retry++) {
      const last = retry >= this.#maxRetries;
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
      let response: Response;
      let text: string;
      try {
        response = await this.#fetch(url, { method, headers, body, signal });
        text = await response.text();
      } catch (cause) {
        if (options.signal?.aborted) throw options.signal.reason;
        // Every call may be tried again after no answer: GET and DELETE change nothing twice, and a POST
        // carries its Idempotency-Key, so the server runs it at most once.
        if (!last) {
          await sleep(backoffMs(retry), options.signal);
          continue;
        }
        const timedOut = timeout.aborted;
        throw new GroupCheckoutError(
          {
            status: null,
            code: timedOut ? 'timeout' : 'connection_error',
            message: timedOut
              ? `Group Checkout did not answer ${method} ${call.path} within ${timeoutMs} ms (${retry + 1} tries)`
              : `Could not reach Group Checkout at ${this.#baseUrl} (${retry + 1} tries): ${(cause as Error)?.message ?? cause}`,
            request_id: null,
          },
          { cause },
        );
      }
      if (response.ok) {
        try {
          return JSON.parse(text) as T;
        } catch (cause) {
          throw new GroupCheckoutError(
            {
              status: response.status,
              code: 'unexpected_response',
              message: `Group Checkout answered HTTP ${response.status} with a body that is not JSON: is baseUrl the merchant API (ending in /v1)?`,
              request_id: response.headers.get('x-request-id'),
            },
            { cause },
          );
        }
      }
      const error = errorFromAnswer(response.status, response.headers, text);
      if (last || !retryable(response.status, error.code)) throw error;
      const after = retryAfterMs(response.headers);
      if (after !== undefined && after > MAX_RETRY_AFTER_MS) throw error;
      await sleep(after ?? backoffMs(retry), options.signal);
    }
  }
}
