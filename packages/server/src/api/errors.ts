// One error type with a closed list of codes (STYLE.md habit 3). Each code has one status and one
// default message; handlers throw `new ApiError('session_not_found')`, the error handler in app.ts
// turns it into `{ request_id, error, code, details? }`.

export const ERRORS = {
  // 400
  invalid_request: [400, 'The request is not valid.'],
  invalid_json: [400, 'The request body must be JSON (Content-Type: application/json).'],
  invalid_cart: [400, 'The cart is not valid.'],
  invalid_signature: [400, 'The cart signature does not match the cart.'],
  invalid_group: [400, 'The group is not valid.'],
  invalid_idempotency_key: [400, 'Idempotency-Key must be 1 to 255 visible ASCII characters.'],
  // 401
  missing_api_key: [401, 'Missing API key: send Authorization: Bearer <API_KEY>.'],
  invalid_api_key_format: [401, 'Invalid API key format.'],
  invalid_api_key: [401, 'Invalid API key.'],
  invalid_access_token: [401, 'The access token is missing or not valid for this session.'],
  // 402
  card_declined: [402, 'The card was declined.'],
  // 403
  secret_key_from_browser: [
    403,
    'A secret key must not be used from a browser (the request has an Origin header).',
  ],
  key_environment_mismatch: [403, 'The key/environment mismatch: this key belongs to the other environment.'],
  merchant_mismatch: [403, 'X-Merchant-ID does not match the API key.'],
  ip_blocked: [403, 'Requests from this IP address are blocked.'],
  secret_key_required: [403, 'This route requires a secret API key.'],
  headless_not_enabled: [
    403,
    'Sessions without a cart signature need the headless API, which is not enabled for this merchant.',
  ],
  organizer_only: [403, 'Only the organizer may do this.'],
  // 404
  route_not_found: [404, 'No such route.'],
  session_not_found: [404, 'No such session.'],
  share_not_found: [404, 'No such share.'],
  webhook_not_found: [404, 'No such webhook endpoint.'],
  // 409
  session_not_pending: [409, 'The session is not open.'],
  share_not_pending: [409, 'The share is already paid.'],
  group_full: [409, 'The group is full.'],
  group_not_joinable: [409, 'Members can join only a group split equally.'],
  idempotency_key_reused: [409, 'This Idempotency-Key was used with a different request.'],
  idempotency_in_progress: [409, 'A request with this Idempotency-Key is still in progress; retry shortly.'],
  // 408, 413, 429, 431
  request_timeout: [408, 'The request was not received in time.'],
  body_too_large: [413, 'The request body is too large.'],
  headers_too_large: [431, 'The request headers are too large.'],
  webhook_limit_reached: [400, 'A merchant may register at most 16 webhook endpoints.'],
  rate_limited: [429, 'Too many requests; retry after the time in Retry-After.'],
  too_many_failed_authentications: [
    429,
    'Too many failed authentications; retry after the time in Retry-After.',
  ],
  // 5xx
  internal_error: [500, 'Something went wrong on our side; retry, and quote the request_id if it persists.'],
  upstream_error: [503, 'The payment processor did not answer; retry with backoff.'],
} as const satisfies Record<string, readonly [number, string]>;

export type ErrorCode = keyof typeof ERRORS;

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly statusCode: number;
  readonly details: string[] | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(
    code: ErrorCode,
    options: { message?: string; details?: string[]; headers?: Record<string, string> } = {},
  ) {
    const [status, message] = ERRORS[code];
    super(options.message ?? message);
    this.code = code;
    this.statusCode = status;
    this.details = options.details;
    this.headers = options.headers;
  }
}
