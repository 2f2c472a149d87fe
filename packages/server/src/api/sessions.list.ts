// GET /sessions — the merchant's sessions, newest first, paged by a millisecond cursor (SPEC.md §4.2).
import type { preValidationHookHandler } from 'fastify';
import Type from 'typebox';
import type { App } from '../app.ts';
import { toIso } from '../clock.ts';
import type { Deps } from '../deps.ts';
import { listSessions } from '../store/sessions.ts';
import { authenticate, merchantOf } from './auth.ts';
import { ApiError } from './errors.ts';
import { AUTH_ERRORS, RequestId, rateLimitConfig, responses, Timestamp } from './schemas.ts';

const ListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 25 })),
    cursor: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: Number.MAX_SAFE_INTEGER,
        description: 'next_cursor of the previous page (creation time, milliseconds).',
      }),
    ),
  },
  { additionalProperties: false },
);

const ListItem = Type.Object({
  session_id: Type.String(),
  status: Type.String(),
  order_ref: Type.Union([Type.String(), Type.Null()]),
  total_cents: Type.Integer(),
  currency: Type.String(),
  created_at: Timestamp,
  expires_at: Timestamp,
});

const SessionList = Type.Object({
  request_id: RequestId,
  data: Type.Array(ListItem),
  has_more: Type.Boolean(),
  next_cursor: Type.Union([Type.Integer(), Type.Null()]),
});

/**
 * Query integers must be written in decimal digits. Schema coercion would read `0x10` as 16 or `1e2` as
 * 100 (it uses JavaScript's Number); those spellings are refused before it sees them. Plain bad values
 * (`abc`, `-1`, `2.5`) are left to the schema, which names the rule they break.
 */
function decimalQuery(names: string[]): preValidationHookHandler {
  return (request, _reply, done) => {
    const query = request.query as Record<string, unknown>;
    for (const name of names) {
      const value = query[name];
      if (Array.isArray(value))
        return done(new ApiError('invalid_request', { message: `${name} must be given once` }));
      const odd =
        typeof value === 'string' && Number.isFinite(Number(value)) && !/^-?\d+(\.\d*)?$/.test(value);
      if (odd)
        return done(
          new ApiError('invalid_request', { message: `${name} must be written in decimal digits` }),
        );
    }
    done();
  };
}

export function register(app: App, deps: Deps) {
  app.get(
    `${deps.config.apiPrefix}/sessions`,
    {
      schema: {
        summary: 'List sessions',
        tags: ['sessions'],
        querystring: ListQuery,
        response: responses(SessionList, AUTH_ERRORS),
      },
      config: rateLimitConfig(deps, 'SESSIONS_LIST'),
      onRequest: authenticate(deps, 'secret'),
      preValidation: decimalQuery(['limit', 'cursor']),
    },
    async (request) => {
      const limit = request.query.limit ?? 25;
      const rows = await listSessions(deps.db.kysely, merchantOf(request).id, limit, request.query.cursor);
      const page = rows.slice(0, limit);
      const hasMore = rows.length > limit;
      return {
        request_id: request.id,
        data: page.map((s) => ({
          session_id: s.id,
          status: s.status,
          order_ref: s.orderRef,
          total_cents: s.totalCents,
          currency: s.currency,
          created_at: toIso(s.createdAt),
          expires_at: toIso(s.expiresAt),
        })),
        has_more: hasMore,
        next_cursor: hasMore ? (page.at(-1)?.createdAt ?? null) : null,
      };
    },
  );
}
