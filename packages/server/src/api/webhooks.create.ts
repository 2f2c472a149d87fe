// POST /webhooks — registers an endpoint and answers its whsec_ secret, once (DESIGN.md §11).
import Type from 'typebox';
import type { App } from '../app.ts';
import type { Deps } from '../deps.ts';
import { EVENT_TYPES } from '../events/types.ts';
import { checkWebhookEndpointUrl } from '../flows/urls.ts';
import { ids } from '../ids.ts';
import { insertWebhookEndpoint } from '../store/webhooks.ts';
import { authenticate, merchantOf } from './auth.ts';
import { ApiError } from './errors.ts';
import { AUTH_ERRORS, RequestId, rateLimitConfig, responses } from './schemas.ts';
import { endpointToWire, WebhookEndpointSchema } from './webhooks.list.ts';

export const MAX_ENDPOINTS_PER_MERCHANT = 16;

const CreateWebhookBody = Type.Object(
  {
    url: Type.String({ maxLength: 2048, description: 'Where events are POSTed.' }),
    events: Type.Array(Type.String({ enum: [...EVENT_TYPES, '*'] }), {
      minItems: 1,
      maxItems: 16,
      uniqueItems: true,
    }),
  },
  { additionalProperties: false },
);

const CreatedWebhook = Type.Intersect([
  Type.Object({ request_id: RequestId }),
  WebhookEndpointSchema,
  Type.Object({ secret: Type.String({ description: 'Signing secret (whsec_…); shown only now.' }) }),
]);

export function register(app: App, deps: Deps) {
  app.post(
    `${deps.config.apiPrefix}/webhooks`,
    {
      schema: {
        summary: 'Register a webhook endpoint',
        tags: ['webhooks'],
        body: CreateWebhookBody,
        response: responses(CreatedWebhook, [...AUTH_ERRORS, 409]),
      },
      config: rateLimitConfig(deps, 'WEBHOOKS_WRITE'),
      onRequest: authenticate(deps, 'secret'),
    },
    async (request) => {
      const merchant = merchantOf(request);
      const { url, events } = request.body;
      const problem = await checkWebhookEndpointUrl('url', url, deps.config.serviceEnv);
      if (problem) throw new ApiError('invalid_request', { message: problem, details: [problem] });
      const endpoint = {
        id: ids.webhookEndpoint(),
        merchantId: merchant.id,
        url,
        // '*' already means every type; keep the list as the merchant wrote it otherwise.
        events: events.includes('*') ? ['*'] : events,
        secret: ids.webhookSecret(),
        createdAt: deps.clock.now(),
      };
      const inserted = await insertWebhookEndpoint(
        deps.db.kysely,
        endpoint,
        MAX_ENDPOINTS_PER_MERCHANT,
        deps.db.dialect === 'postgres',
      );
      if (!inserted) throw new ApiError('webhook_limit_reached');
      return { request_id: request.id, ...endpointToWire(endpoint), secret: endpoint.secret };
    },
  );
}
