// The OpenAPI document of the routes (@fastify/swagger), made from their schemas.
import swagger from '@fastify/swagger';
import type { App } from '../app-type.ts';
import type { Config } from '../config.ts';

interface OpenApiRequestBody {
  required?: boolean;
  description?: string;
  content?: Record<string, { schema?: Record<string, unknown> }>;
}

interface OpenApiOperation {
  requestBody?: OpenApiRequestBody;
  responses?: Record<string, Record<string, unknown> | undefined>;
  parameters?: { name: string; in: string }[];
}

/** The header every POST takes (docs/api.md#idempotency), checked by the idempotency hook, not a schema. */
const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'A key of your choosing (a random UUID): the first answer to it is kept 24 hours and replayed for the same request (docs/api.md#idempotency).',
  schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,255}$' },
};

/** The headers of a 429 (docs/api.md#rate-limits). */
const RATE_LIMITED_HEADERS = {
  'Retry-After': {
    description: 'Seconds until the limit lets this request through.',
    schema: { type: 'integer' },
  },
  'RateLimit-Limit': { description: 'Requests a minute this route allows.', schema: { type: 'integer' } },
  'RateLimit-Remaining': { description: 'Requests left in this window: 0.', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'Seconds until the window ends.', schema: { type: 'integer' } },
};

/** What every operation that reads a body may answer besides its own: a body over the limit. */
const BODY_TOO_LARGE = {
  description: 'body_too_large: the body is over 256 KiB (docs/api.md#errors)',
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
};

export async function openApiDocument(app: App, config: Config) {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Group Checkout API',
        version: '1.0.0',
        description: 'One cart, paid for together. See docs/api.md for the guide.',
      },
      servers: [{ url: config.publicBaseUrl }],
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    // @fastify/swagger marks every request body required; a POST that takes none (NoBody) is documented
    // as what it is: an optional body that may only be {}.
    transformObject: (document) => {
      if (!('openapiObject' in document)) return document.swaggerObject;
      const { openapiObject } = document;
      for (const item of Object.values(openapiObject.paths ?? {})) {
        for (const [method, operation] of Object.entries(item ?? {}) as [string, OpenApiOperation][]) {
          // A body is read before it is checked: any route that takes one may answer 413.
          if (operation.requestBody && operation.responses) operation.responses['413'] ??= BODY_TOO_LARGE;
          if (method === 'post' && !operation.parameters?.some((p) => p.name === IDEMPOTENCY_KEY.name))
            operation.parameters = [...(operation.parameters ?? []), IDEMPOTENCY_KEY];
          const limited = operation.responses?.['429'];
          if (limited) limited.headers = RATE_LIMITED_HEADERS;
          const schema = operation.requestBody?.content?.['application/json']?.schema;
          if (!schema?.['x-no-body']) continue;
          const description = String(schema.description);
          operation.requestBody = {
            required: false,
            description,
            content: { 'application/json': { schema: { type: 'object', additionalProperties: false } } },
          };
        }
      }
      return openapiObject;
    },
  });
}
