// Schemas and route settings shared by the API's operations. Each operation's own request and
// response schemas live in its file; the resources' wire shapes in wire/schemas.ts.
import Type, { type TObject, type TSchema } from 'typebox';
import type { RateLimitName } from '../config.ts';
import type { Deps } from '../deps.ts';

const ErrorObject = Type.Object(
  {
    request_id: Type.String({ description: 'Quote it in support requests.' }),
    error: Type.String({ description: 'What went wrong, for a person.' }),
    code: Type.String({ description: 'Stable machine-readable error code.' }),
    details: Type.Optional(Type.Array(Type.String(), { description: 'Checklist for complex errors.' })),
  },
  { $id: 'Error', title: 'Error' },
);
export const ErrorSchema = ErrorObject as typeof ErrorObject & { $id: string };

const errorRef = Type.Ref('Error');

const RequestId = Type.String({ description: 'Unique id of this request; also in X-Request-Id.' });

/**
 * An answer's schema with request_id first. The app's preSerialization hook adds request_id to every
 * answer (app.ts), so handlers return the resource alone and schemas say it once, here.
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

/** Error statuses every authenticated API route can answer. */
export const AUTH_ERRORS = [400, 401, 403, 429];

/** The session id in a path. No maxLength: an id too long to exist is an unknown session (404). */
export const SessionParams = Type.Object({ sessionId: Type.String() });

/** Route config for a per-IP limit of `name` requests a minute (docs/api.md#rate-limits). */
export function rateLimitConfig(deps: Deps, name: RateLimitName) {
  return { rateLimit: { max: deps.config.rateLimits[name], timeWindow: 60_000 } };
}
