// The error shape (docs/api.md#errors): every answer names its request, unknown routes and bodies
// that are not JSON are 4xx in our shape, and no body a client can send makes the server fail.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { RELAXED_LIMITS, startTestApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { assertError } from '../helpers/errors.ts';
import { rawHttp } from '../helpers/raw-http.ts';

const VALID = { url: 'https://hooks.example/gc', events: ['group.funded'] };
const deep = (depth: number, open: string, close: string, inner = '') =>
  open.repeat(depth) + inner + close.repeat(depth);

/** Bodies a careless or hostile client might send to POST /v1/webhooks; none may create anything. */
const HOSTILE_BODIES: [string, string][] = [
  ['an array', '[]'],
  ['an array holding a valid body', JSON.stringify([VALID])],
  ['null', 'null'],
  ['true', 'true'],
  ['a number', '42'],
  ['a string', '"https://hooks.example/gc"'],
  ['an empty object', '{}'],
  ['null fields', '{"url":null,"events":null}'],
  ['a number that overflows to Infinity', '{"url":"https://hooks.example/gc","events":[1e400]}'],
  ['a huge integer url', '{"url":123456789012345678901234567890,"events":["*"]}'],
  ['events as a string', '{"url":"https://hooks.example/gc","events":"*"}'],
  ['events as an object', '{"url":"https://hooks.example/gc","events":{"0":"*"}}'],
  ['url as an array', '{"url":["https://hooks.example/gc"],"events":["*"]}'],
  ['url as an operator object', '{"url":{"$gt":""},"events":["*"]}'],
  ['an empty events list', '{"url":"https://hooks.example/gc","events":[]}'],
  ['duplicate events', '{"url":"https://hooks.example/gc","events":["*","*"]}'],
  ['an unknown field', '{"url":"https://hooks.example/gc","events":["*"],"secret":"whsec_mine"}'],
  ['__proto__', '{"__proto__":{"isAdmin":true},"url":"https://hooks.example/gc","events":["*"]}'],
  ['nested __proto__', '{"url":"https://hooks.example/gc","events":["*"],"x":{"__proto__":{"a":1}}}'],
  [
    'constructor.prototype',
    '{"constructor":{"prototype":{"a":1}},"url":"https://hooks.example/gc","events":["*"]}',
  ],
  ['deeply nested arrays', deep(50_000, '[', ']')],
  ['deeply nested events', `{"url":"https://hooks.example/gc","events":${deep(50_000, '[', ']')}}`],
  ['deeply nested objects', deep(20_000, '{"a":', '}', '1')],
  ['an empty url', '{"url":"","events":["*"]}'],
  ['a url that is not a url', '{"url":"not a url","events":["*"]}'],
  ['a javascript: url', '{"url":"javascript:alert(1)","events":["*"]}'],
  ['an ftp url', '{"url":"ftp://hooks.example/gc","events":["*"]}'],
  ['a url with credentials', '{"url":"https://user:pw@hooks.example/gc","events":["*"]}'],
  ['an overlong url', JSON.stringify({ url: `https://hooks.example/${'x'.repeat(5000)}`, events: ['*'] })],
  ['an unknown event type', '{"url":"https://hooks.example/gc","events":["group.hacked"]}'],
  [
    'too many events',
    JSON.stringify({ url: VALID.url, events: Array.from({ length: 17 }, (_, i) => `e${i}`) }),
  ],
  ['truncated JSON', '{"url":"https://hooks.example/gc","events":["*"'],
  ['trailing garbage', '{"url":"https://hooks.example/gc","events":["*"]} x'],
  ['single quotes', "{'url':'https://hooks.example/gc','events':['*']}"],
  ['a lone surrogate in the url', '{"url":"https://hooks.example/\\ud800","events":["*"]}'],
  ['a NUL in the host', '{"url":"https://hooks\\u0000.example/gc","events":["*"]}'],
  ['a long string of digits', `{"url":"https://hooks.example/gc","events":[${'9'.repeat(100_000)}]}`],
];

for (const dialect of DIALECTS) {
  describe(`errors on ${dialect.name}`, { skip: dialect.skip }, () => {
    let t: TestApp;
    before(async () => {
      // Route limits are not under test here, and the table below sends many requests.
      t = await startTestApp(dialect, { env: RELAXED_LIMITS });
    });
    after(() => t?.close());

    const webhookCount = async () =>
      (await t.request('GET', '/v1/webhooks', { key: t.merchant.secretKey })).body.data.length;

    test('every answer carries request_id, the same as the X-Request-Id header', async () => {
      const key = t.merchant.secretKey;
      const answers = [
        await t.request('GET', '/v1/merchants/me', { key }),
        await t.request('GET', '/v1/webhooks', { key }),
        await t.request('GET', '/v1/merchants/me'),
        await t.request('GET', '/v1/merchants/me', { key: t.merchant.publishableKey }),
        await t.request('GET', '/v1/nowhere'),
        await t.request('POST', '/v1/webhooks', { key, rawBody: '{' }),
        await t.request('DELETE', '/v1/webhooks/we_unknown', { key }),
        await t.request('GET', '/healthz'),
      ];
      const ids = new Set<string>();
      for (const res of answers) {
        assert.match(res.body.request_id, /^req_[0-9A-Za-z]{10,}$/, res.text);
        assert.equal(res.headers.get('x-request-id'), res.body.request_id);
        ids.add(res.body.request_id);
      }
      assert.equal(ids.size, answers.length, 'request ids are unique');
    });

    test('an unknown route is 404 route_not_found in the error shape', async () => {
      for (const [method, path] of [
        ['GET', '/v1/nowhere'],
        ['GET', '/'],
        ['POST', '/v1/merchants/me'],
        ['PATCH', '/v1/webhooks'],
        ['GET', '/v2/merchants/me'],
      ] as const) {
        const res = await t.request(method, path, { key: t.merchant.secretKey });
        assertError(res, 404, 'route_not_found');
        assert.deepEqual(Object.keys(res.body).sort(), ['code', 'error', 'request_id']);
      }
    });

    test('a body that is not valid JSON is 400 invalid_json, saying why, not asking for the Content-Type', async () => {
      // The reason is the JSON parser's own, whose wording Node may change; the position is what matters.
      const cases: [string, RegExp][] = [
        ['{"url":', /^The request body is not valid JSON: Unexpected end of JSON input\.$/],
        ['{"url":"https://hooks.example/gc"} x', /^The request body is not valid JSON: .* at position 35\b/],
      ];
      for (const [rawBody, message] of cases) {
        const res = await t.request('POST', '/v1/webhooks', { key: t.merchant.secretKey, rawBody });
        assertError(res, 400, 'invalid_json');
        assert.match(res.body.error, message);
        assert.doesNotMatch(res.body.error, /Content-Type/);
      }
      // JSON that could poison prototypes is valid JSON, and is refused as such.
      const poisoned = await t.request('POST', '/v1/webhooks', {
        key: t.merchant.secretKey,
        rawBody: '{"__proto__":{"isAdmin":true},"url":"https://hooks.example/gc","events":["*"]}',
      });
      assertError(poisoned, 400, 'invalid_json');
      assert.equal(
        poisoned.body.error,
        'The request body uses a key that is refused (__proto__, or constructor holding prototype); remove it.',
      );
    });

    test('a body that is not application/json is 400, not 415, and names the Content-Type sent', async () => {
      for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
        const res = await t.request('POST', '/v1/webhooks', {
          key: t.merchant.secretKey,
          rawBody: contentType === 'text/plain' ? JSON.stringify(VALID) : 'url=https://hooks.example',
          headers: { 'content-type': contentType },
        });
        assertError(res, 400, 'invalid_json');
        assert.equal(
          res.body.error,
          'The request body must be JSON sent with Content-Type: application/json; this one came with ' +
            `Content-Type: "${contentType}".`,
        );
      }
      assert.equal(await webhookCount(), 0);
    });

    test('an empty body where one is required is 400', async () => {
      const res = await t.request('POST', '/v1/webhooks', { key: t.merchant.secretKey, rawBody: '' });
      assertError(res, 400);
    });

    test('an empty body with Content-Type: application/json is accepted where no body is needed', async () => {
      const res = await t.request('DELETE', '/v1/webhooks/we_unknown', {
        key: t.merchant.secretKey,
        rawBody: '',
      });
      assertError(res, 404, 'webhook_not_found');
    });

    test('a body over the limit is 413 body_too_large', async () => {
      const big = JSON.stringify({ url: VALID.url, events: ['*'], pad: 'x'.repeat(300 * 1024) });
      const res = await t.request('POST', '/v1/webhooks', { key: t.merchant.secretKey, rawBody: big });
      assertError(res, 413, 'body_too_large');
    });

    test('a URL with a broken percent-escape or an overlong segment is 400 in the error shape', async () => {
      for (const path of ['/v1/webhooks/%E0%A4%A', '/v1/%zz', `/v1/webhooks/we_${'x'.repeat(500)}`]) {
        // fetch would normalize or refuse these URLs: sent byte for byte.
        const res = await rawHttp(t.baseUrl, {
          method: 'DELETE',
          path,
          headers: { authorization: `Bearer ${t.merchant.secretKey}` },
        });
        assertError(res, 400, 'invalid_request', path);
      }
    });

    test('what is not HTTP, or has headers over the limit, is answered in the error shape', async () => {
      const cases: [string, number, string][] = [
        ['NONSENSE\r\n\r\n', 400, 'invalid_request'],
        ['GET /v1/webhooks HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n', 400, 'invalid_request'],
        [
          `GET /v1/webhooks HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
          431,
          'headers_too_large',
        ],
      ];
      for (const [bytes, status, code] of cases) {
        const res = await rawHttp(t.baseUrl, bytes);
        assert.match(res.raw, new RegExp(`^HTTP/1.1 ${status} `));
        assertError(res, status, code);
      }
    });

    test('a Content-Length that exceeds the body sent is refused, not waited for forever', async () => {
      const res = await rawHttp(t.baseUrl, {
        method: 'POST',
        path: '/v1/webhooks',
        headers: {
          authorization: `Bearer ${t.merchant.secretKey}`,
          'content-type': 'application/json',
          'content-length': '2',
        },
        body: '{"url":"https://hooks.example"}',
      }).then(
        ({ status, raw }) => ({ status, raw }),
        (error: Error) => ({ status: 0, raw: error.message }),
      );
      assert.ok(res.status === 0 || (res.status >= 400 && res.status < 500), JSON.stringify(res));
      assert.equal(await webhookCount(), 0);
    });

    for (const [name, body] of HOSTILE_BODIES) {
      test(`POST /v1/webhooks with ${name} is 4xx and creates nothing`, async () => {
        for (const idempotencyKey of [undefined, `hostile-${name.replace(/\W+/g, '-')}`]) {
          const res = await t.request('POST', '/v1/webhooks', {
            key: t.merchant.secretKey,
            rawBody: body,
            headers: idempotencyKey ? { 'idempotency-key': idempotencyKey } : {},
          });
          assert.ok(res.status >= 400 && res.status < 500, `${res.status} ${res.text.slice(0, 300)}`);
          assertError(res, res.status);
        }
        assert.equal(await webhookCount(), 0);
      });
    }

    test('the server still answers after all of that', async () => {
      const res = await t.request('POST', '/v1/webhooks', { key: t.merchant.secretKey, body: VALID });
      assert.equal(res.status, 200, res.text);
      assert.equal(await webhookCount(), 1);
      assert.ok(!t.logLines.some((line) => JSON.parse(line).level >= 50), 'nothing logged as an error');
    });
  });
}
