// No validator's raw wording reaches a client (docs/api.md#errors). Every route the app registers under
// /v1 and /api/v1 is sent bodies, query strings, headers and path parameters that break each rule of its
// own schemas, derived from the schemas themselves; every answer must be 4xx in the error shape, in our
// words, and none 5xx. Then every keyword Ajv knows, one by one, through describeErrors.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ErrorObject } from 'ajv';
import { takesNoBody } from '../../src/api/schemas.ts';
import { describeError, describeErrors, validatorCompiler } from '../../src/api/validation.ts';
import { startTestApp, type TestApp, type TestResponse } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { createSession, organizerToken, SESSION_ENV, sampleCart } from '../helpers/sessions.ts';

/** Ajv's own phrasings (and Fastify's `body/…` prefixes): none may appear in what a client reads. */
const VALIDATOR_WORDING = [
  /must be equal to/,
  /must match/,
  /must NOT/,
  /must have required property/,
  /\bshould\b/,
  /must pass/,
  /allowed values/,
  /must be (string|integer|number|object|array|boolean|null)\b/,
  /must be (<|>|<=|>=) /,
  /must be multiple of/,
  /must have property/,
  /must have (more|fewer) than/,
  /property name must be valid/,
  /boolean schema is false/,
  /valid item\(s\)/,
  /\bschema\b/,
  /\bin anyOf\b|\bin oneOf\b/,
  /\b(body|querystring|params|headers)\//,
  /FST_ERR/,
];

function assertOurWords(text: string, context: string) {
  for (const phrase of VALIDATOR_WORDING) assert.doesNotMatch(text, phrase, `${context}: ${text}`);
}

/** 4xx in the error shape (docs/api.md#errors), with every sentence in our words; never 5xx. */
function assertClientError(res: TestResponse, context: string) {
  assert.ok(res.status >= 400 && res.status < 500, `${context}: ${res.status} ${res.text.slice(0, 300)}`);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/, context);
  const { request_id, error, code, details, ...rest } = res.body;
  assert.deepEqual(rest, {}, `${context}: no fields beyond request_id, error, code, details`);
  assert.match(request_id, /^req_[0-9A-Za-z]+$/, context);
  assert.equal(res.headers.get('x-request-id'), request_id, context);
  assert.equal(typeof error, 'string', context);
  assert.ok(error.length > 0, context);
  assert.match(code, /^[a-z_]+$/, context);
  assertOurWords(error, context);
  if (details !== undefined) {
    assert.ok(Array.isArray(details) && details.length > 0, context);
    for (const detail of details) {
      assert.equal(typeof detail, 'string', context);
      assertOurWords(detail, context);
    }
  }
}

/** Any answer: never 5xx; an error in our shape and words. */
function assertAnswered(res: TestResponse, context: string) {
  assert.ok(res.status < 500, `${context}: ${res.status} ${res.text.slice(0, 300)}`);
  if (res.status >= 400) assertClientError(res, context);
}

// biome-ignore lint/suspicious/noExplicitAny: JSON schemas and JSON values, walked generically
type Any = any;

/** Keywords of our request schemas that say nothing about validity. */
const ANNOTATIONS = new Set([
  'description',
  'default',
  'title',
  'examples',
  '$id',
  'hide',
  'summary',
  'tags',
]);

/** Whether a route takes a body to break; body-less POSTs (NoBody, marked x-no-body) are tested in request-bodies.test.ts. */
const takesBody = (route: { schema?: { body?: unknown } }) =>
  route.schema?.body !== undefined && !takesNoBody(route.schema);

/** Every keyword the rule breaker below knows how to break; a schema using another fails the test. */
const BREAKABLE = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'patternProperties',
  'maxProperties',
  'minProperties',
  'items',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'enum',
  'const',
  'format',
  'pattern',
  'anyOf',
  'oneOf',
]);

/** A value of the wrong JSON type for each type. */
const WRONG_TYPE: Record<string, unknown> = {
  string: 12345,
  integer: 'five',
  number: 'five',
  boolean: 'yes',
  object: ['not', 'an', 'object'],
  array: { not: 'an array' },
  null: 0,
};

/** The keywords a request schema uses, with where, walking into nested schemas. */
function keywordsOf(schema: Any, at = ''): [string, string][] {
  if (!schema || typeof schema !== 'object') return [];
  const found: [string, string][] = [];
  for (const [key, value] of Object.entries(schema)) {
    if (ANNOTATIONS.has(key)) continue;
    found.push([key, at]);
    if (key === 'properties' || key === 'patternProperties')
      for (const [name, sub] of Object.entries(value as object))
        found.push(...keywordsOf(sub, `${at}.${name}`));
    else if (key === 'items') found.push(...keywordsOf(value, `${at}[]`));
    else if (key === 'anyOf' || key === 'oneOf')
      (value as Any[]).forEach((sub, i) => {
        found.push(...keywordsOf(sub, `${at}|${i}`));
      });
    else if (key === 'additionalProperties' && typeof value === 'object')
      found.push(...keywordsOf(value, `${at}.*`));
  }
  return found;
}

/**
 * Values that break one rule of `schema` each, starting from a `valid` value: `[rule, value]` where rule
 * is `keyword at path`. Nested rules are broken inside an otherwise valid whole.
 */
function* breaking(schema: Any, valid: unknown, path: string): Generator<[string, unknown]> {
  const types: string[] = [schema.type ?? []].flat();
  for (const type of types) yield [`type(${type}) at ${path}`, WRONG_TYPE[type] ?? Symbol.for('no json')];
  if (types.includes('integer')) yield [`type(integer) at ${path}, a fraction`, 1.5];
  if (typeof schema.minimum === 'number') yield [`minimum at ${path}`, schema.minimum - 1];
  if (typeof schema.maximum === 'number') yield [`maximum at ${path}`, schema.maximum + 1];
  if (typeof schema.exclusiveMinimum === 'number')
    yield [`exclusiveMinimum at ${path}`, schema.exclusiveMinimum];
  if (typeof schema.exclusiveMaximum === 'number')
    yield [`exclusiveMaximum at ${path}`, schema.exclusiveMaximum];
  if (typeof schema.multipleOf === 'number') yield [`multipleOf at ${path}`, schema.multipleOf * 1.5];
  if (typeof schema.minLength === 'number' && schema.minLength > 0)
    yield [`minLength at ${path}`, 'x'.repeat(schema.minLength - 1)];
  if (typeof schema.maxLength === 'number') yield [`maxLength at ${path}`, 'x'.repeat(schema.maxLength + 1)];
  if (schema.enum) yield [`enum at ${path}`, 'no-such-value'];
  if ('const' in schema) yield [`const at ${path}`, 'no-such-value'];
  if (schema.format) yield [`format(${schema.format}) at ${path}`, `not a ${schema.format}`];
  if (schema.pattern) yield [`pattern at ${path}`, ' \u0001 '];
  if (schema.anyOf || schema.oneOf) {
    yield [`anyOf at ${path}`, 'no-such-value'];
    yield [`anyOf at ${path}, an object`, { no: 'such form' }];
  }

  if (Array.isArray(valid)) {
    const first = valid[0];
    if (typeof schema.minItems === 'number' && schema.minItems > 0)
      yield [`minItems at ${path}`, Array(schema.minItems - 1).fill(first)];
    if (typeof schema.maxItems === 'number') {
      // Distinct elements where the schema lists them, so that only the length is wrong.
      const pool: unknown[] = schema.items?.enum ?? [];
      const many = Array.from({ length: schema.maxItems + 1 }, (_, i) =>
        pool.length > schema.maxItems ? pool[i] : structuredClone(first),
      );
      yield [`maxItems at ${path}`, many];
    }
    if (schema.uniqueItems) yield [`uniqueItems at ${path}`, [first, first]];
    if (schema.items && first !== undefined)
      for (const [rule, value] of breaking(schema.items, first, `${path}[0]`))
        yield [rule, [value, ...valid.slice(1)]];
  }

  if (valid && typeof valid === 'object' && !Array.isArray(valid)) {
    const object = valid as Record<string, unknown>;
    if (schema.additionalProperties === false)
      yield [`additionalProperties at ${path}`, { ...object, no_such_field: 1 }];
    for (const name of schema.required ?? []) {
      const { [name]: _left, ...rest } = object;
      yield [`required(${name}) at ${path}`, rest];
    }
    if (typeof schema.maxProperties === 'number') {
      const many = Object.fromEntries(
        Array.from({ length: schema.maxProperties + 1 }, (_, i) => [`k${i}`, 'v']),
      );
      yield [`maxProperties at ${path}`, many];
    }
    if (typeof schema.minProperties === 'number' && schema.minProperties > 0)
      yield [`minProperties at ${path}`, {}];
    for (const [pattern, sub] of Object.entries((schema.patternProperties ?? {}) as Record<string, Any>)) {
      const sample = Object.keys(object).find((k) => new RegExp(pattern).test(k)) ?? 'a_key';
      for (const [rule, value] of breaking(sub, object[sample] ?? 'v', `${path}["${sample}"]`))
        yield [`patternProperties: ${rule}`, { ...object, [sample]: value }];
    }
    for (const [name, sub] of Object.entries((schema.properties ?? {}) as Record<string, Any>)) {
      const at = path ? `${path}.${name}` : name;
      if (name in object) {
        for (const [rule, value] of breaking(sub, object[name], at))
          yield [rule, { ...object, [name]: value }];
      } else {
        // An optional field the valid value leaves out: break what can be broken without a sample.
        for (const [rule, value] of breaking(sub, undefined, at)) yield [rule, { ...object, [name]: value }];
      }
    }
  }
}

/**
 * The valid value with a NUL character put into one of its texts (a string value, or a key), for each
 * text: JSON allows it, no field accepts it, and PostgreSQL text cannot hold it.
 */
function* withNul(valid: unknown, path: string): Generator<[string, unknown]> {
  if (typeof valid === 'string') yield [`NUL in ${path}`, `${valid}\u0000`];
  else if (Array.isArray(valid))
    for (const [i, element] of valid.entries())
      for (const [rule, value] of withNul(element, `${path}[${i}]`))
        yield [rule, valid.map((e, j) => (j === i ? value : e))];
  else if (valid && typeof valid === 'object')
    for (const [key, inner] of Object.entries(valid)) {
      const at = path ? `${path}.${key}` : key;
      for (const [rule, value] of withNul(inner, at)) yield [rule, { ...valid, [key]: value }];
      if (
        !Array.isArray(inner) &&
        typeof inner === 'object' &&
        inner !== null &&
        Object.keys(inner).length > 0
      ) {
        const [first = ''] = Object.keys(inner);
        const renamed = Object.fromEntries(
          Object.entries(inner).map(([k, v]) => [k === first ? `${k}\u0000` : k, v]),
        );
        yield [`NUL in a key of ${at}`, { ...valid, [key]: renamed }];
      }
    }
}

/** Breaks each rule of a querystring or headers schema: values are text there. */
function* breakingText(
  schema: Any,
  valid: Record<string, string>,
): Generator<[string, Record<string, string | string[]>]> {
  if (schema.additionalProperties === false) yield ['additionalProperties', { ...valid, no_such_param: '1' }];
  for (const name of schema.required ?? []) {
    const { [name]: _left, ...rest } = valid;
    yield [`required(${name})`, rest];
  }
  for (const [name, sub] of Object.entries((schema.properties ?? {}) as Record<string, Any>)) {
    const set = (value: string | string[]) => ({ ...valid, [name]: value });
    yield [`${name} given twice`, set(['1', '2'])];
    if (sub.type === 'integer' || sub.type === 'number') {
      yield [`type(${sub.type}) of ${name}`, set('abc')];
      if (sub.type === 'integer') yield [`type(integer) of ${name}, a fraction`, set('1.5')];
    }
    if (typeof sub.minimum === 'number') yield [`minimum of ${name}`, set(String(sub.minimum - 1))];
    if (typeof sub.maximum === 'number') yield [`maximum of ${name}`, set(String(sub.maximum + 1))];
    if (typeof sub.minLength === 'number' && sub.minLength > 0) yield [`minLength of ${name}`, set('')];
    if (typeof sub.maxLength === 'number') yield [`maxLength of ${name}`, set('x'.repeat(sub.maxLength + 1))];
    if (sub.enum) yield [`enum of ${name}`, set('no-such-value')];
    if (sub.format) yield [`format of ${name}`, set(`not a ${sub.format}`)];
  }
}

const queryString = (query: Record<string, string | string[]>) => {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) for (const v of [value].flat()) params.append(name, v);
  const text = params.toString();
  return text ? `?${text}` : '';
};

/** Bodies any route may be sent, whatever it expects: none may make it fail. */
const ANY_ROUTE_BODIES = [
  'null',
  'true',
  '42',
  '"text"',
  '[]',
  '[{}]',
  '{}',
  '{"no_such_field":1}',
  '{"a":{"b":[1,{"c":null}]},"mode":5,"cart":"x","url":[],"name":{}}',
  '{"__proto__":{"admin":true}}',
  '{"name":"\\u0000","cart":{"\\u0000":"\\u0000"}}',
  '{"cart":',
  "{'single':'quotes'}",
];

/** Path parameters that no id has (a NUL is one PostgreSQL text cannot even hold). */
const ODD_IDS = ['x'.repeat(120), 'gs_%00', '%00', '%C3%BC', 'a.b', '..'];

for (const dialect of DIALECTS) {
  describe(`validation messages on every route, on ${dialect.name}`, { skip: dialect.skip }, () => {
    let t: TestApp;
    let routes: TestApp['routes'];
    /** The keywords whose breaking a route answered with 4xx, to check that every kind was tried. */
    const broken = new Set<string>();

    before(async () => {
      t = await startTestApp(dialect, {
        env: {
          ...SESSION_ENV,
          RATE_LIMIT_WEBHOOKS_WRITE: '100000',
          RATE_LIMIT_WEBHOOKS_READ: '100000',
          RATE_LIMIT_MERCHANTS_ME: '100000',
          // Bad keys are not sent here, but odd paths and bodies are many.
          RATE_LIMIT_AUTH_FAILURES_IP: '100000',
        },
      });
      routes = t.routes.filter(
        (r) =>
          (r.url.startsWith('/v1/') || r.url.startsWith('/api/v1/')) &&
          r.method !== 'HEAD' &&
          r.method !== 'OPTIONS',
      );
    });
    after(() => t?.close());

    /**
     * A session of its own for each route (some of the requests below cancel or change it), and a
     * webhook endpoint for the route that deletes one (a merchant may have only 16).
     */
    async function fixture(route?: { url: string }) {
      const created = await createSession(t, { group_config: { allowed_modes: ['equal', 'custom'] } });
      const organizer = organizerToken(created);
      const group = await t.request('PUT', `/api/v1/session/group?access=${organizer}`, {
        body: { mode: 'equal', members: [{ name: 'Ada' }, { name: 'Ben' }] },
      });
      assert.equal(group.status, 200, group.text);
      const webhook = route?.url.includes(':webhookId')
        ? await t.request('POST', '/v1/webhooks', {
            key: t.merchant.secretKey,
            body: { url: 'https://hooks.example/validation', events: ['*'] },
          })
        : undefined;
      if (webhook) assert.equal(webhook.status, 200, webhook.text);
      return {
        sessionId: created.session_id as string,
        organizer,
        groupToken: created.group_access_token as string,
        shareId: group.body.group.members[1].share_id as string,
        webhookId: (webhook?.body.id ?? 'we_none') as string,
      };
    }
    type Fixture = Awaited<ReturnType<typeof fixture>>;

    const pathOf = (url: string, f: Fixture, odd?: string) =>
      url
        .replace(':sessionId', odd ?? f.sessionId)
        .replace(':webhookId', odd ?? f.webhookId)
        .replace(':shareId', odd ?? f.shareId);

    /** A request to a route as its client would send it: the secret key, or the page's token. */
    function send(
      route: { method: string; url: string },
      f: Fixture,
      options: {
        path?: string;
        query?: Record<string, string | string[]>;
        rawBody?: string;
        body?: unknown;
        headers?: Record<string, string>;
      } = {},
    ) {
      const pay = route.url.startsWith('/api/v1/');
      const token = route.url === '/api/v1/session/join' ? f.groupToken : f.organizer;
      const query =
        options.query ?? (pay && !route.url.startsWith('/api/v1/shares/') ? { access: token } : {});
      return t.request(route.method, `${options.path ?? pathOf(route.url, f)}${queryString(query)}`, {
        key: pay ? undefined : t.merchant.secretKey,
        body: options.body,
        rawBody: options.rawBody,
        headers: options.headers,
      });
    }

    /** A body each route with a body schema accepts, every optional field filled in. */
    const VALID_BODIES: Record<string, unknown> = {
      'POST /v1/sessions': {
        cart: sampleCart({
          items: [
            {
              id: 'sku_a',
              name: 'Dinner',
              quantity: 2,
              unit_price: 4000,
              image_url: 'https://cdn.example/a.png',
            },
            { id: 'sku_b', name: 'Cake', quantity: 1, unit_price: 1000 },
          ],
          fees: [{ id: 'svc', label: 'Service', amount: 0 }],
        }),
        group_config: {
          min_size: 2,
          max_size: 10,
          default_mode: 'equal',
          allowed_modes: ['equal', 'custom'],
          expiry_hours: 48,
        },
        customer: { name: 'Ada', email: 'ada@example.com', phone: '+44 20 7946 0000' },
        success_url: 'https://shop.example/thanks',
        cancel_url: 'https://shop.example/cart',
        webhook_url: 'https://shop.example/hooks',
      },
      'POST /v1/webhooks': { url: 'https://hooks.example/gc', events: ['group.funded', 'group.cancelled'] },
      'PUT /api/v1/session/group': {
        mode: 'custom',
        members: [
          {
            name: 'Ada',
            email: 'ada@example.com',
            amount_cents: 5000,
            basis_points: 5000,
            items: [{ item_index: 0, quantity: 1 }],
          },
          { name: 'Ben', amount_cents: 5000 },
        ],
      },
      'POST /api/v1/session/join': { name: 'Cy', email: 'cy@example.com' },
      'POST /api/v1/shares/:shareId/pay': {
        card: { number: '4242424242424242', exp_month: 12, exp_year: 2099, cvc: '123' },
      },
      'POST /api/v1/sandbox/authenticate': { client_secret: 'sbx_secret_x', outcome: 'succeed' },
      'POST /v1/test_helpers/disputes/:disputeId/close': { status: 'won' },
    };
    /**
     * Bodies whose acceptance needs a payment waiting on its bank or an open dispute, which the fixture does
     * not make: their own suites send them (test/payments/pay.3ds.test.ts,
     * test/payments/disputes.refund-failures.test.ts).
     */
    const ACCEPTED_ELSEWHERE = new Set([
      'POST /api/v1/sandbox/authenticate',
      'POST /v1/test_helpers/disputes/:disputeId/close',
    ]);

    /** A query each route with a querystring schema accepts. */
    const validQuery = (url: string, f: Fixture): Record<string, string> =>
      url === '/v1/sessions'
        ? { limit: '10', cursor: '0' }
        : { access: url === '/api/v1/session/join' ? f.groupToken : f.organizer };

    test('the route list is complete: merchant API and pay-page API, with and without bodies', () => {
      const names = new Set(routes.map((r) => `${r.method} ${r.url}`));
      for (const name of [
        'POST /v1/sessions',
        'GET /v1/sessions',
        'GET /v1/sessions/:sessionId',
        'POST /v1/sessions/:sessionId/cancel',
        'POST /v1/webhooks',
        'DELETE /v1/webhooks/:webhookId',
        'GET /v1/merchants/me',
        'PUT /api/v1/session/group',
        'POST /api/v1/session/join',
        'GET /api/v1/shares/:shareId',
        'POST /api/v1/shares/:shareId/pay',
        'POST /api/v1/session/cover',
      ])
        assert.ok(names.has(name), `${name} in ${[...names].join(', ')}`);
      // Every route with a body schema has a valid body here to break.
      for (const route of routes.filter(takesBody))
        assert.ok(
          VALID_BODIES[`${route.method} ${route.url}`],
          `${route.method} ${route.url} has no valid body`,
        );
    });

    test('every keyword our request schemas use is one this suite knows how to break', () => {
      for (const route of routes) {
        for (const part of ['body', 'querystring', 'params', 'headers'] as const) {
          if (part === 'body' && !takesBody(route)) continue;
          for (const [keyword, at] of keywordsOf(route.schema?.[part])) {
            assert.ok(BREAKABLE.has(keyword), `${route.method} ${route.url} ${part}${at}: ${keyword}`);
          }
        }
      }
    });

    test('a valid body is accepted, so that breaking one rule of it tests that rule', async () => {
      for (const [name, body] of Object.entries(VALID_BODIES)) {
        if (name === 'POST /api/v1/session/join') continue; // the fixture group is equal: it is, below
        if (ACCEPTED_ELSEWHERE.has(name)) continue;
        const [method = '', url = ''] = name.split(' ');
        const res = await send({ method, url }, await fixture(), { body });
        // The group body's amounts are the schema's to accept; the split rules may then refuse them.
        if (name === 'PUT /api/v1/session/group')
          assert.ok(res.status === 200 || res.body.code === 'invalid_group', res.text);
        else assert.equal(res.status, 200, `${name}: ${res.text}`);
      }
      const joined = await send({ method: 'POST', url: '/api/v1/session/join' }, await fixture(), {
        body: VALID_BODIES['POST /api/v1/session/join'],
      });
      assert.equal(joined.status, 200, joined.text);
    });

    test('a body breaking any one rule of its schema is 4xx in our words', async () => {
      for (const route of routes.filter(takesBody)) {
        const name = `${route.method} ${route.url}`;
        const f = await fixture(route);
        let cases = 0;
        for (const [rule, body] of breaking(route.schema?.body, VALID_BODIES[name], '')) {
          const res = await send(route, f, { body });
          assertClientError(res, `${name}, ${rule}`);
          broken.add(rule.replace(/[ (].*$/, '').replace(/^patternProperties:$/, 'patternProperties'));
          cases++;
        }
        assert.ok(cases >= 5, `${name}: only ${cases} rules broken`);
      }
      // Every kind of rule our schemas hold was broken somewhere.
      for (const keyword of [
        'type',
        'required',
        'additionalProperties',
        'maxProperties',
        'pattern',
        'minItems',
        'maxItems',
        'uniqueItems',
        'minLength',
        'maxLength',
        'minimum',
        'maximum',
        'enum',
        'format',
      ])
        assert.ok(broken.has(keyword), `${keyword} in ${[...broken].join(', ')}`);
    });

    test('a NUL character in any text of a body is 4xx naming the field, on every route with a body', async () => {
      for (const route of routes.filter(takesBody)) {
        const name = `${route.method} ${route.url}`;
        const f = await fixture(route);
        for (const [rule, body] of withNul(VALID_BODIES[name], '')) {
          const res = await send(route, f, { body });
          assertClientError(res, `${name}, ${rule}`);
          assert.match(
            res.body.error,
            / must not contain the NUL character \(\\u0000\)$/,
            `${name}, ${rule}`,
          );
          assert.equal(
            res.body.code,
            rule.startsWith('NUL in cart') || rule.startsWith('NUL in a key of cart')
              ? 'invalid_cart'
              : 'invalid_request',
          );
        }
      }
      const f = await fixture();
      const named = await send({ method: 'POST', url: '/api/v1/session/join' }, f, {
        body: { name: 'Cy\u0000' },
      });
      assert.equal(named.body.error, 'name must not contain the NUL character (\\u0000)');
      const cart = sampleCart({ metadata: { 'order\u0000ref': 'x' } });
      const key = await send({ method: 'POST', url: '/v1/sessions' }, f, { body: { cart } });
      assert.equal(
        key.body.error,
        'cart.metadata["order\\u0000ref"] must not contain the NUL character (\\u0000)',
      );
      assert.equal(key.body.code, 'invalid_cart');
    });

    test('a query string or header breaking any one rule is 4xx in our words', async () => {
      for (const route of routes) {
        const name = `${route.method} ${route.url}`;
        const f = await fixture(route);
        const query = route.schema?.querystring;
        if (query) {
          for (const [rule, sent] of breakingText(query, validQuery(route.url, f))) {
            const res = await send(route, f, { query: sent, body: VALID_BODIES[name] });
            assertClientError(res, `${name}, query: ${rule}`);
          }
        }
        const headers = route.schema?.headers as Any;
        for (const [header, sub] of Object.entries((headers?.properties ?? {}) as Record<string, Any>)) {
          if (typeof sub.maxLength !== 'number') continue;
          const res = await send(route, f, {
            body: VALID_BODIES[name],
            headers: { [header]: 'x'.repeat(sub.maxLength + 1) },
          });
          assertClientError(res, `${name}, header ${header} too long`);
          assert.match(
            res.body.error,
            new RegExp(
              `^the ${header.replace(/(^|-)([a-z])/g, (_m, d, c) => d + c.toUpperCase())} header must be at most`,
            ),
            res.text,
          );
        }
      }
    });

    test('every route, sent odd query strings, path parameters and bodies, never fails nor uses the validator’s words', async () => {
      for (const route of routes) {
        const name = `${route.method} ${route.url}`;
        const f = await fixture(route);
        const queries: Record<string, string | string[]>[] = [
          { limit: 'abc', cursor: '-1', access: '', extra: 'x' },
          { 'a[b]': '1', limit: ['1', '2'] },
          { access: 'x'.repeat(500) },
        ];
        for (const query of queries) {
          assertAnswered(await send(route, f, { query }), `${name}?${queryString(query)}`);
        }
        if (route.url.includes('/:')) {
          for (const odd of ODD_IDS) {
            assertAnswered(
              await send(route, f, { path: pathOf(route.url, f, odd) }),
              `${name} with id ${odd}`,
            );
          }
        }
        if (route.method === 'GET') continue;
        for (const rawBody of ANY_ROUTE_BODIES) {
          assertAnswered(await send(route, f, { rawBody }), `${name} with ${rawBody}`);
        }
        for (const contentType of ['text/plain', 'application/x-www-form-urlencoded']) {
          const res = await send(route, f, { rawBody: 'a=1', headers: { 'content-type': contentType } });
          assertAnswered(res, `${name} as ${contentType}`);
        }
      }
    });

    test('nothing was logged as an error', () => {
      const errors = t.logLines.map((line) => JSON.parse(line)).filter((entry) => entry.level >= 50);
      assert.deepEqual(errors, []);
    });
  });
}

describe('describeErrors: a sentence of ours for every keyword Ajv reports', () => {
  const compile = (schema: object) =>
    validatorCompiler({ schema, httpPart: 'body', method: 'POST', url: '/' }) as ((
      value: unknown,
    ) => boolean) & {
      errors?: ErrorObject[] | null;
    };
  const MODES = { anyOf: [{ const: 'equal' }, { const: 'custom' }] };

  const CASES: [string, object, unknown, string[]][] = [
    [
      'const',
      { type: 'object', properties: { mode: { const: 'equal' } } },
      { mode: 'dutch' },
      ['mode must be "equal" (got "dutch")'],
    ],
    [
      'anyOf of constants',
      { type: 'object', properties: { mode: MODES } },
      { mode: 'dutch' },
      ['mode must be one of "equal", "custom" (got "dutch")'],
    ],
    [
      'oneOf of types',
      { type: 'object', properties: { n: { oneOf: [{ type: 'string' }, { type: 'integer' }] } } },
      { n: true },
      ['n must be a string or an integer'],
    ],
    [
      'anyOf of shapes',
      {
        type: 'object',
        properties: {
          n: {
            anyOf: [
              { type: 'object', required: ['a'] },
              { type: 'string', minLength: 3 },
            ],
          },
        },
      },
      { n: 'x' },
      ['n is none of the forms it may take; either n must be an object, or n must be at least 3 characters'],
    ],
    [
      'oneOf matching twice',
      { type: 'object', properties: { n: { oneOf: [{ type: 'integer' }, { type: 'number' }] } } },
      { n: 1 },
      ['n fits more than one of the forms it may take; send exactly one'],
    ],
    [
      'pattern, with the field’s description',
      {
        type: 'object',
        properties: { ref: { type: 'string', pattern: '^[A-Z]+-\\d+$', description: 'Like ORD-1001.' } },
      },
      { ref: 'x' },
      ['ref is not in the expected format: Like ORD-1001'],
    ],
    [
      'format',
      { type: 'object', properties: { at: { type: 'string', format: 'date-time' } } },
      { at: 'soon' },
      ['at must be an ISO 8601 date and time such as 2026-11-21T10:00:00Z'],
    ],
    [
      'format uri',
      { type: 'object', properties: { u: { type: 'string', format: 'uri' } } },
      { u: 'no' },
      ['u must be an absolute URL such as https://example.com/path'],
    ],
    [
      'propertyNames',
      { type: 'object', properties: { m: { type: 'object', propertyNames: { maxLength: 3 } } } },
      { m: { abcd: 1 } },
      ['the key "abcd" of m must be at most 3 characters'],
    ],
    [
      'patternProperties',
      {
        type: 'object',
        properties: { m: { type: 'object', patternProperties: { '^.*$': { type: 'string' } } } },
      },
      { m: { k: 1 } },
      ['m.k must be a string'],
    ],
    [
      'minProperties',
      { type: 'object', properties: { m: { type: 'object', minProperties: 1 } } },
      { m: {} },
      ['m must have at least 1 key'],
    ],
    [
      'maxProperties',
      { type: 'object', properties: { m: { type: 'object', maxProperties: 1 } } },
      { m: { a: 1, b: 2 } },
      ['m must have at most 1 key'],
    ],
    [
      'dependencies',
      { type: 'object', dependencies: { a: ['b'] } },
      { a: 1 },
      ['b is required when a is given'],
    ],
    [
      'contains',
      { type: 'object', properties: { l: { type: 'array', contains: { const: 'x' } } } },
      { l: ['y'] },
      ['l must contain at least 1 element of the expected form'],
    ],
    [
      'uniqueItems',
      { type: 'object', properties: { l: { type: 'array', uniqueItems: true } } },
      { l: [1, 1] },
      ['l must not contain duplicates (l[0] and l[1] are the same)'],
    ],
    [
      'additionalItems',
      {
        type: 'object',
        properties: { l: { type: 'array', items: [{ type: 'string' }], additionalItems: false } },
      },
      { l: ['a', 'b'] },
      ['l must have at most 1 element'],
    ],
    [
      'exclusiveMinimum',
      { type: 'object', properties: { n: { type: 'number', exclusiveMinimum: 0 } } },
      { n: 0 },
      ['n must be greater than 0'],
    ],
    [
      'exclusiveMaximum',
      { type: 'object', properties: { n: { type: 'number', exclusiveMaximum: 1 } } },
      { n: 1 },
      ['n must be less than 1'],
    ],
    [
      'multipleOf',
      { type: 'object', properties: { n: { type: 'number', multipleOf: 5 } } },
      { n: 7 },
      ['n must be a multiple of 5'],
    ],
    [
      'not',
      { type: 'object', properties: { n: { not: { type: 'string' } } } },
      { n: 'x' },
      ['n is a value that is not accepted here'],
    ],
    [
      'if/then',
      // biome-ignore lint/suspicious/noThenProperty: a JSON schema's then, not a promise's
      { type: 'object', if: { required: ['a'] }, then: { required: ['b'] } },
      { a: 1 },
      ['b is required'],
    ],
    ['false schema', { type: 'object', properties: { x: false } }, { x: 1 }, ['x is not accepted here']],
    [
      'type with null',
      { type: 'object', properties: { x: { type: ['string', 'null'] } } },
      { x: 1 },
      ['x must be a string or null'],
    ],
    [
      'boolean type',
      { type: 'object', properties: { x: { type: 'boolean' } } },
      { x: 1 },
      ['x must be true or false'],
    ],
    [
      'enum',
      { type: 'object', properties: { x: { enum: ['a', 'b'] } } },
      { x: 'c' },
      ['x must be one of "a", "b" (got "c")'],
    ],
    ['required', { type: 'object', required: ['x'] }, {}, ['x is required']],
  ];

  for (const [name, schema, value, expected] of CASES) {
    test(name, () => {
      const validate = compile(schema);
      assert.equal(validate(value), false);
      const sentences = describeErrors(validate.errors ?? []);
      assert.deepEqual(sentences, expected);
      for (const sentence of sentences) assertOurWords(sentence, name);
    });
  }

  test('a keyword we have no sentence for still gets a sentence of ours, never Ajv’s message', () => {
    const error: ErrorObject = {
      keyword: 'someFutureKeyword',
      instancePath: '/cart/items/0',
      schemaPath: '#/someFutureKeyword',
      params: {},
      message: 'must pass "someFutureKeyword" keyword validation',
      parentSchema: { description: 'An item of the cart.' },
    };
    assert.equal(
      describeError(error, ''),
      'cart.items[0] is not a value this field accepts: An item of the cart',
    );
    assert.equal(
      describeErrors([{ ...error, parentSchema: {} }])[0],
      'cart.items[0] is not a value this field accepts',
    );
  });
});
