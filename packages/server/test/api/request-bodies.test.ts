// Request bodies and URLs the API refuses before anything runs (docs/api.md#errors): JSON nested deeper
// than 64 levels is 400 invalid_json, the POSTs that take no body accept none or {} and refuse anything
// else with one sentence of ours, and NUL is refused in the URL and in any string of a body. Each of
// these once answered 500 (deep JSON with an Idempotency-Key; NUL on PostgreSQL, which cannot store it).
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp, type TestResponse } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { createSession, organizerToken, SESSION_ENV } from '../helpers/sessions.ts';

const NO_BODY = 'This request takes no body; send none or {}.';

function assertError(res: TestResponse, status: number, code: string, message?: string | RegExp) {
  assert.equal(res.status, status, res.text);
  assert.equal(res.body.code, code, res.text);
  assert.match(res.body.request_id, /^req_/);
  assert.equal(res.headers.get('x-request-id'), res.body.request_id);
  if (typeof message === 'string') assert.equal(res.body.error, message);
  else if (message) assert.match(res.body.error, message);
}

const nested = (depth: number, open = '[', close = ']', inner = '') =>
  open.repeat(depth) + inner + close.repeat(depth);

for (const dialect of DIALECTS) {
  describe(`request bodies on ${dialect.name}`, { skip: dialect.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(dialect, {
        env: { ...SESSION_ENV, RATE_LIMIT_WEBHOOKS_WRITE: '10000', RATE_LIMIT_WEBHOOKS_READ: '10000' },
      });
    });
    after(() => t?.close());

    /** The body-less POSTs, each on a session of its own so that none is closed by another. */
    async function bodylessPosts(): Promise<{ name: string; path: string; key?: string }[]> {
      const [a, b, c, d] = await Promise.all([1, 2, 3, 4].map(() => createSession(t)));
      const key = t.merchant.secretKey;
      return [
        { name: 'cancel', path: `/v1/sessions/${a?.session_id}/cancel`, key },
        { name: 'remind', path: `/v1/sessions/${b?.session_id}/remind`, key },
        { name: 'expire', path: `/v1/test_helpers/sessions/${c?.session_id}/expire`, key },
        { name: 'pay cancel', path: `/api/v1/session/cancel?access=${organizerToken(d as never)}` },
      ];
    }

    test('5,000 nested [ with an Idempotency-Key is 400 invalid_json on every body-less POST (was 500)', async () => {
      const routes = [
        ...(await bodylessPosts()),
        { name: 'pay cancel, unknown token', path: '/api/v1/session/cancel?access=nope' },
      ];
      for (const route of routes) {
        for (const body of [nested(5000), nested(5000, '{"a":', '}', '1')]) {
          const res = await t.request('POST', route.path, {
            key: route.key,
            rawBody: body,
            headers: { 'idempotency-key': `deep-${route.name}-${body.length}` },
          });
          assertError(res, 400, 'invalid_json', /nested deeper than 64 levels/);
        }
      }
      assert.ok(!t.logLines.some((line) => JSON.parse(line).level >= 50), 'nothing logged as an error');
    });

    test('a body whose bytes are not UTF-8 is 400 invalid_json, and nothing is made of it', async () => {
      const key = t.merchant.secretKey;
      const count = async () => (await t.request('GET', '/v1/webhooks', { key })).body.data.length as number;
      const before = await count();
      const json = Buffer.from('{"url":"https://hooks.example/XX","events":["*"]}', 'utf8');
      const at = json.indexOf('XX');
      json[at] = 0xff;
      json[at + 1] = 0xfe;
      const res = await fetch(`${t.baseUrl}/v1/webhooks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: json,
      });
      const body = await res.json();
      assert.equal(res.status, 400);
      assert.equal(body.code, 'invalid_json');
      assert.equal(body.error, 'The request body is not valid JSON: it is not UTF-8 text.');
      assert.equal(await count(), before);
      // The same body in UTF-8 (ÿþ written as UTF-8) is taken.
      const ok = await t.request('POST', '/v1/webhooks', {
        key,
        body: { url: 'https://hooks.example/\u00ff\u00fe', events: ['*'] },
      });
      assert.notEqual(ok.body.code, 'invalid_json', ok.text);
    });

    test('64 levels are JSON as any other; 65 are refused, on routes with a body too', async () => {
      const key = t.merchant.secretKey;
      const at64 = await t.request('POST', '/v1/webhooks', { key, rawBody: nested(64) });
      assertError(at64, 400, 'invalid_request', 'body must be an object');
      const at65 = await t.request('POST', '/v1/webhooks', { key, rawBody: nested(65) });
      assertError(
        at65,
        400,
        'invalid_json',
        'The request body is not valid JSON: it is nested deeper than 64 levels.',
      );
      // Brackets inside strings are text, not nesting; escaped quotes do not end a string.
      const inString = JSON.stringify({ url: `https://hooks.example/${'['.repeat(500)}\\"{`, events: ['*'] });
      const res = await t.request('POST', '/v1/webhooks', { key, rawBody: inString });
      assert.ok(res.status !== 400 || res.body.code !== 'invalid_json', res.text);
      const objects = await t.request('POST', '/v1/webhooks', {
        key,
        rawBody: `{"url":"https://hooks.example/x","events":["*"],"x":${nested(70, '{"a":', '}', '1')}}`,
      });
      assertError(objects, 400, 'invalid_json', /nested deeper than 64 levels/);
    });

    test('the prototype-poisoning protection still holds', async () => {
      for (const rawBody of [
        '{"__proto__":{"x":1},"url":"https://hooks.example/gc","events":["*"]}',
        '{"constructor":{"prototype":{"x":1}},"url":"https://hooks.example/gc","events":["*"]}',
      ]) {
        const res = await t.request('POST', '/v1/webhooks', { key: t.merchant.secretKey, rawBody });
        assertError(res, 400, 'invalid_json');
      }
    });

    test('a body-less POST accepts no body, an empty body or {}', async () => {
      for (const rawBody of [undefined, '', '{}', ' { } ']) {
        for (const route of await bodylessPosts()) {
          const res = await t.request('POST', route.path, { key: route.key, rawBody });
          assert.equal(res.status, 200, `${route.name} ${JSON.stringify(rawBody)}: ${res.text}`);
        }
      }
    });

    test('a body-less POST refuses any other body with our sentence, with or without a key', async () => {
      const junk = ['[]', 'null', '0', '"x"', 'true', '{"a":1}', '{"__proto__x":1}', nested(64), '[{}]'];
      for (const route of await bodylessPosts()) {
        for (const [i, rawBody] of junk.entries()) {
          for (const idempotencyKey of [undefined, `junk-${route.name}-${i}`]) {
            const res = await t.request('POST', route.path, {
              key: route.key,
              rawBody,
              headers: idempotencyKey ? { 'idempotency-key': idempotencyKey } : {},
            });
            assertError(res, 400, 'invalid_request', NO_BODY);
            assert.deepEqual(res.body.details, [NO_BODY], res.text);
          }
        }
        // Nothing ran: the session is still open, so the route still answers 200.
        const ok = await t.request('POST', route.path, { key: route.key });
        assert.equal(ok.status, 200, `${route.name}: ${ok.text}`);
      }
    });

    test('NUL in a path parameter or a query parameter is 400 invalid_request on every route (was 500 on PostgreSQL)', async () => {
      const created = await createSession(t);
      const key = t.merchant.secretKey;
      const cases: [string, string, string | undefined][] = [
        ['GET', '/v1/sessions/%00', key],
        ['GET', `/v1/sessions/${created.session_id}%00`, key],
        ['POST', '/v1/sessions/gs_%00/cancel', key],
        ['POST', '/v1/sessions/gs_%00/remind', key],
        ['POST', '/v1/test_helpers/sessions/gs_%00/expire', key],
        ['DELETE', '/v1/webhooks/we_%00', key],
        ['GET', '/v1/sessions?limit=%00', key],
        ['GET', '/api/v1/shares/shr_%00', undefined],
        ['GET', '/api/v1/session?access=gat_%00', undefined],
        ['GET', `/api/v1/session?access=${created.group_access_token}%00`, undefined],
        ['POST', '/api/v1/session/join?access=gat_%00', undefined],
        ['POST', '/api/v1/session/cancel?access=at_%00', undefined],
      ];
      for (const [method, path, k] of cases) {
        const res = await t.request(method, path, {
          key: k,
          body: method === 'POST' ? { name: 'Ada' } : undefined,
        });
        assertError(res, 400, 'invalid_request', 'The request URL must not contain the NUL character (%00).');
      }
      assert.ok(!t.logLines.some((line) => JSON.parse(line).level >= 50), 'nothing logged as an error');
    });

    test('NUL in any string or key of a body is 400, naming the field (was 500 on PostgreSQL)', async () => {
      const created = await createSession(t);
      const key = t.merchant.secretKey;
      const cart = { total: 100, currency: 'usd', items: [{ name: 'Cake', quantity: 1, unit_price: 100 }] };
      const cases: [string, string, string | undefined, unknown, string, string][] = [
        [
          'POST',
          '/v1/sessions',
          key,
          { cart, customer: { name: 'Ada\u0000' } },
          'invalid_request',
          'customer.name',
        ],
        [
          'POST',
          '/v1/sessions',
          key,
          { cart, customer: { phone: '\u0000' } },
          'invalid_request',
          'customer.phone',
        ],
        [
          'POST',
          '/v1/sessions',
          key,
          { cart: { ...cart, metadata: { order_ref: 'A\u0000' } } },
          'invalid_cart',
          'cart.metadata.order_ref',
        ],
        [
          'POST',
          '/v1/sessions',
          key,
          { cart: { ...cart, metadata: { 'k\u0000': 'v' } } },
          'invalid_cart',
          'cart.metadata["k\\u0000"]',
        ],
        [
          'POST',
          `/api/v1/session/join?access=${created.group_access_token}`,
          undefined,
          { name: 'Ben\u0000' },
          'invalid_request',
          'name',
        ],
        [
          'PUT',
          `/api/v1/session/group?access=${organizerToken(created)}`,
          undefined,
          { mode: 'equal', members: [{ name: 'Ada' }, { name: '\u0000' }] },
          'invalid_request',
          'members[1].name',
        ],
        [
          'POST',
          '/v1/webhooks',
          key,
          { url: 'https://h.example/\u0000', events: ['*'] },
          'invalid_request',
          'url',
        ],
      ];
      for (const [method, path, k, body, code, field] of cases) {
        // JSON.stringify writes each NUL as the escape \u0000, as any client would.
        const res = await t.request(method, path, { key: k, body });
        assertError(res, 400, code, `${field} must not contain the NUL character (\\u0000)`);
      }
      // An escaped backslash followed by u0000 is text, not NUL.
      const text = await t.request('POST', `/api/v1/session/join?access=${created.group_access_token}`, {
        rawBody: '{"name":"Cy \\\\u0000"}',
      });
      assert.equal(text.status, 200, text.text);
      assert.equal(text.body.member.name, 'Cy \\u0000');
      assert.ok(!t.logLines.some((line) => JSON.parse(line).level >= 50), 'nothing logged as an error');
    });

    test('a HEAD request whose URL is not valid HTTP is answered 400 without a body, which a client can read', async () => {
      const url = new URL(t.baseUrl);
      for (const method of ['HEAD', 'GET']) {
        // A raw byte over 0x7f in the request line: Node's parser refuses it before Fastify sees it.
        const answer = await new Promise<{ status: number; id: unknown; text: string } | string>(
          (resolve) => {
            const req = httpRequest(
              { host: url.hostname, port: url.port, method, path: '/v1/\xff' },
              (res) => {
                let text = '';
                res.on('data', (chunk) => {
                  text += chunk;
                });
                res.on('end', () =>
                  resolve({ status: res.statusCode ?? 0, id: res.headers['x-request-id'], text }),
                );
              },
            );
            req.on('error', (error) => resolve(`client error: ${error.message}`));
            req.end();
          },
        );
        assert.ok(typeof answer === 'object', `${method}: ${answer}`);
        assert.equal(answer.status, 400);
        assert.match(String(answer.id), /^req_/);
        if (method === 'HEAD') assert.equal(answer.text, '');
        else assert.equal(JSON.parse(answer.text).request_id, answer.id);
      }
    });

    test('the OpenAPI document does not say the body-less POSTs need a body', async () => {
      const doc = (await t.request('GET', '/v1/openapi.json')).body;
      for (const [path, method] of [
        ['/sessions/{sessionId}/cancel', 'post'],
        ['/sessions/{sessionId}/remind', 'post'],
        ['/test_helpers/sessions/{sessionId}/expire', 'post'],
      ] as const) {
        const operation = doc.paths[path][method];
        assert.equal(operation.requestBody?.required, false, `${method} ${path}`);
      }
      const create = doc.paths['/sessions'].post;
      assert.equal(create.requestBody.required, true);
    });
  });
}
