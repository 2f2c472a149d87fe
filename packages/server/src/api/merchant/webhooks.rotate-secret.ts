// POST /webhooks/{webhookId}/rotate_secret — a new secret for the endpoint, shown once; the old one signs
// too for 24 hours (docs/api.md#rotating-an-endpoint-secret).
import Type from 'typebox';
import type { App } from '../../app-type.ts';
import type { Deps } from '../../deps.ts';
import { rotateWebhookSecret } from '../../flows/webhooks.ts';
import type { WebhookEndpoint } from '../../store/webhooks.ts';
import { callerOf } from '../auth.ts';
import { withAnswer } from '../idempotency.ts';
import { AUTH_ERRORS, NoBody, rateLimitConfig, responses } from '../schemas.ts';

const RotatedSecret = Type.Object({
  id: Type.String({ description: 'Endpoint id (we_…).' }),
  secret: Type.String({ description: 'The new signing secret (whsec_…); shown only now.' }),
});

export function register(app: App, deps: Deps) {
  app.post(
    '/webhooks/:webhookId/rotate_secret',
    {
      schema: {
        summary: 'Rotate a webhook endpoint’s secret',
        tags: ['webhooks'],
        params: Type.Object({ webhookId: Type.String() }),
        body: NoBody,
        response: responses(RotatedSecret, [...AUTH_ERRORS, 404]),
      },
      config: { auth: 'secret', ...rateLimitConfig(deps, 'WEBHOOKS_WRITE') },
    },
    async (request) =>
      withAnswer(
        request,
        (endpoint: WebhookEndpoint) => ({ id: endpoint.id, secret: endpoint.secret }),
        (answer) =>
          rotateWebhookSecret(deps, callerOf(request).merchant.id, request.params.webhookId, answer),
      ),
  );
}
