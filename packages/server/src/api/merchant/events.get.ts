// GET /events/{eventId} — one event with its deliveries and every attempt (docs/api.md#events-api).
import Type from 'typebox';
import type { App } from '../../app-type.ts';
import type { Deps } from '../../deps.ts';
import { getEventDetail } from '../../flows/events.ts';
import { eventDetailToWire } from '../../wire/mappers.ts';
import { EventDetailSchema } from '../../wire/schemas.ts';
import { callerOf } from '../auth.ts';
import { AUTH_ERRORS, rateLimitConfig, responses } from '../schemas.ts';

export const EventParams = Type.Object({ eventId: Type.String() });

export function register(app: App, deps: Deps) {
  app.get(
    '/events/:eventId',
    {
      schema: {
        summary: 'Get an event with its deliveries',
        tags: ['events'],
        params: EventParams,
        response: responses(EventDetailSchema, [...AUTH_ERRORS, 404]),
      },
      config: { auth: 'secret', ...rateLimitConfig(deps, 'EVENTS_READ') },
    },
    async (request) =>
      eventDetailToWire(await getEventDetail(deps, callerOf(request).merchant.id, request.params.eventId)),
  );
}
