// GET /events — the merchant's events, newest first, paged by the last event of the previous page
// (docs/api.md#events-api).
import Type from 'typebox';
import type { App } from '../../app-type.ts';
import type { Deps } from '../../deps.ts';
import { EVENT_TYPES } from '../../domain/event-types.ts';
import { listMerchantEvents } from '../../flows/events.ts';
import { EventSchema } from '../../wire/schemas.ts';
import { callerOf } from '../auth.ts';
import { AUTH_ERRORS, decimalQuery, rateLimitConfig, responses } from '../schemas.ts';

const DEFAULT_PAGE_SIZE = 25;
const MAX_PAGE_SIZE = 100;

const ListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE })),
    cursor: Type.Optional(
      Type.String({
        pattern: '^evt_[0-9A-Za-z]{1,64}$',
        description: 'next_cursor of the previous page (the id of its last event).',
      }),
    ),
    type: Type.Optional(Type.String({ enum: [...EVENT_TYPES], description: 'Only events of this type.' })),
    session_id: Type.Optional(
      Type.String({
        pattern: '^gs_[0-9A-Za-z]{1,64}$',
        description: 'The id of one session (gs_…), to list only its events.',
      }),
    ),
  },
  { additionalProperties: false },
);

const EventList = Type.Object({
  data: Type.Array(EventSchema),
  has_more: Type.Boolean(),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});

export function register(app: App, deps: Deps) {
  app.get(
    '/events',
    {
      schema: {
        summary: 'List events',
        tags: ['events'],
        querystring: ListQuery,
        response: responses(EventList, AUTH_ERRORS),
      },
      config: { auth: 'secret', ...rateLimitConfig(deps, 'EVENTS_READ') },
      preValidation: decimalQuery(['limit']),
    },
    async (request) => {
      const { merchant } = callerOf(request);
      const { query } = request;
      const { page, hasMore, nextCursor } = await listMerchantEvents(
        deps,
        merchant.id,
        query.limit ?? DEFAULT_PAGE_SIZE,
        { type: query.type, sessionId: query.session_id, cursor: query.cursor },
      );
      return { data: page, has_more: hasMore, next_cursor: nextCursor };
    },
  );
}
