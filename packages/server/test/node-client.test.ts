// @group-checkout/node's API client against this server. First its types against the OpenAPI document the
// app serves: the TypeScript compiler reads what each client method sends and answers
// (packages/node/src/client.ts and types.ts), and every field, at every depth, must be in the operation's
// schema with the same optionality and nullability, and every field of the schema in the type. A field the
// server adds, renames or makes required fails here until the client follows. Then the client itself,
// calling the real app over HTTP as a merchant's server would.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { GroupCheckout, GroupCheckoutError, signCart } from '@group-checkout/node';
import ts from 'typescript';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { DIALECTS, sqliteCase } from './helpers/databases.ts';
import { SESSION_ENV, sampleCart } from './helpers/sessions.ts';

/** Each method of the client and the operation it calls. */
const OPERATIONS: Record<string, string> = {
  'sessions.create': 'post /sessions',
  'sessions.list': 'get /sessions',
  'sessions.get': 'get /sessions/{sessionId}',
  'sessions.cancel': 'post /sessions/{sessionId}/cancel',
  'sessions.remind': 'post /sessions/{sessionId}/remind',
  'events.list': 'get /events',
  'events.get': 'get /events/{eventId}',
  'events.redeliver': 'post /events/{eventId}/redeliver',
  'webhooks.list': 'get /webhooks',
  'webhooks.create': 'post /webhooks',
  'webhooks.delete': 'delete /webhooks/{webhookId}',
  'webhooks.rotateSecret': 'post /webhooks/{webhookId}/rotate_secret',
  'merchants.me': 'get /merchants/me',
};

/** Operations of the document the client leaves out on purpose. */
const NOT_IN_CLIENT: Record<string, string> = {
  'post /test_helpers/sessions/{sessionId}/expire': 'a sandbox helper for the service’s own tests',
  'post /test_helpers/disputes/{disputeId}/close': 'a sandbox helper for the service’s own tests',
};

// ---- the client's types, as the TypeScript compiler sees them

/**
 * A field reduced to what the document can say: whether it may be left out or be null, and its fields
 * when it is an object or a list of objects (a list's `data.id` is the `id` of each element).
 */
interface Field {
  optional: boolean;
  nullable: boolean;
  object?: Fields;
}
type Fields = Map<string, Field>;

const CLIENT = fileURLToPath(new URL('../../node/src/client.ts', import.meta.url));

function clientMethods(): Map<string, ts.Signature> {
  const program = ts.createProgram([CLIENT], {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    allowImportingTsExtensions: true,
    skipLibCheck: true,
  });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(CLIENT);
  assert.ok(source, `cannot read ${CLIENT}`);
  const moduleSymbol = checker.getSymbolAtLocation(source);
  assert.ok(moduleSymbol);
  const classSymbol = checker.getExportsOfModule(moduleSymbol).find((s) => s.name === 'GroupCheckout');
  assert.ok(classSymbol, 'client.ts exports GroupCheckout');
  const instance = checker.getDeclaredTypeOfSymbol(classSymbol);
  const methods = new Map<string, ts.Signature>();
  for (const group of instance.getProperties()) {
    if (group.name.startsWith('#')) continue;
    const groupType = checker.getTypeOfSymbol(group);
    for (const method of groupType.getProperties()) {
      const signature = checker.getTypeOfSymbol(method).getCallSignatures()[0];
      if (signature) methods.set(`${group.name}.${method.name}`, signature);
    }
  }
  fieldsOf = (type) => typeFields(checker, type, new Set());
  resolvedOf = (signature) => {
    const promise = signature.getReturnType();
    const answer = checker.getTypeArguments(promise as ts.TypeReference)[0] ?? promise;
    const first = signature.getParameters()[0];
    const param = first ? checker.getTypeOfSymbol(first) : undefined;
    return { answer, param };
  };
  return methods;
}

let fieldsOf: (type: ts.Type) => Fields | undefined;
let resolvedOf: (signature: ts.Signature) => { answer: ts.Type; param: ts.Type | undefined };

function typeFields(checker: ts.TypeChecker, type: ts.Type, seen: Set<ts.Type>): Fields | undefined {
  const present = type.isUnion()
    ? type.types.filter((t) => !(t.flags & (ts.TypeFlags.Null | ts.TypeFlags.Undefined)))
    : [type];
  if (present.length !== 1) return undefined; // a union of literals: a leaf
  const only = present[0] as ts.Type;
  if (checker.isArrayType(only)) {
    const element = checker.getTypeArguments(only as ts.TypeReference)[0];
    return element ? typeFields(checker, element, seen) : undefined;
  }
  if (!(only.flags & ts.TypeFlags.Object) || only.getCallSignatures().length > 0) return undefined;
  const properties = checker.getPropertiesOfType(only);
  if (properties.length === 0 || seen.has(only)) return undefined; // Record<string, string>: a leaf
  const fields: Fields = new Map();
  for (const property of properties) {
    const propertyType = checker.getTypeOfSymbol(property);
    const parts = propertyType.isUnion() ? propertyType.types : [propertyType];
    fields.set(property.name, {
      optional: (property.flags & ts.SymbolFlags.Optional) !== 0,
      nullable: parts.some((t) => (t.flags & ts.TypeFlags.Null) !== 0),
      object: typeFields(checker, propertyType, new Set([...seen, only])),
    });
  }
  return fields;
}

// ---- the document's schemas, reduced the same way

// biome-ignore lint/suspicious/noExplicitAny: OpenAPI is walked as plain JSON
type Json = any;

function schemaFields(doc: Json, schema: Json): { fields?: Fields; nullable: boolean } {
  if (schema?.$ref) return schemaFields(doc, doc.components.schemas[schema.$ref.split('/').at(-1)]);
  const branches = schema?.anyOf ?? schema?.oneOf;
  if (branches) {
    const present = branches.filter((b: Json) => b.type !== 'null');
    const nullable = present.length < branches.length;
    if (present.length !== 1) return { nullable };
    return { ...schemaFields(doc, present[0]), nullable };
  }
  const nullable = Array.isArray(schema?.type) && schema.type.includes('null');
  if (schema?.allOf) {
    const fields: Fields = new Map();
    for (const part of schema.allOf)
      for (const [k, v] of schemaFields(doc, part).fields ?? []) fields.set(k, v);
    return { fields, nullable };
  }
  if (schema?.type === 'array') return { ...schemaFields(doc, schema.items), nullable };
  if (!schema?.properties || Object.keys(schema.properties).length === 0) return { nullable };
  // An object that also takes any other key (the cart's metadata) is a map, as the client types it.
  if (schema.additionalProperties && schema.additionalProperties !== false) return { nullable };
  const required = new Set<string>(schema.required ?? []);
  const fields: Fields = new Map();
  for (const [name, property] of Object.entries(schema.properties)) {
    const inner = schemaFields(doc, property);
    fields.set(name, { optional: !required.has(name), nullable: inner.nullable, object: inner.fields });
  }
  return { fields, nullable };
}

/** Differences between the client's fields and the document's, one sentence each. */
function compare(where: string, client: Fields, server: Fields, path = ''): string[] {
  const problems: string[] = [];
  for (const [name, field] of client) {
    const at = `${path}${name}`;
    const theirs = server.get(name);
    if (!theirs) {
      problems.push(`${where}: the client has ${at}, which the server's schema does not`);
      continue;
    }
    if (field.optional !== theirs.optional)
      problems.push(
        `${where}: ${at} is ${theirs.optional ? 'optional' : 'required'} on the server, ${field.optional ? 'optional' : 'required'} in the client`,
      );
    if (field.nullable !== theirs.nullable)
      problems.push(
        `${where}: ${at} is ${theirs.nullable ? '' : 'never '}null on the server, ${field.nullable ? '' : 'never '}null in the client`,
      );
    if (field.object && theirs.object)
      problems.push(...compare(where, field.object, theirs.object, `${at}.`));
    else if (field.object || theirs.object)
      problems.push(`${where}: ${at} is an object on ${field.object ? 'the client' : 'the server'} only`);
  }
  for (const [name, field] of server) {
    if (!client.has(name))
      problems.push(
        `${where}: the server's schema has ${path}${name} (${field.optional ? 'optional' : 'required'}), which the client lacks`,
      );
  }
  return problems;
}

describe('the client’s types against the OpenAPI document', () => {
  let t: TestApp;
  let doc: Json;
  let methods: Map<string, ts.Signature>;
  before(async () => {
    t = await startTestApp(sqliteCase);
    doc = (await t.request('GET', '/v1/openapi.json')).body;
    methods = clientMethods();
  });
  after(() => t?.close());

  const operationOf = (key: string) => {
    const [method, path] = key.split(' ') as [string, string];
    return doc.paths[path]?.[method];
  };

  test('every method of the client is mapped to an operation, and every operation to a method', () => {
    assert.deepEqual([...methods.keys()].sort(), Object.keys(OPERATIONS).sort());
    const documented = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item as object).map((method) => `${method} ${path}`),
    );
    const called = new Set(Object.values(OPERATIONS));
    for (const operation of documented) {
      assert.ok(
        called.has(operation) || operation in NOT_IN_CLIENT,
        `${operation} is in the document but the client has no method for it`,
      );
    }
  });

  test('the document has every operation the client calls', () => {
    const missing = Object.values(OPERATIONS).filter((key) => !operationOf(key));
    assert.deepEqual(missing, [], 'the client calls operations the server does not describe');
  });

  test('answers: the same fields, equally required and nullable, at every depth', () => {
    const problems: string[] = [];
    let checked = 0;
    for (const [name, key] of Object.entries(OPERATIONS)) {
      const operation = operationOf(key);
      if (!operation) continue;
      const signature = methods.get(name);
      assert.ok(signature, name);
      const client = fieldsOf(resolvedOf(signature).answer);
      const server = schemaFields(doc, operation.responses['200'].content['application/json'].schema).fields;
      assert.ok(client && server, `${name}: no fields to compare`);
      problems.push(...compare(`${key} answer`, client, server));
      checked++;
    }
    assert.ok(checked >= 9, `only ${checked} operations checked`);
    assert.deepEqual(problems, []);
  });

  test('requests: bodies and list parameters have the server’s names', () => {
    const problems: string[] = [];
    for (const name of ['sessions.create', 'webhooks.create']) {
      const key = OPERATIONS[name] as string;
      const signature = methods.get(name) as ts.Signature;
      const param = resolvedOf(signature).param;
      assert.ok(param, `${name} takes a body`);
      const client = fieldsOf(param) as Fields;
      const server = schemaFields(doc, operationOf(key).requestBody.content['application/json'].schema)
        .fields as Fields;
      problems.push(...compare(`${key} body`, client, server));
    }
    const listSignature = methods.get('sessions.list') as ts.Signature;
    const query: Fields = new Map(
      operationOf('get /sessions')
        .parameters.filter((p: Json) => p.in === 'query')
        .map((p: Json) => [p.name, { optional: !p.required, nullable: false }]),
    );
    problems.push(
      ...compare(
        'get /sessions query',
        fieldsOf(resolvedOf(listSignature).param as ts.Type) as Fields,
        query,
      ),
    );
    assert.deepEqual(problems, []);
  });

  test('a renamed or newly required field would be found', () => {
    const client: Fields = new Map([
      ['session_id', { optional: false, nullable: false }],
      ['status', { optional: false, nullable: false }],
    ]);
    const server: Fields = new Map([
      ['id', { optional: false, nullable: false }],
      ['status', { optional: false, nullable: false }],
      ['created_at', { optional: false, nullable: false }],
    ]);
    assert.deepEqual(compare('x', client, server), [
      "x: the client has session_id, which the server's schema does not",
      "x: the server's schema has id (required), which the client lacks",
      "x: the server's schema has created_at (required), which the client lacks",
    ]);
  });
});

for (const dialect of DIALECTS) {
  describe(`the client against the app on ${dialect.name}`, { skip: dialect.skip }, () => {
    let t: TestApp;
    let client: GroupCheckout;
    before(async () => {
      t = await startTestApp(dialect, { env: SESSION_ENV });
      client = new GroupCheckout(t.merchant.secretKey, { baseUrl: `${t.baseUrl}/v1` });
    });
    after(() => t?.close());

    test('merchants.me is the key’s merchant', async () => {
      const me = await client.merchants.me();
      assert.equal(me.id, t.merchant.merchant.id);
      assert.equal(me.sandbox, true);
      assert.match(me.request_id, /^req_/);
    });

    test('a signed session: create, get, list, remind, cancel, and a second cancel refused', async () => {
      const cart = sampleCart();
      const created = await client.sessions.create({
        cart,
        signature: signCart(cart, t.merchant.merchant.signingSecret),
        customer: { name: 'Ada', email: 'ada@example.com' },
      });
      assert.match(created.session_id, /^gs_/);
      assert.equal(created.status, 'pending');

      const session = await client.sessions.get(created.session_id);
      assert.equal(session.order_ref, 'ORD-1001');
      assert.equal(session.total_cents, 10_000);
      assert.equal(session.customer?.email, 'ada@example.com');

      const page = await client.sessions.list({ limit: 100 });
      assert.ok(page.data.some((s) => s.session_id === created.session_id));
      assert.equal(typeof page.has_more, 'boolean');

      const reminded = await client.sessions.remind(created.session_id);
      assert.equal(reminded.session_id, created.session_id);

      const cancelled = await client.sessions.cancel(created.session_id);
      assert.equal(cancelled.status, 'cancelled');
      await assert.rejects(client.sessions.cancel(created.session_id), (error: unknown) => {
        assert.ok(error instanceof GroupCheckoutError);
        assert.equal(error.status, 409);
        assert.equal(error.code, 'session_not_pending');
        assert.match(error.request_id ?? '', /^req_/);
        return true;
      });
    });

    test('the same idempotencyKey twice is one session, the second answer replayed', async () => {
      const cart = sampleCart({ metadata: { order_ref: 'ORD-IDEM' } });
      const key = `order-${Date.now()}`;
      const first = await client.sessions.create({ cart }, { idempotencyKey: key });
      const second = await client.sessions.create({ cart }, { idempotencyKey: key });
      assert.equal(second.session_id, first.session_id);
      assert.equal(second.request_id, first.request_id);
    });

    test('a cart the server refuses is a GroupCheckoutError with its details, not retried', async () => {
      const cart = sampleCart({ total: 1 });
      await assert.rejects(client.sessions.create({ cart }), (error: unknown) => {
        assert.ok(error instanceof GroupCheckoutError);
        assert.equal(error.status, 400);
        assert.equal(error.code, 'invalid_cart');
        assert.ok(error.details && error.details.length > 0);
        return true;
      });
    });

    test('webhook endpoints: create (with its secret), list, delete', async () => {
      const endpoint = await client.webhooks.create({
        url: 'https://shop.example/hooks',
        events: ['group.funded'],
      });
      assert.match(endpoint.secret, /^whsec_/);
      const listed = await client.webhooks.list();
      assert.ok(listed.data.some((e) => e.id === endpoint.id));
      assert.deepEqual(await client.webhooks.delete(endpoint.id).then((d) => [d.id, d.deleted]), [
        endpoint.id,
        true,
      ]);
      await assert.rejects(client.webhooks.delete(endpoint.id), { status: 404, code: 'webhook_not_found' });
    });
  });
}
