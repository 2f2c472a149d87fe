// The seeded fuzzer (docs/decisions.md#fuzz-suite): every operation of the merchant API and the pay-page
// API, on each database, gets FUZZ_RUNS requests over real HTTP, built by fast-check from the route's own
// schema (values it accepts and values that break it) and from hostile shapes: deep nesting, bodies near
// and over the limit, prototype and duplicate keys, odd unicode, odd query strings and content types, odd
// Idempotency-Keys, keys and tokens valid and not. Every answer must keep the contract of
// docs/api.md#errors: never a 5xx, every error in the documented shape with a code from the closed list,
// and X-Request-Id equal to the body's request_id. `npm test` runs a short seeded run; `npm run fuzz`
// a long one. Replay a failure with the FUZZ_SEED and FUZZ_RUNS it prints.
import assert from 'node:assert/strict';
import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { type Cart, signCart } from '@group-checkout/node';
import fc from 'fast-check';
import { DEFAULT_RATE_LIMITS } from '../../src/config.ts';
import { ERROR_MESSAGES, type ErrorCode, STATUS_OF } from '../../src/errors.ts';
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { createSession, organizerToken, SESSION_ENV } from '../helpers/sessions.ts';
import {
  anyJson,
  brokenOf,
  contentTypes,
  encodeURIComponentLoosely,
  hostileText,
  idempotencyKeys,
  type JsonSchema,
  oddQueries,
  oddSegments,
  oddString,
  validOf,
} from './arbitraries.ts';
import { VALID_BODIES } from './bodies.ts';

const DEFAULT_SEED = 20_261_107;
const SEED = integerEnv('FUZZ_SEED', DEFAULT_SEED);
const RUNS = integerEnv('FUZZ_RUNS', 60);
/** Only the operations whose name contains this text, e.g. `POST /v1/sessions/:sessionId/cancel`. */
const ONLY = process.env.FUZZ_ONLY;
const REPLAY = `FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS} npm run fuzz`;

function integerEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new Error(`${name} must be a whole number, got "${raw}"`);
  return Number(raw);
}

/** Route limits out of the way (they have their own suite): a 429 would hide every other answer. */
const FUZZ_ENV: Record<string, string> = {
  ...SESSION_ENV,
  ...Object.fromEntries(Object.keys(DEFAULT_RATE_LIMITS).map((name) => [`RATE_LIMIT_${name}`, '1000000'])),
};

const API_PREFIXES = ['/v1/', '/api/v1/'];
const BODY_LIMIT = 256 * 1024;
const OTHER_METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'PROPFIND'];

// ---------------------------------------------------------------------------------------------------
// What one request is made of, as plain data drawn from a seed; ids, keys and tokens are picked from the
// live state when it is sent.

/** A path parameter: an entry of the pool of real ids (newest first), or text as it goes in the URL. */
type ParamPick = { pool: number } | { other: true } | { raw: string };

/** `access=`: a real token of the pool, another merchant's, or any text. */
type AccessPick = { organizer: number } | { group: number } | { other: true } | { raw: string };

interface QueryPlan {
  values: Record<string, unknown>;
  access?: AccessPick;
  /** 'append' adds `raw` to the query; 'raw' sends `raw` alone; 'repeat' sends `access` twice. */
  mode: 'values' | 'append' | 'raw' | 'repeat';
  raw: string;
}

type BodyPlan =
  | { kind: 'none' }
  | { kind: 'json'; value: unknown }
  | { kind: 'text'; text: string }
  | { kind: 'bytes'; hex: string }
  | { kind: 'sized'; bytes: number; value: unknown };

interface Plan {
  method: string;
  params: Record<string, ParamPick>;
  query: QueryPlan;
  /** An Authorization header, with {sk} {pk} (ours), {osk} {opk} (another merchant's) filled in; or none. */
  auth: string | undefined;
  origin: string | undefined;
  merchantId: string | undefined;
  idempotencyKey: string | string[] | undefined;
  contentType: string | undefined;
  body: BodyPlan;
  /** POST /v1/sessions: where the cart signature goes. */
  sign: 'body' | 'header' | 'none' | 'wrong';
  accept: string | undefined;
}

const AUTHS: fc.Arbitrary<string | undefined> = fc.oneof(
  { arbitrary: fc.constant('Bearer {sk}'), weight: 12 },
  { arbitrary: fc.constant('Bearer {pk}'), weight: 4 },
  { arbitrary: fc.constant(undefined), weight: 2 },
  {
    arbitrary: fc.constantFrom(
      'Bearer {osk}',
      'Bearer {opk}',
      'bearer {sk}',
      'BEARER {pk}',
      'Bearer  {sk}  ',
      'Bearer {sk} extra',
      'Bearer {sk}x',
      '{sk}',
      'Basic {sk}',
      'Bearer',
      'Bearer ',
      '',
      'Basic dXNlcjpwYXNz',
      `Bearer svc_sk_live_${'a'.repeat(24)}`,
      `Bearer svc_pk_live_${'a'.repeat(24)}`,
      `Bearer svc_sk_test_${'a'.repeat(24)}`,
      `Bearer svc_sk_test_${'a'.repeat(129)}`,
      'Bearer svc_sk_test_short',
      'Bearer svc_xx_test_aaaaaaaaaaaaaaaaaaaa',
      `Bearer ${'x'.repeat(8000)}`,
      'Bearer \xe9\xff',
    ),
    weight: 4,
  },
  { arbitrary: oddString(60).map((s) => `Bearer ${s}`), weight: 1 },
);

const ORIGINS = fc.oneof(
  { arbitrary: fc.constant(undefined), weight: 10 },
  {
    arbitrary: fc.constantFrom('https://shop.example', 'https://evil.example', 'null', '', 'file://', '\xe9'),
    weight: 1,
  },
);

const MERCHANT_IDS = fc.oneof(
  { arbitrary: fc.constant(undefined), weight: 10 },
  { arbitrary: fc.constantFrom('{own}', '{other}', '', 'svc_merch_nope', 'x'.repeat(500)), weight: 1 },
);

const ACCEPTS = fc.oneof(
  { arbitrary: fc.constant(undefined), weight: 10 },
  { arbitrary: fc.constantFrom('text/html', 'application/xml', '*/*', 'application/json;q=0'), weight: 1 },
);

const paramPick: fc.Arbitrary<ParamPick> = fc.oneof(
  { arbitrary: fc.nat(20).map((pool) => ({ pool })), weight: 12 },
  { arbitrary: fc.constant({ other: true as const }), weight: 1 },
  { arbitrary: oddSegments.map((raw) => ({ raw })), weight: 4 },
  {
    arbitrary: fc
      .constantFrom('sess_', 'shr_', 'we_', 'at_', 'gat_', '')
      .chain((prefix) => fc.stringMatching(/^[0-9A-Za-z]{0,30}$/).map((id) => ({ raw: prefix + id }))),
    weight: 2,
  },
);

const accessPick: fc.Arbitrary<AccessPick> = fc.oneof(
  { arbitrary: fc.nat(20).map((organizer) => ({ organizer })), weight: 8 },
  { arbitrary: fc.nat(20).map((group) => ({ group })), weight: 5 },
  { arbitrary: fc.constant({ other: true as const }), weight: 1 },
  {
    arbitrary: fc
      .oneof(
        oddString(40),
        fc.constantFrom('at_', 'gat_', 'at_x', 'gat_x', `at_${'a'.repeat(200)}`, 'x'.repeat(201)),
      )
      .map((raw) => ({ raw })),
    weight: 4,
  },
);

function queryPlan(schema: JsonSchema | undefined): fc.Arbitrary<QueryPlan> {
  const properties = { ...(schema?.properties ?? {}) };
  const hasAccess = 'access' in properties;
  delete properties.access;
  const rest: JsonSchema = { type: 'object', properties, required: [] };
  const values =
    Object.keys(properties).length === 0
      ? fc.constant({})
      : fc.oneof({ arbitrary: validOf(rest), weight: 3 }, { arbitrary: brokenOf(rest), weight: 1 });
  return fc.record({
    values: values as fc.Arbitrary<Record<string, unknown>>,
    access: hasAccess ? accessPick : fc.constant(undefined),
    mode: fc.oneof(
      { arbitrary: fc.constant('values' as const), weight: 10 },
      { arbitrary: fc.constantFrom('append' as const, 'raw' as const, 'repeat' as const), weight: 2 },
    ),
    raw: oddQueries,
  });
}

/** A body of roughly `bytes` bytes: the value with a padded string field. */
function sizedText(value: unknown, bytes: number): string {
  const base = value && typeof value === 'object' && !Array.isArray(value) ? value : {};
  const empty = JSON.stringify({ ...base, pad: '' });
  return JSON.stringify({ ...base, pad: 'x'.repeat(Math.max(0, bytes - Buffer.byteLength(empty))) });
}

/** Bytes that are not UTF-8, or not UTF-8 JSON. */
const BYTE_BODIES = fc.constantFrom(
  Buffer.from('{"name":"\xff\xfe"}', 'latin1').toString('hex'),
  Buffer.from('{"name":"\xc0\xaf"}', 'latin1').toString('hex'),
  Buffer.from('{"name":"\xed\xa0\x80"}', 'latin1').toString('hex'),
  Buffer.from('{"name":"a"}', 'utf16le').toString('hex'),
  Buffer.from('\xef\xbb\xbf{}', 'latin1').toString('hex'),
  Buffer.from([0, 0, 0, 0]).toString('hex'),
);

function bodyPlan(
  schema: JsonSchema | undefined,
  valid: fc.Arbitrary<unknown> | undefined,
): fc.Arbitrary<BodyPlan> {
  const sized = (value: fc.Arbitrary<unknown>) =>
    fc
      .tuple(value, fc.constantFrom(BODY_LIMIT - 64, BODY_LIMIT - 1, BODY_LIMIT, BODY_LIMIT + 1, 1024 * 1024))
      .map(([v, bytes]): BodyPlan => ({ kind: 'sized', bytes, value: v }));
  const bytes = BYTE_BODIES.map((hex): BodyPlan => ({ kind: 'bytes', hex }));
  if (!schema) {
    return fc.oneof(
      { arbitrary: fc.constant<BodyPlan>({ kind: 'none' }), weight: 14 },
      { arbitrary: anyJson.map((value): BodyPlan => ({ kind: 'json', value })), weight: 2 },
      { arbitrary: hostileText({}).map((text): BodyPlan => ({ kind: 'text', text })), weight: 2 },
      { arbitrary: sized(fc.constant({})), weight: 1 },
    );
  }
  const noBody = (schema as { 'x-no-body'?: boolean })['x-no-body'] === true;
  const good = valid ? fc.oneof(valid, validOf(schema)) : validOf(schema);
  return fc.oneof(
    { arbitrary: fc.constant<BodyPlan>({ kind: 'none' }), weight: noBody ? 12 : 1 },
    { arbitrary: good.map((value): BodyPlan => ({ kind: 'json', value })), weight: 12 },
    { arbitrary: brokenOf(schema).map((value): BodyPlan => ({ kind: 'json', value })), weight: 6 },
    { arbitrary: good.chain(hostileText).map((text): BodyPlan => ({ kind: 'text', text })), weight: 4 },
    { arbitrary: sized(good), weight: 1 },
    { arbitrary: bytes, weight: 1 },
  );
}

// ---------------------------------------------------------------------------------------------------
// Operations: every route the app registered under the two API prefixes, and unknown routes.

interface Operation {
  /** `METHOD /url` as registered, e.g. `POST /v1/sessions/:sessionId/cancel`. */
  name: string;
  method: string;
  url: string;
  plans: fc.Arbitrary<Plan>;
}

function operationOf(method: string, url: string, schema: Record<string, unknown> | undefined): Operation {
  const name = `${method} ${url}`;
  const paramNames = [...url.matchAll(/:(\w+)|\*/g)].map((m) => m[1] ?? '*');
  const body = schema?.body as JsonSchema | undefined;
  const valid = body && VALID_BODIES[name]?.(body);
  const plans = fc.record({
    method: fc.oneof(
      { arbitrary: fc.constant(method), weight: 30 },
      { arbitrary: fc.constantFrom(...OTHER_METHODS), weight: 1 },
    ),
    params: fc.record(Object.fromEntries(paramNames.map((p) => [p, paramPick]))),
    query: queryPlan(schema?.querystring as JsonSchema | undefined),
    auth: AUTHS,
    origin: ORIGINS,
    merchantId: MERCHANT_IDS,
    idempotencyKey: idempotencyKeys,
    contentType: contentTypes,
    body: bodyPlan(body, valid),
    sign: fc.constantFrom(
      'body' as const,
      'body' as const,
      'header' as const,
      'none' as const,
      'wrong' as const,
    ),
    accept: ACCEPTS,
  });
  return { name, method, url, plans };
}

/** Paths that are no route at all, under both prefixes. */
const UNKNOWN_ROUTES: Operation = {
  name: 'ANY unknown routes',
  method: 'GET',
  url: '/v1/*',
  plans: fc.record({
    method: fc.constantFrom(...OTHER_METHODS),
    params: fc.record({
      '*': fc
        .tuple(
          fc.constantFrom('/v1/', '/api/v1/', '/v2/', '/', '/v1//', '/api/', '/V1/'),
          fc.array(oddSegments, { minLength: 0, maxLength: 4 }),
        )
        .map(([prefix, segments]) => ({ raw: prefix + segments.join('/') })),
    }),
    query: queryPlan(undefined),
    auth: AUTHS,
    origin: ORIGINS,
    merchantId: MERCHANT_IDS,
    idempotencyKey: idempotencyKeys,
    contentType: contentTypes,
    body: bodyPlan(undefined, undefined),
    sign: fc.constant('none' as const),
    accept: ACCEPTS,
  }),
};

/**
 * Requests every run sends first, whatever the seed: shapes that once broke the service, so that the
 * short run of `npm test` meets each of them on every route (docs/decisions.md#fuzz-suite).
 */
function corpus(op: Operation): Plan[] {
  const base: Plan = {
    method: op.method,
    params: Object.fromEntries([...op.url.matchAll(/:(\w+)|\*/g)].map((m) => [m[1] ?? '*', { pool: 0 }])),
    query: { values: {}, access: { organizer: 0 }, mode: 'values', raw: '' },
    auth: 'Bearer {sk}',
    origin: undefined,
    merchantId: undefined,
    idempotencyKey: 'corpus-key',
    contentType: 'application/json',
    body: { kind: 'none' },
    sign: 'body',
    accept: undefined,
  };
  // Every path parameter as `raw` (for unknown routes, the whole path).
  const unknown = op === UNKNOWN_ROUTES;
  const raw = (text: string) =>
    Object.fromEntries(
      Object.keys(base.params).map((name) => [name, { raw: unknown ? `/v1/${text}` : text }]),
    );
  if (unknown) base.params = raw('nowhere');
  return [
    // 5,000 nested [ with an Idempotency-Key: a stack overflow in the idempotency hook (500).
    { ...base, body: { kind: 'text', text: `${'['.repeat(5000)}${']'.repeat(5000)}` } },
    {
      ...base,
      query: { ...base.query, access: { raw: 'nope' } },
      body: { kind: 'text', text: `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}` },
    },
    // NUL in an id, a token or a stored string: PostgreSQL refuses it (500).
    { ...base, params: raw('x%00'), query: { ...base.query, access: { raw: 'gat_\u0000' } } },
    { ...base, body: { kind: 'text', text: '{"name":"\\u0000","customer":{"name":"\\u0000"}}' } },
    // A HEAD whose URL is not valid HTTP, answered with a body a client cannot read.
    { ...base, method: 'HEAD', params: raw('\xff') },
    // Over the body limit.
    { ...base, body: { kind: 'sized', bytes: 1024 * 1024, value: {} } },
  ];
}

/** A stable number per operation, so each has its own stream of requests whatever the others are. */
function seedOf(name: string): number {
  let hash = 0x811c9dc5;
  for (const char of name) hash = Math.imul(hash ^ (char.codePointAt(0) ?? 0), 0x01000193);
  return (SEED ^ hash) >>> 0;
}

// ---------------------------------------------------------------------------------------------------
// The live state requests pick from, and turning a plan into bytes.

interface PoolSession {
  id: string;
  organizer: string;
  group: string;
}

interface State {
  t: TestApp;
  other: TestMerchant;
  otherSession: PoolSession;
  sessions: PoolSession[];
  shares: string[];
  webhooks: string[];
  events: string[];
}

const newest = <T>(list: T[], i: number): T | undefined =>
  list[list.length - 1 - (i % Math.min(list.length, 12))];

function resolveParam(state: State, name: string, pick: ParamPick): string {
  if ('raw' in pick) return pick.raw;
  if ('other' in pick) return name === 'sessionId' ? state.otherSession.id : 'x_other';
  const list =
    name === 'sessionId'
      ? state.sessions.map((s) => s.id)
      : name === 'shareId'
        ? state.shares
        : name === 'webhookId'
          ? state.webhooks
          : name === 'eventId'
            ? state.events
            : ['webhooks', 'sessions', 'session', 'merchants/me', 'anything/else'];
  return newest(list, pick.pool) ?? 'none_yet';
}

function resolveAccess(state: State, pick: AccessPick): string {
  if ('raw' in pick) return pick.raw;
  if ('other' in pick) return state.otherSession.organizer;
  if ('organizer' in pick) return newest(state.sessions, pick.organizer)?.organizer ?? 'at_none';
  return newest(state.sessions, pick.group)?.group ?? 'gat_none';
}

function queryText(state: State, plan: QueryPlan): string {
  if (plan.mode === 'raw') return plan.raw;
  const params = new URLSearchParams();
  // A broken query may be no object at all: then it is one parameter's value.
  const values =
    plan.values && typeof plan.values === 'object' && !Array.isArray(plan.values)
      ? plan.values
      : { value: plan.values };
  for (const [key, value] of Object.entries(values)) {
    for (const v of Array.isArray(value) ? value : [value]) {
      params.append(key, typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v));
    }
  }
  if (plan.access) {
    params.append('access', resolveAccess(state, plan.access));
    if (plan.mode === 'repeat') params.append('access', resolveAccess(state, { organizer: 0 }));
  }
  const text = params.toString();
  const query = text ? `?${text}` : '';
  if (plan.mode === 'append') return query ? `${query}&${plan.raw.replace(/^\?/, '')}` : plan.raw;
  return query;
}

/** Characters an HTTP client may not put in a header value or a request line, replaced. */
const headerSafe = (value: string) => value.replace(/[^\t\x20-\x7e\x80-\xff]/g, '?');
const pathSafe = (value: string) => value.replace(/[^\x21-\xff]/g, (c) => encodeURIComponentLoosely(c));

interface Wire {
  method: string;
  path: string;
  headers: Record<string, string | string[]>;
  body: Buffer | undefined;
}

function toWire(state: State, op: Operation, plan: Plan): Wire {
  const { t, other } = state;
  const path = op.url.replace(/:(\w+)|\*/g, (_m, name?: string) =>
    resolveParam(state, name ?? '*', plan.params[name ?? '*'] ?? { pool: 0 }),
  );
  const fullPath = op === UNKNOWN_ROUTES ? (plan.params['*'] as { raw: string }).raw : path;
  const headers: Record<string, string | string[]> = {};
  if (plan.auth !== undefined) {
    headers.authorization = headerSafe(
      plan.auth
        .replace('{sk}', t.merchant.secretKey)
        .replace('{pk}', t.merchant.publishableKey)
        .replace('{osk}', other.secretKey)
        .replace('{opk}', other.publishableKey),
    );
  }
  if (plan.origin !== undefined) headers.origin = plan.origin;
  if (plan.merchantId !== undefined) {
    headers['x-merchant-id'] = plan.merchantId
      .replace('{own}', t.merchant.merchant.id)
      .replace('{other}', other.merchant.id);
  }
  if (plan.idempotencyKey !== undefined) {
    headers['idempotency-key'] = Array.isArray(plan.idempotencyKey)
      ? plan.idempotencyKey.map(headerSafe)
      : headerSafe(plan.idempotencyKey);
  }
  if (plan.accept !== undefined) headers.accept = plan.accept;
  if (plan.contentType !== undefined) headers['content-type'] = plan.contentType;

  let body: Buffer | undefined;
  const b = plan.body;
  if (b.kind === 'json') {
    let value = b.value;
    // A cart the merchant signed, as the SDK sends it.
    const cart = (value as { cart?: Cart } | null)?.cart;
    if (op.name === 'POST /v1/sessions' && cart && plan.sign !== 'none') {
      let signature: string | undefined;
      try {
        signature = signCart(cart, t.merchant.merchant.signingSecret);
      } catch {
        signature = undefined;
      }
      if (plan.sign === 'wrong') signature = 'ab'.repeat(32);
      if (signature && plan.sign === 'header') headers['x-service-signature'] = signature;
      else if (signature) value = { ...(value as object), signature };
    }
    body = Buffer.from(JSON.stringify(value) ?? 'null');
  } else if (b.kind === 'text') {
    body = Buffer.from(b.text);
  } else if (b.kind === 'bytes') {
    body = Buffer.from(b.hex, 'hex');
  } else if (b.kind === 'sized') {
    body = Buffer.from(sizedText(b.value, b.bytes));
  }
  // Said outright: Node's client leaves it out on HEAD, and the body would then read as a second request.
  if (body) headers['content-length'] = String(body.length);
  return { method: plan.method, path: pathSafe(fullPath + queryText(state, plan.query)), headers, body };
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** A client-side failure: the connection was reset, or nothing came back in time. */
  failure?: string;
}

function send(baseUrl: string, agent: Agent, wire: Wire): Promise<Answer> {
  const url = new URL(baseUrl);
  return new Promise((resolve) => {
    let done = false;
    const finish = (answer: Answer) => {
      if (!done) {
        done = true;
        resolve(answer);
      }
    };
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method: wire.method,
        path: wire.path,
        headers: wire.headers,
        agent,
        timeout: 15_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          finish({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', (error) => finish({ status: 0, headers: {}, text: '', failure: error.message }));
      },
    );
    req.on('error', (error) => finish({ status: 0, headers: {}, text: '', failure: error.message }));
    req.on('timeout', () => req.destroy(new Error('no answer within 15 s')));
    req.end(wire.body);
  });
}

const ERROR_FIELDS = new Set(['request_id', 'error', 'code', 'details', 'decline_code']);

/** What is wrong with an answer, or undefined when it keeps the contract. */
function contractBreach(wire: Wire, answer: Answer): string | undefined {
  if (answer.failure) {
    // A client may be cut off while still sending a body over the limit; the 413 may then be lost.
    if ((wire.body?.length ?? 0) > BODY_LIMIT && /ECONNRESET|EPIPE|socket hang up/.test(answer.failure))
      return undefined;
    return `no answer: ${answer.failure}`;
  }
  const { status } = answer;
  if (status >= 500) return `status ${status}`;
  const headerId = answer.headers['x-request-id'];
  if (typeof headerId !== 'string' || !/^req_[0-9A-Za-z]+$/.test(headerId))
    return `X-Request-Id is ${JSON.stringify(headerId)}`;
  if (wire.method === 'HEAD' || status === 204) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    return `the body is not JSON: ${answer.text.slice(0, 100)}`;
  }
  // A replayed answer keeps the request_id of the request that ran (docs/api.md#idempotency).
  const replayed = answer.headers['idempotent-replayed'] === 'true';
  if (status < 400) {
    const id = (body as { request_id?: unknown } | null)?.request_id;
    if (!replayed && id !== undefined && id !== headerId)
      return `request_id ${JSON.stringify(id)} is not X-Request-Id ${headerId}`;
    return undefined;
  }
  if (!/^application\/json/.test(String(answer.headers['content-type'])))
    return `content-type ${answer.headers['content-type']}`;
  if (!body || typeof body !== 'object' || Array.isArray(body)) return 'the error is not an object';
  const e = body as Record<string, unknown>;
  const extra = Object.keys(e).filter((k) => !ERROR_FIELDS.has(k));
  if (extra.length > 0) return `fields beyond the error shape: ${extra.join(', ')}`;
  if (typeof e.request_id !== 'string') return 'request_id is not a string';
  if (!/^req_[0-9A-Za-z]+$/.test(e.request_id)) return `request_id ${e.request_id}`;
  if (!replayed && e.request_id !== headerId)
    return `request_id ${e.request_id} is not X-Request-Id ${headerId}`;
  if (typeof e.error !== 'string' || e.error.length === 0) return 'error is not a sentence';
  if (typeof e.code !== 'string' || !(e.code in ERROR_MESSAGES)) return `code ${JSON.stringify(e.code)}`;
  if (STATUS_OF[e.code as ErrorCode] !== status) return `code ${e.code} answered with status ${status}`;
  if (e.details !== undefined && !(Array.isArray(e.details) && e.details.every((d) => typeof d === 'string')))
    return 'details is not a list of strings';
  return undefined;
}

/** Learns ids from successful answers, so later requests can use them. */
function remember(state: State, op: Operation, answer: Answer) {
  if (answer.status !== 200) return;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(answer.text);
  } catch {
    return;
  }
  if (op.name === 'POST /v1/sessions' && typeof body.session_id === 'string') {
    const organizer = new URL(String(body.session_url)).searchParams.get('access') ?? '';
    if (!state.sessions.some((s) => s.id === body.session_id))
      state.sessions.push({ id: body.session_id, organizer, group: String(body.group_access_token) });
  }
  if (op.name === 'POST /v1/webhooks' && typeof body.id === 'string') state.webhooks.push(body.id);
  if (op.name === 'POST /api/v1/session/join' && typeof body.share_id === 'string')
    state.shares.push(body.share_id);
  const members = (body.group as { members?: { share_id?: unknown }[] } | undefined)?.members ?? [];
  for (const m of members) if (typeof m.share_id === 'string') state.shares.push(m.share_id);
}

function describeRequest(wire: Wire): string {
  const body = wire.body
    ? ` body (${wire.body.length} bytes) ${JSON.stringify(wire.body.toString('utf8').slice(0, 160))}`
    : '';
  const headers = Object.entries(wire.headers)
    .map(([k, v]) => `${k}: ${JSON.stringify(v).slice(0, 80)}`)
    .join('; ');
  return `${wire.method} ${wire.path.slice(0, 200)} [${headers}]${body}`;
}

// ---------------------------------------------------------------------------------------------------

async function freshSessions(state: State, count: number) {
  for (let i = 0; i < count; i++) {
    const created = await createSession(state.t, { via: i % 2 === 0 ? 'publishable' : 'secret' });
    state.sessions.push({
      id: created.session_id,
      organizer: organizerToken(created),
      group: created.group_access_token,
    });
  }
  // One group set up, so there are shares to read.
  const last = state.sessions.at(-1);
  if (last) {
    const res = await state.t.request('PUT', `/api/v1/session/group?access=${last.organizer}`, {
      body: { mode: 'equal', members: [{ name: 'Ada' }, { name: 'Ben', email: 'ben@example.com' }] },
    });
    assert.equal(res.status, 200, res.text);
    for (const m of res.body.group.members) state.shares.push(m.share_id);
  }
}

async function refreshEvents(state: State) {
  if (state.sessions.length === 0) await freshSessions(state, 2);
  const list = await state.t.request('GET', '/v1/events?limit=20', { key: state.t.merchant.secretKey });
  assert.equal(list.status, 200, list.text);
  state.events = list.body.data.map((e: { id: string }) => e.id);
}

async function refreshWebhooks(state: State) {
  const key = state.t.merchant.secretKey;
  let list = await state.t.request('GET', '/v1/webhooks', { key });
  if (list.body.data.length < 4) {
    for (let i = 0; i < 4; i++) {
      await state.t.request('POST', '/v1/webhooks', {
        key,
        body: { url: `https://hooks.example/${i}`, events: ['*'] },
      });
    }
    list = await state.t.request('GET', '/v1/webhooks', { key });
  }
  state.webhooks = list.body.data.map((w: { id: string }) => w.id);
}

/**
 * Every operation of both APIs, as the app registers them (HEAD routes aside), and unknown routes. The
 * first test fails when a route is added or removed without this list following.
 */
const OPERATIONS = [
  'GET /v1/merchants/me',
  'GET /v1/webhooks',
  'POST /v1/webhooks',
  'DELETE /v1/webhooks/:webhookId',
  'POST /v1/webhooks/:webhookId/rotate_secret',
  'GET /v1/events',
  'GET /v1/events/:eventId',
  'POST /v1/events/:eventId/redeliver',
  'POST /v1/sessions',
  'GET /v1/sessions',
  'GET /v1/sessions/:sessionId',
  'POST /v1/sessions/:sessionId/cancel',
  'POST /v1/sessions/:sessionId/remind',
  'POST /v1/test_helpers/sessions/:sessionId/expire',
  'POST /v1/test_helpers/disputes/:disputeId/close',
  'POST /v1/stripe/webhook',
  'GET /v1/openapi.json',
  'OPTIONS /v1/*',
  'GET /api/v1/session',
  'PUT /api/v1/session/group',
  'POST /api/v1/session/join',
  'POST /api/v1/session/cancel',
  'POST /api/v1/session/cover',
  'POST /api/v1/session/remind',
  'GET /api/v1/shares/:shareId',
  'POST /api/v1/shares/:shareId/pay',
  'POST /api/v1/shares/:shareId/refresh',
  'POST /api/v1/sandbox/authenticate',
  'OPTIONS /api/v1/*',
];

/**
 * Operations no fuzzed request can get through here, for want of what the fuzzer does not make: their
 * successes are tested by their own suites. Stripe's webhook needs Stripe as the processor and Stripe's
 * signature (test/payments/stripe.webhooks.test.ts); closing a dispute needs an open one
 * (test/payments/disputes.refund-failures.test.ts). They are still fuzzed for 5xx and the error shape.
 */
const NEEDS_MORE_THAN_THE_FUZZER_MAKES = new Set([
  'POST /v1/stripe/webhook',
  'POST /v1/test_helpers/disputes/:disputeId/close',
]);

for (const dialect of DIALECTS) {
  describe(`fuzz on ${dialect.name} (seed ${SEED}, ${RUNS} requests per operation)`, {
    skip: dialect.skip,
  }, () => {
    let state: State;
    let agent: Agent;

    before(async () => {
      const t = await startTestApp(dialect, { env: FUZZ_ENV });
      const other = await t.createMerchant({ name: 'Other Shop' });
      const otherCreated = await createSession(t, { merchant: other });
      state = {
        t,
        other,
        otherSession: {
          id: otherCreated.session_id,
          organizer: organizerToken(otherCreated),
          group: otherCreated.group_access_token,
        },
        sessions: [],
        shares: [],
        webhooks: [],
        events: [],
      };
      agent = new Agent({ keepAlive: true, maxSockets: 1 });
    });
    after(async () => {
      agent?.destroy();
      await state?.t.close();
    });

    test('the fuzzer knows every route registered under /v1 and /api/v1', (ctx) => {
      ctx.diagnostic(`seed ${SEED}, ${RUNS} requests per operation; replay: ${REPLAY}`);
      const registered = state.t.routes
        .filter((r) => r.method !== 'HEAD' && API_PREFIXES.some((p) => r.url.startsWith(p)))
        .map((r) => `${r.method} ${r.url}`);
      assert.deepEqual([...new Set(registered)].sort(), [...OPERATIONS].sort());
    });

    for (const name of [...OPERATIONS, UNKNOWN_ROUTES.name]) {
      if (ONLY && !name.includes(ONLY)) continue;
      test(`${name}: never a 5xx, every error in the documented shape`, {
        timeout: Math.max(120_000, RUNS * 200),
      }, async (ctx) => {
        const op = name === UNKNOWN_ROUTES.name ? UNKNOWN_ROUTES : routeOperation(state, name);
        // Ids to pick from, for the operations that take them.
        const needsSessions = /:sessionId|^\/api\/v1\/(session|shares)/.test(op.url);
        if (needsSessions) await freshSessions(state, 4);
        if (op.url.includes('/webhooks')) await refreshWebhooks(state);
        if (op.url.includes('/events')) await refreshEvents(state);
        const logStart = state.t.logLines.length;
        const statuses = new Map<string, number>();
        const breaches = new Map<string, { count: number; example: string }>();
        const plans = [...corpus(op), ...fc.sample(op.plans, { seed: seedOf(op.name), numRuns: RUNS })];
        const started = performance.now();
        for (const [index, plan] of plans.entries()) {
          // Open sessions for the operations that close them, all along a long run.
          if (needsSessions && index % 100 === 99) await freshSessions(state, 2);
          const wire = toWire(state, op, plan);
          const answer = await send(state.t.baseUrl, agent, wire);
          remember(state, op, answer);
          const label = `${answer.status}${codeOf(answer) ? ` ${codeOf(answer)}` : ''}`;
          statuses.set(label, (statuses.get(label) ?? 0) + 1);
          const breach = contractBreach(wire, answer);
          if (!breach) continue;
          const key = `${breach} (${label})`;
          const seen = breaches.get(key);
          if (seen) seen.count++;
          else
            breaches.set(key, {
              count: 1,
              example: `#${index}: ${describeRequest(wire)} → ${answer.text.slice(0, 300)}`,
            });
        }
        const errors = state.t.logLines.slice(logStart).filter((line) => JSON.parse(line).level >= 50);
        if (errors.length > 0)
          breaches.set('lines logged as errors', {
            count: errors.length,
            example: errors[0]?.slice(0, 600) ?? '',
          });
        const health = await state.t.request('GET', '/healthz');
        if (health.status !== 200)
          breaches.set('/healthz stopped answering 200', { count: 1, example: health.text });

        const summary = [...statuses.entries()]
          .sort((a, b) => b[1] - a[1])
          .map(([label, n]) => `${label} ×${n}`)
          .join(', ');
        const seconds = ((performance.now() - started) / 1000).toFixed(1);
        ctx.diagnostic(`${plans.length} requests in ${seconds} s: ${summary}`);
        const findings = [...breaches].map(
          ([breach, { count, example }]) => `${breach}, ${count}×; first ${example}`,
        );
        assert.deepEqual(
          findings,
          [],
          `answers that break the contract; replay: ${REPLAY} (FUZZ_ONLY='${name}')`,
        );
        if (RUNS >= 50 && op !== UNKNOWN_ROUTES && !NEEDS_MORE_THAN_THE_FUZZER_MAKES.has(name)) {
          assert.ok(
            [...statuses.keys()].some((l) => l.startsWith('2')),
            `no request got through: ${summary}`,
          );
        }
      });
    }
  });
}

function codeOf(answer: Answer): string {
  try {
    return String(JSON.parse(answer.text).code ?? '');
  } catch {
    return '';
  }
}

function routeOperation(state: State, name: string): Operation {
  const route = state.t.routes.find((r) => `${r.method} ${r.url}` === name);
  assert.ok(route, `no route ${name}`);
  return operationOf(route.method, route.url, route.schema as Record<string, unknown> | undefined);
}
