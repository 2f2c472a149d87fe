// DELETE /webhooks/{webhookId} — revokes an endpoint; nothing more is delivered to it.
import Type from 'typebox';
import type { App } from '../../app-type.ts';
import type { Deps } from '../../deps.ts';
import { deleteWebhookEndpoint } from '../../flows/webhooks.ts';
import { callerOf } from '../auth.ts';
import { AUTH_ERRORS, rateLimitConfig, responses } from '../schemas.ts';

const Deleted = Type.Object({ id: Type.String(), deleted: Type.Boolean() });

export function register(app: App, deps: Deps) {
  app.delete(
    '/webhooks/:webhookId',
    {
      schema: {
        summary: 'Revoke a webhook endpoint',
        tags: ['webhooks'],
        // No maxLength: an id too long to exist is an unknown endpoint (404); the router caps it at 100.
        params: Type.Object({ webhookId: Type.String() }),
        response: responses(Deleted, [...AUTH_ERRORS, 404]),
      },
      config: { auth: 'secret', ...rateLimitConfig(deps, 'WEBHOOKS_WRITE') },
    },
    async (request) => {
      const { webhookId } = request.params;
      await deleteWebhookEndpoint(deps, callerOf(request).merchant.id, webhookId);
      return { id: webhookId, deleted: true };
    },
  );
}
