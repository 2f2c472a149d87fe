// GET /sessions — the merchant's sessions, newest first, paged by a millisecond cursor (docs/api.md#list-sessions).
import Type from 'typebox';
import type { App } from '../../app-type.ts';
import type { Deps } from '../../deps.ts';
import { listMerchantSessions } from '../../flows/sessions.ts';
import { sessionListItemToWire } from '../../wire/mappers.ts';
import { SessionListItemSchema } from '../../wire/schemas.ts';
import { callerOf } from '../auth.ts';
import { AUTH_ERRORS, decimalQuery, rateLimitConfig, responses } from '../schemas.ts';

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
      config: { auth: 'secret', ...rateLimitConfig(deps, 'SESSIONS_LIST') },
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
