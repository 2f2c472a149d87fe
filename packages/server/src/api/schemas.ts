// Schemas shared by several routes. Each route file holds its own request and response schemas.
import Type, { type TSchema } from 'typebox';
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

/** Response map of a route: its success body plus the Error shape for every error status it can answer. */
export function responses<T extends TSchema>(ok: T, errorStatuses: number[]) {
  const map: Record<number, TSchema> = { 200: ok };
  for (const status of errorStatuses) map[status] = errorRef;
  return map;
}

/** Error statuses every authenticated API route can answer. */
export const AUTH_ERRORS = [400, 401, 403, 429];

export const RequestId = Type.String({ description: 'Unique id of this request; also in X-Request-Id.' });

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601, UTC.' });

/** Route config for a per-IP limit of `name` requests a minute (SPEC.md §8). */
export function rateLimitConfig(deps: Deps, name: RateLimitName) {
  return { rateLimit: { max: deps.config.rateLimits[name], timeWindow: 60_000 } };
}
