// POST /sessions — creates a group session (docs/api.md#create-a-session).
import Type from 'typebox';
import type { App } from '../../app-type.ts';
import type { Deps } from '../../deps.ts';
import { type CreatedSession, createSession } from '../../flows/sessions.ts';
import { LOCALES, type LocaleSetting } from '../../i18n/locales.ts';
import { createdSessionToWire, payLinks } from '../../wire/mappers.ts';
import { CartSchema, CreatedSessionSchema, CustomerSchema, GroupConfigSchema } from '../../wire/schemas.ts';
import { callerOf } from '../auth.ts';
import { withAnswer } from '../idempotency.ts';
import { AUTH_ERRORS, rateLimitConfig, responses } from '../schemas.ts';

const UrlField = (description: string) => Type.Optional(Type.String({ maxLength: 2048, description }));

const CreateSessionBody = Type.Object(
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
    locale: Type.Optional(
      Type.Union(
        ['auto', ...LOCALES].map((l) => Type.Literal(l)),
        {
          description:
            'The language of the hosted pages and mail: en, es, fr, de, it, pt, nl or ja; auto (the default) follows the reader’s browser (Accept-Language) on pages.',
        },
      ),
    ),
  },
  { additionalProperties: false },
);

export function register(app: App, deps: Deps) {
  const links = payLinks(deps.config.publicPayUrl);
  app.post(
    '/sessions',
    {
      schema: {
        summary: 'Create a group session',
        tags: ['sessions'],
        headers: Type.Object({ 'x-service-signature': Type.Optional(Type.String({ maxLength: 256 })) }),
        body: CreateSessionBody,
        response: responses(CreatedSessionSchema, [...AUTH_ERRORS, 409]),
      },
      config: { auth: 'publishable-or-secret', ...rateLimitConfig(deps, 'SESSIONS_CREATE') },
    },
    async (request) => {
      const body = request.body;
      const input = {
        cart: body.cart,
        signature: body.signature ?? request.headers['x-service-signature'],
        groupConfig: body.group_config,
        customer: body.customer,
        successUrl: body.success_url,
        cancelUrl: body.cancel_url,
        webhookUrl: body.webhook_url,
        locale: body.locale as LocaleSetting | undefined,
        acceptLanguage: request.headers['accept-language'],
        origin: request.headers.origin,
      };
      return withAnswer(
        request,
        (created: CreatedSession) => createdSessionToWire(created.session, created.organizerToken, links),
        (answer) => createSession(deps, callerOf(request), input, answer),
      );
    },
  );
}
