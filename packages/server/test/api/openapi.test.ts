// The machine-readable description (docs/api.md#versioning, docs/api.md#openapi): OpenAPI 3.1, version 1.0.0, valid, with
// the Error schema and every route the server actually registered under the API prefix.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';

/** Routes under /v1 that are not API operations, and why they are left out of the document. */
const NOT_OPERATIONS = new Set([
  'OPTIONS /v1/*', // the CORS preflight answer for every path
  'GET /v1/openapi.json', // the document itself
  'POST /v1/stripe/webhook', // Stripe's, not the merchant's: docs/operations.md#stripe-set-up
]);

/** `/v1/sessions/:sessionId` → `/sessions/{sessionId}`: OpenAPI paths are relative to the server URL. */
const toOpenApiPath = (url: string) => url.slice('/v1'.length).replace(/:(\w+)/g, '{$1}');

for (const dialect of DIALECTS) {
  describe(`GET /v1/openapi.json on ${dialect.name}`, { skip: dialect.skip }, () => {
    let t: TestApp;
    // biome-ignore lint/suspicious/noExplicitAny: the document is checked field by field below
    let doc: any;
    before(async () => {
      t = await startTestApp(dialect);
      const res = await t.request('GET', '/v1/openapi.json');
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      assert.match(res.headers.get('x-request-id') ?? '', /^req_/);
      doc = res.body;
    });
    after(() => t?.close());

    test('is OpenAPI 3.1, version 1.0.0, served at the API base URL', () => {
      assert.match(doc.openapi, /^3\.1\.\d+$/);
      assert.equal(doc.info.version, '1.0.0');
      assert.equal(typeof doc.info.title, 'string');
      assert.deepEqual(
        doc.servers.map((s: { url: string }) => s.url),
        [t.deps.config.publicBaseUrl],
      );
    });

    test('is valid according to the OpenAPI 3.1 schema', async () => {
      const validator = new Validator();
      const result = await validator.validate(doc);
      assert.equal(validator.version, '3.1');
      assert.deepEqual(result.errors ?? [], []);
      assert.equal(result.valid, true);
    });

    test('has the Error schema, with request_id, error and code required', () => {
      const schema = doc.components.schemas.Error;
      assert.equal(schema.type, 'object');
      assert.deepEqual([...schema.required].sort(), ['code', 'error', 'request_id']);
      assert.equal(schema.properties.details.type, 'array');
    });

    test('describes every route registered under /v1, with its method', () => {
      const operations = t.routes.filter(
        (r) => r.url.startsWith('/v1/') && r.method !== 'HEAD' && !NOT_OPERATIONS.has(`${r.method} ${r.url}`),
      );
      assert.ok(operations.length >= 8, `only ${operations.length} routes found: the route list is broken`);
      for (const route of operations) {
        const path = toOpenApiPath(route.url);
        assert.ok(doc.paths[path], `${route.method} ${route.url}: no path ${path}`);
        const operation = doc.paths[path][route.method.toLowerCase()];
        assert.ok(operation, `${route.method} ${route.url}: no ${route.method.toLowerCase()} under ${path}`);
        assert.ok(operation.responses['200'], `${route.method} ${path} documents its success`);
        // Every route may answer a failure of ours (500) and upstream_error or shutting down (503).
        for (const status of ['400', '401', '429', '500', '503']) {
          const ref = operation.responses[status]?.content?.['application/json']?.schema?.$ref;
          assert.match(
            ref ?? '',
            /Error$/,
            `${route.method} ${path} documents ${status} with the Error schema`,
          );
        }
      }
      // And nothing in the document that the server does not answer.
      const registered = new Set(operations.map((r) => `${r.method.toLowerCase()} ${toOpenApiPath(r.url)}`));
      for (const [path, item] of Object.entries(doc.paths)) {
        for (const method of Object.keys(item as object)) {
          if (method === 'parameters') continue;
          assert.ok(registered.has(`${method} ${path}`), `${method} ${path} is documented but not served`);
        }
      }
    });

    test('every operation that takes a body documents 413 body_too_large, which it answers', async () => {
      let withBody = 0;
      for (const [path, item] of Object.entries(doc.paths)) {
        for (const [method, operation] of Object.entries(
          item as Record<string, { requestBody?: object; responses: Record<string, object> }>,
        )) {
          if (!operation.requestBody) continue;
          withBody++;
          assert.deepEqual(
            (operation.responses['413'] as { content: object })?.content,
            { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
            `${method} ${path}`,
          );
        }
      }
      assert.ok(withBody >= 5, `only ${withBody} operations with a body`);
      const big = await t.request('POST', '/v1/sessions', {
        key: t.merchant.secretKey,
        body: { cart: { items: [], note: 'x'.repeat(300_000) } },
      });
      assert.equal(big.status, 413);
      assert.equal(big.body.code, 'body_too_large');
    });

    test('every error answer of an authenticated route refers to the Error schema', () => {
      for (const [path, item] of Object.entries(doc.paths)) {
        for (const [method, operation] of Object.entries(item as Record<string, { responses: object }>)) {
          const responses = operation.responses as Record<
            string,
            { content?: Record<string, { schema: object }> }
          >;
          for (const status of ['401', '403', '429']) {
            const schema = responses[status]?.content?.['application/json']?.schema;
            assert.deepEqual(schema, { $ref: '#/components/schemas/Error' }, `${method} ${path} ${status}`);
          }
        }
      }
    });

    test('every POST documents Idempotency-Key, and every 429 its Retry-After and RateLimit headers', async () => {
      let posts = 0;
      let limited = 0;
      for (const [path, item] of Object.entries(doc.paths)) {
        for (const [method, operation] of Object.entries(
          item as Record<
            string,
            { parameters?: { name: string; in: string }[]; responses: Record<string, { headers?: object }> }
          >,
        )) {
          if (method === 'post') {
            posts++;
            const keys = (operation.parameters ?? []).filter((p) => p.name === 'Idempotency-Key');
            assert.equal(keys.length, 1, `${method} ${path}`);
            assert.equal(keys[0]?.in, 'header');
          }
          if (operation.responses['429']) {
            limited++;
            assert.deepEqual(
              Object.keys(operation.responses['429'].headers ?? {}),
              ['Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'],
              `${method} ${path}`,
            );
          }
        }
      }
      assert.ok(posts >= 8 && limited >= 15, `${posts} POSTs, ${limited} limited operations`);
      // What the document says is what a limited answer carries.
      const key = t.merchant.secretKey;
      let last = await t.request('GET', '/v1/merchants/me', { key });
      for (let i = 0; i < 130 && last.status !== 429; i++)
        last = await t.request('GET', '/v1/merchants/me', { key });
      assert.equal(last.status, 429);
      for (const header of ['retry-after', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'])
        assert.match(last.headers.get(header) ?? '', /^\d+$/, header);
    });

    test('documents the webhook routes with their bodies and parameters', () => {
      const create = doc.paths['/webhooks'].post;
      const body = create.requestBody.content['application/json'].schema;
      assert.deepEqual([...body.required].sort(), ['events', 'url']);
      assert.ok(create.responses['200'].content['application/json'].schema);
      const del = doc.paths['/webhooks/{webhookId}'].delete;
      assert.ok(
        del.parameters.some((p: { name: string; in: string }) => p.name === 'webhookId' && p.in === 'path'),
      );
      assert.ok(doc.paths['/merchants/me'].get.responses['200']);
    });
  });
}
