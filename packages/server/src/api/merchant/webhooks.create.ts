// POST /webhooks — registers an endpoint and answers its whsec_ secret, once (docs/api.md#webhook-endpoints).
import Type from 'typebox';
import type { App } from '../../app-type.ts';
import type { Deps } from '../../deps.ts';
import { EVENT_TYPES } from '../../domain/event-types.ts';
import { createWebhookEndpoint, MAX_ENDPOINTS_PER_MERCHANT } from '../../flows/webhooks.ts';
import type { WebhookEndpoint } from '../../store/webhooks.ts';
import { endpointToWire } from '../../wire/mappers.ts';
import { WebhookEndpointSchema } from '../../wire/schemas.ts';
import { callerOf } from '../auth.ts';
import { withAnswer } from '../idempotency.ts';
import { AUTH_ERRORS, rateLimitConfig, responses } from '../schemas.ts';

const CreateWebhookBody = Type.Object(
  {
    url: Type.String({ maxLength: 2048, description: 'Where events are POSTed.' }),
    events: Type.Array(Type.String({ enum: [...EVENT_TYPES, '*'] }), {
      minItems: 1,
      maxItems: MAX_ENDPOINTS_PER_MERCHANT,
      uniqueItems: true,
      description: 'Event types to receive, or "*" for all.',
    }),
  },
  { additionalProperties: false },
);

const CreatedWebhook = Type.Object({
  ...WebhookEndpointSchema.properties,
  secret: Type.String({ description: 'Signing secret (whsec_…); shown only now.' }),
});

export function register(app: App, deps: Deps) {
  app.post(
    '/webhooks',
    {
      schema: {
        summary: 'Register a webhook endpoint',
        tags: ['webhooks'],
        body: CreateWebhookBody,
        response: responses(CreatedWebhook, [...AUTH_ERRORS, 409]),
      },
      config: { auth: 'secret', ...rateLimitConfig(deps, 'WEBHOOKS_WRITE') },
    },
    async (request) => {
      const input = { url: request.body.url, events: request.body.events as (typeof EVENT_TYPES)[number][] };
      return withAnswer(
        request,
        (endpoint: WebhookEndpoint) => Object.assign(endpointToWire(endpoint), { secret: endpoint.secret }),
        (answer) => createWebhookEndpoint(deps, callerOf(request).merchant.id, input, answer),
      );
    },
  );
}
