// GET /webhooks — the merchant's registered endpoints (secrets are shown only on creation).
import Type from 'typebox';
import type { App } from '../../app-type.ts';
import type { Deps } from '../../deps.ts';
import { listMerchantWebhookEndpoints } from '../../flows/webhooks.ts';
import { endpointToWire } from '../../wire/mappers.ts';
import { WebhookEndpointSchema } from '../../wire/schemas.ts';
import { callerOf } from '../auth.ts';
import { AUTH_ERRORS, rateLimitConfig, responses } from '../schemas.ts';

export function register(app: App, deps: Deps) {
  app.get(
    '/webhooks',
    {
      schema: {
        summary: 'List webhook endpoints',
        tags: ['webhooks'],
        response: responses(Type.Object({ data: Type.Array(WebhookEndpointSchema) }), AUTH_ERRORS),
      },
      config: { auth: 'secret', ...rateLimitConfig(deps, 'WEBHOOKS_READ') },
    },
    async (request) => {
      const endpoints = await listMerchantWebhookEndpoints(deps, callerOf(request).merchant.id);
      return { data: endpoints.map(endpointToWire) };
    },
  );
}
