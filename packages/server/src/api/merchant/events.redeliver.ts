// POST /events/{eventId}/redeliver — a fresh delivery of the event to every target it has now
// (docs/api.md#events-api).
import type { App } from '../../app-type.ts';
import type { Deps } from '../../deps.ts';
import { redeliverEvent } from '../../flows/events.ts';
import { eventDetailToWire } from '../../wire/mappers.ts';
import { EventDetailSchema } from '../../wire/schemas.ts';
import { callerOf } from '../auth.ts';
import { withAnswer } from '../idempotency.ts';
import { AUTH_ERRORS, NoBody, rateLimitConfig, responses } from '../schemas.ts';
import { EventParams } from './events.get.ts';

export function register(app: App, deps: Deps) {
  app.post(
    '/events/:eventId/redeliver',
    {
      schema: {
        summary: 'Deliver an event again',
        tags: ['events'],
        params: EventParams,
        body: NoBody,
        response: responses(EventDetailSchema, [...AUTH_ERRORS, 404]),
      },
      config: { auth: 'secret', ...rateLimitConfig(deps, 'EVENTS_WRITE') },
    },
    async (request) =>
      withAnswer(request, eventDetailToWire, (answer) =>
        redeliverEvent(deps, callerOf(request).merchant.id, request.params.eventId, answer),
      ),
  );
}
