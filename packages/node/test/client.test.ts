// The API client against a server on a loopback port that answers as the API would, one scripted answer
// per request: what is retried (429, 503, no answer) and what is not, the Idempotency-Key kept across the
// retries of one call, Retry-After honoured, query strings, and the errors a merchant gets.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import { GroupCheckout, GroupCheckoutError } from '../src/index.ts';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  at: number;
}

interface Answer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Close the connection without answering. */
  hangUp?: boolean;
}

const KEY = 'svc_sk_test_4eC39HqLyjWDarjtT1zdp7dcAAAA';
let server: Server;
let baseUrl: string;
let answers: Answer[] = [];
let seen: Seen[] = [];

const errorBody = (code: string, error: string, extra: object = {}) => ({
  request_id: `req_${seen.length}`,
  error,
  code,
  ...extra,
});

before(async () => {
  server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, at: Date.now() });
    const answer = answers.shift() ?? {
      status: 500,
      body: errorBody('internal_error', 'no answer scripted'),
    };
    if (answer.hangUp) return req.socket.destroy();
    res.writeHead(answer.status, {
      'content-type': 'application/json',
      'x-request-id': `req_${seen.length}`,
      ...answer.headers,
    });
    res.end(typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
after(() => new Promise((resolve) => server.close(resolve)));
beforeEach(() => {
  answers = [];
  seen = [];
});

const client = (options: { maxRetries?: number; timeoutMs?: number } = {}) =>
  new GroupCheckout(KEY, { baseUrl, ...options });

const cart = { total: 1000, currency: 'usd', items: [{ name: 'Tent', quantity: 1, unit_price: 1000 }] };
const created = {
  request_id: 'req_1',
  session_id: 'gs_1',
  session_url: 'https://pay.example/session/gs_1?access=at_1',
  status: 'pending',
  expires_at: '2026-11-21T10:00:00.000Z',
  merchant_fee_rate: 0.0201,
  consumer_fee_rate: 0.01,
  group_access_token: 'gat_1',
};

describe('retries', () => {
  test('429 with Retry-After, then 200: retried once, after Retry-After, with the same Idempotency-Key', async () => {
    answers = [
      { status: 429, headers: { 'retry-after': '1' }, body: errorBody('rate_limited', 'Too many requests.') },
      { status: 200, body: created },
    ];
    const session = await client().sessions.create({ cart });
    assert.equal(session.session_id, 'gs_1');
    assert.equal(seen.length, 2);
    const [first, second] = seen as [Seen, Seen];
    assert.match(String(first.headers['idempotency-key']), /^[0-9a-f-]{36}$/);
    assert.equal(second.headers['idempotency-key'], first.headers['idempotency-key']);
    assert.equal(second.body, first.body);
    assert.ok(second.at - first.at >= 950, `waited ${second.at - first.at} ms, Retry-After said 1 s`);
  });

  test('503 on every try: gives up after maxRetries with the last error, status, code and request_id', async () => {
    const unavailable = (id: string) => ({
      status: 503,
      headers: { 'retry-after': '0' },
      body: {
        request_id: id,
        error: 'The payment processor failed; nothing was charged.',
        code: 'upstream_error',
      },
    });
    answers = [unavailable('req_a'), unavailable('req_b'), unavailable('req_c')];
    const error = await client({ maxRetries: 1 })
      .sessions.cancel('gs_1')
      .then(
        () => assert.fail('resolved'),
        (e: unknown) => e,
      );
    assert.ok(error instanceof GroupCheckoutError);
    assert.equal(error.status, 503);
    assert.equal(error.code, 'upstream_error');
    assert.equal(error.request_id, 'req_b');
    assert.equal(error.message, 'The payment processor failed; nothing was charged.');
    assert.equal(seen.length, 2, 'one try and one retry');
    assert.equal(seen[1]?.headers['idempotency-key'], seen[0]?.headers['idempotency-key']);
    assert.equal(answers.length, 1, 'the third answer was never asked for');
  });

  test('maxRetries defaults to 2: three tries in all', async () => {
    const busy = () => ({
      status: 429,
      headers: { 'retry-after': '0' },
      body: errorBody('rate_limited', 'Too many requests.'),
    });
    answers = [busy(), busy(), busy(), busy()];
    await assert.rejects(client().merchants.me(), { code: 'rate_limited', status: 429 });
    assert.equal(seen.length, 3);
  });

  test('400 is not retried, and carries details', async () => {
    answers = [
      {
        status: 400,
        body: {
          request_id: 'req_bad',
          error: 'cart.items[0].quantity must be at least 1',
          code: 'invalid_cart',
          details: ['cart.items[0].quantity must be at least 1', 'cart.total must equal the sum'],
        },
      },
      { status: 200, body: created },
    ];
    await assert.rejects(client().sessions.create({ cart }), (e: unknown) => {
      assert.ok(e instanceof GroupCheckoutError);
      assert.equal(e.status, 400);
      assert.equal(e.code, 'invalid_cart');
      assert.equal(e.request_id, 'req_bad');
      assert.deepEqual(e.details, [
        'cart.items[0].quantity must be at least 1',
        'cart.total must equal the sum',
      ]);
      return true;
    });
    assert.equal(seen.length, 1);
  });

  test('a declined card carries decline_code', async () => {
    answers = [
      {
        status: 402,
        body: errorBody('card_declined', 'The card was declined.', { decline_code: 'insufficient_funds' }),
      },
    ];
    await assert.rejects(client().sessions.get('gs_1'), {
      name: 'GroupCheckoutError',
      code: 'card_declined',
      decline_code: 'insufficient_funds',
    });
  });

  test('409 idempotency_in_progress is retried: the first try with the key is still running', async () => {
    answers = [
      {
        status: 409,
        body: errorBody('idempotency_in_progress', 'A request with this key is running.'),
      },
      { status: 200, body: created },
    ];
    await client().sessions.create({ cart }, { idempotencyKey: 'order-1001' });
    assert.deepEqual(
      seen.map((s) => s.headers['idempotency-key']),
      ['order-1001', 'order-1001'],
    );
  });

  test('a dropped connection is retried, and after the last try says the service could not be reached', async () => {
    answers = [
      { status: 0, hangUp: true },
      { status: 200, body: { request_id: 'req_2', data: [] } },
    ];
    assert.deepEqual((await client().webhooks.list()).data, []);
    answers = [
      { status: 0, hangUp: true },
      { status: 0, hangUp: true },
    ];
    await assert.rejects(client({ maxRetries: 1 }).webhooks.list(), {
      name: 'GroupCheckoutError',
      code: 'connection_error',
      status: null,
      request_id: null,
      message: /Could not reach Group Checkout at http:\/\/127\.0\.0\.1:\d+\/v1 \(2 tries\)/,
    });
  });
});

describe('requests', () => {
  test('GET carries the key and no Idempotency-Key; list parameters become the query string', async () => {
    const page = { request_id: 'req_1', data: [], has_more: false, next_cursor: null };
    answers = [
      { status: 200, body: page },
      { status: 200, body: page },
    ];
    const answer = await client().sessions.list({ limit: 10, cursor: 1732183200000 });
    assert.deepEqual(answer, page);
    await client().events.list({ type: 'group.funded', session_id: 'gs_a&b=c', limit: 5 });
    const [list, events] = seen as [Seen, Seen];
    assert.equal(list.method, 'GET');
    assert.equal(list.url, '/v1/sessions?limit=10&cursor=1732183200000');
    assert.equal(list.headers.authorization, `Bearer ${KEY}`);
    assert.equal(list.headers['idempotency-key'], undefined);
    assert.equal(list.headers['content-type'], undefined);
    assert.equal(events.url, '/v1/events?type=group.funded&session_id=gs_a%26b%3Dc&limit=5');
  });

  test('each call has the method and path of its route; ids are escaped', async () => {
    const calls: [string, (c: GroupCheckout) => Promise<unknown>][] = [
      ['GET /v1/sessions', (c) => c.sessions.list()],
      ['GET /v1/sessions/gs%2F..%2Fx', (c) => c.sessions.get('gs/../x')],
      ['POST /v1/sessions/gs_1/cancel', (c) => c.sessions.cancel('gs_1')],
      ['POST /v1/sessions/gs_1/remind', (c) => c.sessions.remind('gs_1')],
      ['GET /v1/events', (c) => c.events.list()],
      ['GET /v1/events/evt_1', (c) => c.events.get('evt_1')],
      ['POST /v1/events/evt_1/redeliver', (c) => c.events.redeliver('evt_1')],
      ['GET /v1/webhooks', (c) => c.webhooks.list()],
      ['POST /v1/webhooks', (c) => c.webhooks.create({ url: 'https://shop.example/hooks', events: ['*'] })],
      ['DELETE /v1/webhooks/we_1', (c) => c.webhooks.delete('we_1')],
      ['POST /v1/webhooks/we_1/rotate_secret', (c) => c.webhooks.rotateSecret('we_1')],
      ['GET /v1/merchants/me', (c) => c.merchants.me()],
    ];
    for (const [route, call] of calls) {
      answers = [{ status: 200, body: { request_id: 'req_1' } }];
      await call(new GroupCheckout(KEY, { baseUrl: `${baseUrl}/` }));
      const request = seen.at(-1) as Seen;
      assert.equal(`${request.method} ${request.url}`, route);
      assert.equal(request.headers['idempotency-key'] !== undefined, request.method === 'POST', route);
    }
  });

  test('POSTs without a body send none; with one, JSON', async () => {
    answers = [
      { status: 200, body: { request_id: 'req_1' } },
      { status: 200, body: { request_id: 'req_2' } },
    ];
    await client().sessions.remind('gs_1');
    await client().webhooks.create({ url: 'https://shop.example/hooks', events: ['group.funded'] });
    const [remind, create] = seen as [Seen, Seen];
    assert.equal(remind.body, '');
    assert.equal(remind.headers['content-type'], undefined);
    assert.equal(create.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(create.body), {
      url: 'https://shop.example/hooks',
      events: ['group.funded'],
    });
  });

  test('each call gets its own Idempotency-Key', async () => {
    answers = [
      { status: 200, body: created },
      { status: 200, body: created },
    ];
    await client().sessions.create({ cart });
    await client().sessions.create({ cart });
    assert.notEqual(seen[0]?.headers['idempotency-key'], seen[1]?.headers['idempotency-key']);
  });

  test('an answer that is not the API’s says so, with the request id of the header', async () => {
    answers = [{ status: 502, body: '<html>Bad gateway</html>' }];
    await assert.rejects(client().merchants.me(), {
      code: 'unexpected_response',
      status: 502,
      request_id: 'req_1',
      message: /without an API error body: is baseUrl the merchant API/,
    });
  });

  test('a try that takes longer than timeoutMs is abandoned, retried, then reported as a timeout', async () => {
    const slow = createServer(() => {});
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/v1`;
    try {
      await assert.rejects(
        new GroupCheckout(KEY, { baseUrl: url, timeoutMs: 100, maxRetries: 1 }).merchants.me(),
        {
          code: 'timeout',
          status: null,
          message: /did not answer GET \/merchants\/me within 100 ms \(2 tries\)/,
        },
      );
    } finally {
      slow.closeAllConnections();
      await new Promise((resolve) => slow.close(resolve));
    }
  });

  test('mistakes in the arguments are refused before any request, in words', () => {
    assert.throws(() => new GroupCheckout('', { baseUrl }), /secret API key \(svc_sk_…\)/);
    assert.throws(
      () => new GroupCheckout('svc_sig_test_abcdefabcdefabcdef', { baseUrl }),
      /cart signing secret \(svc_sig_…\), which signs carts and is never an API key/,
    );
    assert.throws(() => new GroupCheckout(KEY, { baseUrl: 'api.example.com' }), /needs \{ baseUrl \}/);
    assert.throws(() => new GroupCheckout(KEY, { baseUrl, maxRetries: -1 }), /maxRetries/);
    assert.throws(() => client().sessions.get(''), /sessions.get needs the session id \(gs_…\)/);
    assert.equal(seen.length, 0);
  });
});
