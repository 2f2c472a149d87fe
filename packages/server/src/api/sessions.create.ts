// POST /sessions — creates a group session (SPEC.md §4.1).
import Type from 'typebox';
import type { App } from '../app.ts';
import { toIso } from '../clock.ts';
import type { Deps } from '../deps.ts';
import { formatRate } from '../domain/money.ts';
import { createSession, sessionUrl } from '../flows/sessions.ts';
import { authenticate } from './auth.ts';
import { AUTH_ERRORS, RequestId, rateLimitConfig, responses, Timestamp } from './schemas.ts';
import { CartSchema, CustomerSchema, GroupConfigSchema } from './sessions.schemas.ts';

const UrlField = (description: string) => Type.Optional(Type.String({ maxLength: 2048, description }));

export const CreateSessionBody = Type.Object(
  {
    cart: CartSchema,
    signature: Type.Optional(
      Type.String({ maxLength: 256, description: 'Cart HMAC, hex; or send X-Service-Signature.' }),
    ),
    group_config: Type.Optional(GroupConfigSchema),
    customer: Type.Optional(CustomerSchema),
    success_url: UrlField('HTTPS; the organizer is sent here once the group is funded.'),
    cancel_url: UrlField('HTTPS; the organizer is sent here after cancelling or abandoning.'),
    webhook_url: UrlField('Webhook target for this session’s events.'),
  },
  { additionalProperties: false },
);

export const CreatedSessionSchema = Type.Object({
  request_id: RequestId,
  session_id: Type.String(),
  session_url: Type.String({ description: 'The organizer’s hosted page, with its access token.' }),
  status: Type.String(),
  expires_at: Timestamp,
  merchant_fee_rate: Type.Number(),
  consumer_fee_rate: Type.Number(),
  group_access_token: Type.String({ description: 'Lets members view the session and join an equal group.' }),
});

export function register(app: App, deps: Deps) {
  app.post(
    `${deps.config.apiPrefix}/sessions`,
    {
      schema: {
        summary: 'Create a group session',
        tags: ['sessions'],
        headers: Type.Object({ 'x-service-signature': Type.Optional(Type.String({ maxLength: 256 })) }),
        body: CreateSessionBody,
        response: responses(CreatedSessionSchema, [...AUTH_ERRORS, 409]),
      },
      config: rateLimitConfig(deps, 'SESSIONS_CREATE'),
      onRequest: authenticate(deps, 'publishable-or-secret'),
    },
    async (request) => {
      const body = request.body;
      const auth = request.auth;
      if (!auth) throw new Error('unauthenticated');
      const { session, organizerToken } = await createSession(deps, auth, {
        cart: body.cart,
        signature: body.signature ?? request.headers['x-service-signature'],
        groupConfig: body.group_config,
        customer: body.customer,
        successUrl: body.success_url,
        cancelUrl: body.cancel_url,
        webhookUrl: body.webhook_url,
        origin: request.headers.origin,
      });
      return {
        request_id: request.id,
        session_id: session.id,
        session_url: sessionUrl(deps, session.id, organizerToken),
        status: session.status,
        expires_at: toIso(session.expiresAt),
        merchant_fee_rate: formatRate(session.merchantFeePpm),
        consumer_fee_rate: formatRate(session.consumerFeePpm),
        group_access_token: session.groupToken,
      };
    },
  );
}
