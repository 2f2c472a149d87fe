// Schemas and route settings shared by the API's operations. Each operation's own request and
// response schemas live in its file; the resources' wire shapes in wire/schemas.ts.
import type { preValidationHookHandler } from 'fastify';
import Type, { type TObject, type TSchema } from 'typebox';
import type { RateLimitName } from '../config.ts';
import type { Deps } from '../deps.ts';
import { ServiceError } from '../errors.ts';

const ErrorObject = Type.Object(
  {
    request_id: Type.String({ description: 'Quote it in support requests.' }),
    error: Type.String({ description: 'What went wrong, for a person.' }),
    code: Type.String({ description: 'Stable machine-readable error code.' }),
    details: Type.Optional(Type.Array(Type.String(), { description: 'Checklist for complex errors.' })),
    problems: Type.Optional(
      Type.Array(
        Type.Object({
          code: Type.String({ description: 'below_minimum or share_fixed.' }),
          member_index: Type.Integer({
            description: 'The member, by its place in the group (0: the organizer).',
          }),
          amount_cents: Type.Integer({
            description: 'below_minimum: the share with its fee; share_fixed: the share as paid.',
          }),
          minimum_cents: Type.Optional(
            Type.Integer({ description: 'below_minimum: the smallest card payment.' }),
          ),
        }),
        {
          description:
            'invalid_group only: the refusals that name a member, as data (the pages say them in their own language).',
        },
      ),
    ),
    decline_code: Type.Optional(
      Type.String({
        description:
          'card_declined only: generic_decline, insufficient_funds, expired_card, incorrect_cvc, lost_card or stolen_card.',
      }),
    ),
  },
  { $id: 'Error', title: 'Error' },
);
export const ErrorSchema = ErrorObject as typeof ErrorObject & { $id: string };

const errorRef = Type.Ref('Error');

const RequestId = Type.String({ description: 'Unique id of this request; also in X-Request-Id.' });

/**
 * An answer's schema with request_id first. The app's preSerialization hook adds request_id to every
 * answer (http/request-id.ts), so handlers return the resource alone and schemas say it once, here.
 */
export function withRequestId(ok: TObject): TObject {
  return Type.Object({ request_id: RequestId, ...ok.properties });
}

/** Response map of a route: its success body plus the Error shape for every error status it can answer. */
export function responses(ok: TObject, errorStatuses: number[]) {
  const map: Record<number, TSchema> = { 200: withRequestId(ok) };
  for (const status of errorStatuses) map[status] = errorRef;
  return map;
}

/**
 * Error statuses every authenticated API route can answer: the request's own refusals, and 500 (a
 * failure of ours) and 503 (the process shutting down, or the payment processor not answering:
 * upstream_error), which any route may meet and a client should retry with backoff.
 */
export const AUTH_ERRORS = [400, 401, 403, 429, 500, 503];

/** The session id in a path. No maxLength: an id too long to exist is an unknown session (404). */
export const SessionParams = Type.Object({ sessionId: Type.String() });

const NO_BODY_MESSAGE = 'This request takes no body; send none or {}.';

/**
 * The body of a POST that takes none (docs/api.md#conventions): none at all, an empty body or `{}`.
 * A missing body reaches the validator as null, so the schema allows null; an explicit JSON `null` is
 * refused by `refuseNullBody`, which http/no-body.ts adds to every route whose body is NoBody. `errorMessage` replaces the validator's wording (api/validation.ts).
 */
export const NoBody = Type.Unsafe<Record<string, never> | undefined>({
  type: ['object', 'null'],
  additionalProperties: false,
  description: 'No body: send none, or {}.',
  errorMessage: NO_BODY_MESSAGE,
  'x-no-body': true,
});

/** preValidation hook of every route whose body is NoBody (added by http/no-body.ts): a JSON `null` body is junk too. */
export const refuseNullBody: preValidationHookHandler = (request, _reply, done) => {
  if (request.body === null) {
    return done(
      new ServiceError('invalid_request', { message: NO_BODY_MESSAGE, details: [NO_BODY_MESSAGE] }),
    );
  }
  done();
};

/** Route config for a per-IP limit of `name` requests a minute (docs/api.md#rate-limits). */
export function rateLimitConfig(deps: Deps, name: RateLimitName) {
  return { rateLimit: { max: deps.config.rateLimits[name], timeWindow: 60_000 } };
}

/** A route's hooks of one kind as an array, whether it was given one, several or none. */
export const hooksOf = <H>(hooks: H | H[] | undefined): H[] =>
  hooks === undefined ? [] : ([hooks].flat() as H[]);

/** Whether a route's body schema is NoBody. */
export const takesNoBody = (schema: { body?: unknown } | undefined): boolean =>
  (schema?.body as { 'x-no-body'?: boolean } | undefined)?.['x-no-body'] === true;

/**
 * Query integers must be written in decimal digits. Schema coercion would read `0x10` as 16 or `1e2` as
 * 100 (it uses JavaScript's Number), and `5.0` or `5.` as 5; those spellings are refused before it sees
 * them. Plain bad values (`abc`, `-1`, `2.5`) are left to the schema, which names the rule they break.
 */
export function decimalQuery(names: string[]): preValidationHookHandler {
  return (request, _reply, done) => {
    const query = request.query as Record<string, unknown>;
    for (const name of names) {
      const value = query[name];
      if (Array.isArray(value))
        return done(new ServiceError('invalid_request', { message: `${name} must be given once` }));
      const odd =
        typeof value === 'string' && Number.isFinite(Number(value)) && !/^-?\d+(\.\d*[1-9]\d*)?$/.test(value);
      if (odd)
        return done(
          new ServiceError('invalid_request', { message: `${name} must be written in decimal digits` }),
        );
    }
    done();
  };
}
