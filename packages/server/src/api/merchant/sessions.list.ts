// GET /sessions — the merchant's sessions, newest first, paged by a millisecond cursor (docs/api.md#list-sessions).
import type { preValidationHookHandler } from 'fastify';
import Type from 'typebox';
import type { App } from '../../app.ts';
import type { Deps } from '../../deps.ts';
import { ServiceError } from '../../errors.ts';
import { listMerchantSessions } from '../../flows/sessions.ts';
import { sessionListItemToWire } from '../../wire/mappers.ts';
import { SessionListItemSchema } from '../../wire/schemas.ts';
import { callerOf } from '../auth.ts';
import { AUTH_ERRORS, rateLimitConfig, responses } from '../schemas.ts';

const DEFAULT_PAGE_SIZE = 25;
const MAX_PAGE_SIZE = 100;

const ListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE })),
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

const SessionList = Type.Object({
  data: Type.Array(SessionListItemSchema),
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
        return done(new ServiceError('invalid_request', { message: `${name} must be given once` }));
      const odd =
        typeof value === 'string' && Number.isFinite(Number(value)) && !/^-?\d+(\.\d*)?$/.test(value);
      if (odd)
        return done(
          new ServiceError('invalid_request', { message: `${name} must be written in decimal digits` }),
        );
    }
    done();
  };
}

export function register(app: App, deps: Deps) {
  app.get(
    '/sessions',
    {
      schema: {
        summary: 'List sessions',
        tags: ['sessions'],
        querystring: ListQuery,
        response: responses(SessionList, AUTH_ERRORS),
      },
      config: { ...rateLimitConfig(deps, 'SESSIONS_LIST'), auth: 'secret' },
      preValidation: decimalQuery(['limit', 'cursor']),
    },
    async (request) => {
      const { merchant } = callerOf(request);
      const limit = request.query.limit ?? DEFAULT_PAGE_SIZE;
      const { page, hasMore } = await listMerchantSessions(deps, merchant.id, limit, request.query.cursor);
      return {
        data: page.map(sessionListItemToWire),
        has_more: hasMore,
        next_cursor: hasMore ? (page.at(-1)?.createdAt ?? null) : null,
      };
    },
  );
}
