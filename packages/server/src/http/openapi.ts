// The OpenAPI document of the routes (@fastify/swagger), made from their schemas.
import swagger from '@fastify/swagger';
import type { App } from '../app-type.ts';
import type { Config } from '../config.ts';

interface OpenApiRequestBody {
  required?: boolean;
  description?: string;
  content?: Record<string, { schema?: Record<string, unknown> }>;
}

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
        for (const operation of Object.values(item ?? {}) as { requestBody?: OpenApiRequestBody }[]) {
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
