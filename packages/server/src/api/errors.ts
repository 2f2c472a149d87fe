// How the API answers a ServiceError: its code's status (STATUS_OF, errors.ts), and the wire shape
// `{ request_id, error, code, details? }` (docs/api.md#errors). Every error reply goes through sendError.
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { ErrorObject } from 'ajv';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { type ErrorCode, ServiceError, STATUS_OF } from '../errors.ts';
import { ids } from '../ids.ts';
import { describeErrors } from './validation.ts';

/**
 * Answers that mean "not yet" (docs/api.md#idempotency): the same request, sent again later, may go
 * another way. They are never kept against an Idempotency-Key, so the key sent again runs again.
 * (429 and every 5xx are not kept either, whatever their code: api/idempotency.ts.)
 */
const NOT_YET: ReadonlySet<ErrorCode> = new Set(['payment_in_progress', 'idempotency_in_progress']);

/**
 * Headers on every answer (docs/api.md#conventions): no MIME sniffing, no referrer (page and API URLs
 * may carry tokens), and nothing cached, since answers carry credentials (an organizer's session_url,
 * a webhook secret, share links). The hosted pages set their own caching for their static assets.
 */
export const BASE_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
} as const;

/** The JSON body of an error answer. */
function errorBody(requestId: string, error: ServiceError): string {
  const body: Record<string, unknown> = { request_id: requestId, error: error.message, code: error.code };
  if (error.declineCode !== undefined) body.decline_code = error.declineCode;
  if (error.details?.length) body.details = error.details;
  if (error.problems?.length)
    body.problems = error.problems.map((p) => ({
      code: p.code,
      member_index: p.memberIndex,
      amount_cents: p.amountCents,
      ...(p.minimumCents !== undefined && { minimum_cents: p.minimumCents }),
    }));
  return JSON.stringify(body);
}

/**
 * The challenge a 401 carries (RFC 9110 §11.6.1 requires one): bearer credentials (RFC 6750), an API key
 * in Authorization or a pay-page token in ?access=. A request that sent none gets no error code (RFC 6750
 * §3.1); one whose credential was refused is told `invalid_token` (docs/api.md#authentication-failures).
 */
const CHALLENGES: Partial<Record<ErrorCode, string>> = {
  missing_api_key: 'Bearer realm="Group Checkout"',
  invalid_api_key_format: 'Bearer realm="Group Checkout", error="invalid_token"',
  invalid_api_key: 'Bearer realm="Group Checkout", error="invalid_token"',
  invalid_access_token: 'Bearer realm="Group Checkout", error="invalid_token"',
};

export function sendError(request: FastifyRequest, reply: FastifyReply, error: ServiceError) {
  if (request.idempotency && NOT_YET.has(error.code)) request.idempotency.notYet = true;
  if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds));
  const challenge = CHALLENGES[error.code];
  if (challenge !== undefined) reply.header('www-authenticate', challenge);
  return reply
    .code(STATUS_OF[error.code])
    .type('application/json; charset=utf-8')
    .send(errorBody(request.id, error));
}

/** Fastify's own errors that a client causes, with the code we answer them with. */
const FASTIFY_CLIENT_ERRORS: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'invalid_json',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'invalid_request',
  FST_ERR_CTP_BODY_TOO_LARGE: 'body_too_large',
  FST_ERR_CTP_INVALID_TYPE: 'invalid_json',
};

/**
 * A body sent as application/json that the JSON parser refused, with the parser's reason: a syntax error
 * and where it is, or a key that could poison prototypes (which JSON allows and we refuse).
 */
export function invalidJsonBody(body: string): ServiceError {
  try {
    JSON.parse(body);
  } catch (error) {
    const reason = error instanceof SyntaxError ? `: ${error.message.replace(/\.$/, '')}` : '';
    return new ServiceError('invalid_json', { message: `The request body is not valid JSON${reason}.` });
  }
  return new ServiceError('invalid_json', {
    message:
      'The request body uses a key that is refused (__proto__, or constructor holding prototype); remove it.',
  });
}

/** A body whose bytes are not UTF-8, which JSON text must be. */
export const notUtf8 = (): ServiceError =>
  new ServiceError('invalid_json', { message: 'The request body is not valid JSON: it is not UTF-8 text.' });

/** Media types sent with a body we did not read, as the client wrote them, for the message. */
const mediaType = (contentType: string | undefined) =>
  contentType ? `Content-Type: ${JSON.stringify(contentType.slice(0, 100))}` : 'no Content-Type';

/**
 * Whatever a route or Fastify threw, as the ServiceError we answer with; anything unknown is
 * internal_error. `contentType` is the request's, to name it when the body was not sent as JSON.
 */
export function toServiceError(
  error: FastifyError & { validation?: ErrorObject[]; validationContext?: string },
  contentType?: string,
): ServiceError {
  if (error instanceof ServiceError) return error;
  if (error.validation) {
    const details = describeErrors(error.validation, error.validationContext);
    const code = error.validation.every((e) => e.instancePath.startsWith('/cart'))
      ? 'invalid_cart'
      : 'invalid_request';
    return new ServiceError(code, { message: details[0] ?? 'The request is not valid.', details });
  }
  // JSON.parse errors, prototype poisoning and the like arrive as SyntaxError with status 400.
  if (error instanceof SyntaxError)
    return new ServiceError('invalid_json', {
      message: `The request body is not valid JSON: ${error.message}`,
    });
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
    return new ServiceError('invalid_json', {
      message: `The request body must be JSON sent with Content-Type: application/json; this one came with ${mediaType(contentType)}.`,
    });
  const known = error.code ? FASTIFY_CLIENT_ERRORS[error.code] : undefined;
  if (known) return new ServiceError(known);
  if (error.statusCode === 429) return new ServiceError('rate_limited');
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    return new ServiceError('invalid_request', { message: error.message });
  }
  return new ServiceError('internal_error');
}

/** Errors the router raises before any hook runs (a broken %-escape, an over-long path parameter). */
export function routerError(error: FastifyError): ServiceError {
  if (error.code === 'FST_ERR_BAD_URL')
    return new ServiceError('invalid_request', {
      message: 'The request URL is not valid (a broken %-escape).',
    });
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH')
    return new ServiceError('invalid_request', { message: 'A path segment of the request URL is too long.' });
  return new ServiceError('internal_error');
}

/**
 * Requests Node's HTTP parser refuses (a malformed request line, headers over the limit, a request not
 * received in time) never become a Fastify request: answer them on the socket, in our shape.
 */
export function answerClientError(error: Error & { code?: string; rawPacket?: unknown }, socket: Socket) {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const serviceError =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? new ServiceError('headers_too_large')
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new ServiceError('request_timeout')
        : new ServiceError('invalid_request', { message: 'The request is not valid HTTP.' });
  // An answer to HEAD has no body, even when the request line after the method is broken (a raw byte
  // over 0x7f in the URL): a client reads whatever follows the headers as a protocol error.
  const raw = error.rawPacket;
  const head = Buffer.isBuffer(raw) && raw.subarray(0, 5).toString('latin1') === 'HEAD ';
  answerOnSocket(socket, serviceError, { cause: error, withoutBody: head });
}

/** Writes an error answer straight to a socket and closes it: for clients no request was made for. */
export function answerOnSocket(
  socket: Socket,
  serviceError: ServiceError,
  options: { cause?: Error; withoutBody?: boolean } = {},
) {
  const id = ids.request();
  const body = errorBody(id, serviceError);
  const status = STATUS_OF[serviceError.code];
  const retry =
    serviceError.retryAfterSeconds === undefined ? '' : `Retry-After: ${serviceError.retryAfterSeconds}\r\n`;
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${id}\r\n${retry}${Object.entries(BASE_HEADERS)
          .map(([name, value]) => `${name}: ${value}\r\n`)
          .join('')}Connection: close\r\n\r\n${options.withoutBody ? '' : body}`,
    );
  }
  if (options.cause) socket.destroy(options.cause);
  else socket.end();
}
