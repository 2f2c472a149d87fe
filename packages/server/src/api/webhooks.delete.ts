// DELETE /webhooks/{webhookId} — revokes an endpoint; nothing more is delivered to it.
import Type from 'typebox';
import type { App } from '../app.ts';
import type { Deps } from '../deps.ts';
import { revokeWebhookEndpoint } from '../store/webhooks.ts';
import { authenticate, merchantOf } from './auth.ts';
import { ApiError } from './errors.ts';
import { AUTH_ERRORS, RequestId, rateLimitConfig, responses } from './schemas.ts';

const Deleted = Type.Object({ request_id: RequestId, id: Type.String(), deleted: Type.Boolean() });

export function register(app: App, deps: Deps) {
  app.delete(
    `${deps.config.apiPrefix}/webhooks/:webhookId`,
    {
      schema: {
        summary: 'Revoke a webhook endpoint',
        tags: ['webhooks'],
        // No maxLength: an id too long to exist is an unknown endpoint (404); the router caps it at 100.
        params: Type.Object({ webhookId: Type.String() }),
        response: responses(Deleted, [...AUTH_ERRORS, 404]),
      },
      config: rateLimitConfig(deps, 'WEBHOOKS_WRITE'),
      onRequest: authenticate(deps, 'secret'),
    },
    async (request) => {
      const { webhookId } = request.params;
      const revoked = await revokeWebhookEndpoint(
        deps.db.kysely,
        merchantOf(request).id,
        webhookId,
        deps.clock.now(),
      );
      if (!revoked) throw new ApiError('webhook_not_found');
      return { request_id: request.id, id: webhookId, deleted: true };
    },
  );
}
