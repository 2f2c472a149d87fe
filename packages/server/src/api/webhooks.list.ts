// GET /webhooks — the merchant's registered endpoints (secrets are shown only on creation).
import Type from 'typebox';
import type { App } from '../app.ts';
import { toIso } from '../clock.ts';
import type { Deps } from '../deps.ts';
import { listWebhookEndpoints, type WebhookEndpoint } from '../store/webhooks.ts';
import { authenticate, merchantOf } from './auth.ts';
import { AUTH_ERRORS, RequestId, rateLimitConfig, responses, Timestamp } from './schemas.ts';

export const WebhookEndpointSchema = Type.Object({
  id: Type.String({ description: 'Endpoint id (we_…).' }),
  url: Type.String({ format: 'uri' }),
  events: Type.Array(Type.String()),
  created_at: Timestamp,
});

export const endpointToWire = (e: WebhookEndpoint) => ({
  id: e.id,
  url: e.url,
  events: e.events,
  created_at: toIso(e.createdAt),
});

export function register(app: App, deps: Deps) {
  app.get(
    `${deps.config.apiPrefix}/webhooks`,
    {
      schema: {
        summary: 'List webhook endpoints',
        tags: ['webhooks'],
        response: responses(
          Type.Object({ request_id: RequestId, data: Type.Array(WebhookEndpointSchema) }),
          AUTH_ERRORS,
        ),
      },
      config: rateLimitConfig(deps, 'WEBHOOKS_READ'),
      onRequest: authenticate(deps, 'secret'),
    },
    async (request) => {
      const endpoints = await listWebhookEndpoints(deps.db.kysely, merchantOf(request).id);
      return { request_id: request.id, data: endpoints.map(endpointToWire) };
    },
  );
}
