// The one error type every layer throws, with the closed list of codes it may carry (see
// docs/api.md#errors), and the one status each code is answered with over HTTP (STATUS_OF), which the API
// (api/errors.ts, with its wire shape) and the dashboard's pages both read, so that they cannot disagree.
// Jobs branch on results rather than on errors.

/** Every error code, with the message a client sees unless the thrower gives a more precise one. */
/** @internal Exported for the fuzz suite, which checks every answered code is one of these. */
export const ERROR_MESSAGES = {
  invalid_request: 'The request is not valid.',
  invalid_json: 'The request body is not valid JSON.',
  invalid_cart: 'The cart is not valid.',
  currency_not_supported: 'Cards cannot be charged in this currency here.',
  invalid_signature: 'The cart signature does not match the cart.',
  invalid_group: 'The group is not valid.',
  invalid_idempotency_key: 'Idempotency-Key must be 1 to 255 visible ASCII characters.',
  invalid_origin:
    'The Origin header is not a web origin (scheme://host[:port], https; http only on localhost in the sandbox): a browser session is created from a web page.',
  origin_not_allowed:
    'This origin is not registered for the merchant: register it with `group-checkout merchant update --merchant ID --allowed-origin ORIGIN`.',
  not_allowed_with_publishable_key: 'This field cannot be set with a publishable key.',
  missing_api_key: 'Missing API key: send Authorization: Bearer <API_KEY>.',
  invalid_api_key_format:
    'Invalid API key format: send Authorization: Bearer followed by an API key, svc_pk_test_…, svc_pk_live_…, ' +
    'svc_sk_test_… or svc_sk_live_… (the cart signing secret, svc_sig_…, is not an API key).',
  invalid_api_key: 'Invalid API key.',
  invalid_access_token: 'The access token is missing or not valid for this session.',
  card_declined: 'The card was declined.',
  secret_key_from_browser: 'A secret key must not be used from a browser (the request has an Origin header).',
  key_environment_mismatch:
    'This key is for the other environment: test keys (svc_…_test_…) work only in the sandbox, ' +
    'live keys (svc_…_live_…) only in production.',
  merchant_mismatch: 'X-Merchant-ID does not match the API key.',
  ip_blocked: 'Requests from this IP address are blocked.',
  secret_key_required: 'This route requires a secret API key.',
  headless_not_enabled:
    'Sessions without a cart signature need the headless API, which is not enabled for this merchant: it is ' +
    'enabled after a technical review, when the operator creates the merchant with `group-checkout merchant ' +
    'create --headless`. Until then, sign the cart: send signature (or X-Service-Signature), the HMAC of the ' +
    'cart made with your cart signing secret (svc_sig_…).',
  organizer_only: 'Only the organizer may do this.',
  route_not_found: 'No such route.',
  session_not_found: 'No such session.',
  share_not_found: 'No such share.',
  webhook_not_found: 'No such webhook endpoint.',
  event_not_found: 'No such event.',
  dispute_not_found: 'No such dispute.',
  dashboard_user_not_found: 'No such dashboard user.',
  authentication_not_found:
    'No payment is waiting on an authentication with this client_secret (it was completed, failed or abandoned).',
  invalid_webhook_signature:
    "The webhook's Stripe-Signature does not verify with STRIPE_WEBHOOK_SECRET, or its timestamp is more than 300 seconds old.",
  dispute_not_open: 'The dispute is already closed.',
  dashboard_user_exists: 'This address already has access to the dashboard.',
  last_owner: 'The last owner cannot be removed: make someone else an owner first.',
  session_not_pending:
    'The session is not pending (it is funded, cancelled or expired), so it can no longer be changed or paid.',
  share_not_pending: 'The share is already paid.',
  amount_changed: 'The amount of this share changed since it was shown; nothing was charged.',
  payment_in_progress:
    'A payment for this share is already being processed; load the share again shortly to see how it ended (at most a few minutes).',
  group_full: 'The group is full.',
  reminder_limit_reached: 'This session has sent its 3 rounds of reminders; no more are sent.',
  group_not_joinable: 'Members can join only a group split equally.',
  idempotency_key_reused: 'This Idempotency-Key was used with a different request.',
  idempotency_in_progress: 'A request with this Idempotency-Key is still in progress; retry shortly.',
  request_timeout: 'The request was not received in time.',
  body_too_large: 'The request body is too large.',
  headers_too_large: 'The request headers are too large.',
  webhook_limit_reached: 'A merchant may register at most 16 webhook endpoints.',
  rate_limited: 'Too many requests; retry after the time in Retry-After.',
  too_many_failed_authentications: 'Too many failed authentications; retry after the time in Retry-After.',
  internal_error: 'Something went wrong on our side; retry, and quote the request_id if it persists.',
  upstream_error: 'The payment processor did not answer; retry with backoff.',
} as const satisfies Record<string, string>;

export type ErrorCode = keyof typeof ERROR_MESSAGES;

/**
 * The HTTP status of each code, wherever it is answered: the API's JSON errors and the dashboard's pages.
 * Here rather than in api/ so that the dashboard, which may not import api/, reads the same table.
 */
export const STATUS_OF: Readonly<Record<ErrorCode, number>> = {
  invalid_request: 400,
  invalid_json: 400,
  invalid_cart: 400,
  currency_not_supported: 400,
  invalid_signature: 400,
  invalid_group: 400,
  invalid_idempotency_key: 400,
  invalid_origin: 400,
  not_allowed_with_publishable_key: 400,
  invalid_webhook_signature: 400,
  webhook_limit_reached: 400,
  missing_api_key: 401,
  invalid_api_key_format: 401,
  invalid_api_key: 401,
  invalid_access_token: 401,
  card_declined: 402,
  secret_key_from_browser: 403,
  key_environment_mismatch: 403,
  merchant_mismatch: 403,
  ip_blocked: 403,
  secret_key_required: 403,
  headless_not_enabled: 403,
  origin_not_allowed: 403,
  organizer_only: 403,
  route_not_found: 404,
  session_not_found: 404,
  share_not_found: 404,
  webhook_not_found: 404,
  event_not_found: 404,
  dispute_not_found: 404,
  dashboard_user_not_found: 404,
  authentication_not_found: 404,
  request_timeout: 408,
  session_not_pending: 409,
  share_not_pending: 409,
  amount_changed: 409,
  payment_in_progress: 409,
  group_full: 409,
  group_not_joinable: 409,
  reminder_limit_reached: 409,
  dispute_not_open: 409,
  dashboard_user_exists: 409,
  last_owner: 409,
  idempotency_key_reused: 409,
  idempotency_in_progress: 409,
  body_too_large: 413,
  rate_limited: 429,
  too_many_failed_authentications: 429,
  headers_too_large: 431,
  internal_error: 500,
  upstream_error: 503,
};

export interface ServiceErrorOptions {
  /** A message more precise than the code's default. */
  message?: string;
  /** A checklist for errors with several causes (an invalid cart signature, every broken cart rule). */
  details?: string[];
  /** When the caller may try again, for limits. */
  retryAfterSeconds?: number;
  /** Why a card was declined (card_declined only): generic_decline, insufficient_funds, … */
  declineCode?: string;
  /** invalid_group: the refusals that name a member, as data a page can say in its own language. */
  problems?: Problem[];
}

/**
 * A refusal of a group's set-up that names a member (docs/api.md#errors): their share is below the
 * smallest card payment (`amountCents` with its fee, `minimumCents`), or they have paid and their share
 * (`amountCents`) cannot change.
 */
export interface Problem {
  code: 'below_minimum' | 'share_fixed';
  memberIndex: number;
  amountCents: number;
  minimumCents?: number;
}

export class ServiceError extends Error {
  readonly code: ErrorCode;
  readonly details: string[] | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly declineCode: string | undefined;
  readonly problems: Problem[] | undefined;

  constructor(code: ErrorCode, options: ServiceErrorOptions = {}) {
    super(options.message ?? ERROR_MESSAGES[code]);
    this.name = 'ServiceError';
    this.code = code;
    this.details = options.details;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.declineCode = options.declineCode;
    this.problems = options.problems;
  }
}
