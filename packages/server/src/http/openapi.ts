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
  responses?: Record<string, unknown>;
}

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
        for (const operation of Object.values(item ?? {}) as OpenApiOperation[]) {
          // A body is read before it is checked: any route that takes one may answer 413.
          if (operation.requestBody && operation.responses) operation.responses['413'] ??= BODY_TOO_LARGE;
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
