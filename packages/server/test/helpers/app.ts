// A real server for a test: its own database, the app listening on a loopback port, a demo merchant,
// and a captured log. Requests go over HTTP with fetch, as a merchant's would.
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { RouteOptions } from 'fastify';
import { Redis } from 'ioredis';
import { buildApp } from '../../src/app.ts';
import type { App } from '../../src/app-type.ts';
import type { Clock } from '../../src/clock.ts';
import { DEFAULT_RATE_LIMITS, loadConfig } from '../../src/config.ts';
import type { Deps } from '../../src/deps.ts';
import { createMerchant as createMerchantRecord } from '../../src/flows/merchants.ts';
import type { PaymentProcessor } from '../../src/processor/types.ts';
import { createLogger, openRuntime } from '../../src/runtime.ts';
import type { Merchant } from '../../src/store/merchants.ts';
import type { DialectCase, TestDatabase } from './databases.ts';

/**
 * Every per-route rate limit raised far above what any suite sends, for suites that do not test the limits
 * (test/api/rate-limit.test.ts does). The failed-authentication limits stay at their defaults: they are a
 * security rule, and no suite other than the authentication one comes near them.
 */
export const RELAXED_LIMITS: Record<string, string> = Object.fromEntries(
  Object.keys(DEFAULT_RATE_LIMITS)
    .filter((name) => !name.startsWith('AUTH_FAILURES_'))
    .map((name) => [`RATE_LIMIT_${name}`, '100000']),
);

export interface TestMerchant {
  merchant: Merchant;
  publishableKey: string;
  secretKey: string;
}

export interface TestApp {
  app: App;
  deps: Deps;
  baseUrl: string;
  /** Everything the app logged, one JSON line per entry. */
  logLines: string[];
  /** Every route as registered, HEAD routes and the preflight included, with its schema as given. */
  routes: { method: string; url: string; schema?: RouteOptions['schema'] }[];
  merchant: TestMerchant;
  createMerchant(
    options?: Partial<{
      name: string;
      headless: boolean;
      payoutCurrency: string | null;
      allowedOrigins: string[];
    }>,
  ): Promise<TestMerchant>;
  request(method: string, path: string, options?: RequestOptions): Promise<TestResponse>;
  close(): Promise<void>;
}

/** What the API helpers need of a server: its requests and its merchant (a TestApp, or a spawned server). */
export type ApiClient = Pick<TestApp, 'request' | 'merchant'>;

export interface RequestOptions {
  key?: string;
  headers?: Record<string, string>;
  body?: unknown;
  /** Sent as is, with the given content type (default application/json). */
  rawBody?: string;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: tests read whatever JSON came back
  body: any;
  text: string;
}

export interface StartOptions {
  env?: Record<string, string>;
  clock?: Clock;
  /** Reuse a database made by the caller (to run two app instances on one database). */
  database?: TestDatabase;
  /**
   * Wraps the payment processor the app would use (the sandbox's), to make it fail or wait at the border
   * we cannot reach in a test: the card network.
   */
  wrapProcessor?: (processor: PaymentProcessor) => PaymentProcessor;
  /** Listen on this loopback port (default: any free one), for suites whose public URLs name it. */
  port?: number;
}

/** SECRETS_KEY of a production test app unless the test sets its own: production requires one. */
export const TEST_SECRETS_KEY = '95587782d90aefeaa06530ce563ec1110482715b3cc34db7363ed9010c04b8fc';

/**
 * What production needs besides SECRETS_KEY unless the test sets its own: Stripe, and its webhooks'
 * secret (production refuses the sandbox processor). Stripe's API is a loopback port nobody listens on,
 * so a production test that pays without its own fake of Stripe fails at once rather than reaching out.
 */
export const PRODUCTION_STRIPE = {
  STRIPE_SECRET_KEY: 'sk_test_production0tests0only',
  STRIPE_WEBHOOK_SECRET: 'whsec_production0tests0only',
  STRIPE_API_URL: 'http://127.0.0.1:9',
};

export async function startTestApp(dialect: DialectCase, options: StartOptions = {}): Promise<TestApp> {
  const database = options.database ?? (await dialect.create());
  // Each app gets its own Redis key prefix (unless the test shares one between apps on purpose), so that
  // parallel test files never count each other's requests; its keys are deleted on close.
  const ownRedisPrefix = options.env?.REDIS_KEY_PREFIX === undefined;
  const redisKeyPrefix = options.env?.REDIS_KEY_PREFIX ?? `gc-test:${randomBytes(6).toString('hex')}:`;
  const config = loadConfig({
    DATABASE_URL: database.url,
    REDIS_KEY_PREFIX: redisKeyPrefix,
    PORT: '0',
    MAIL_OUTBOX_DIR: `${database.url.startsWith('sqlite:') ? database.url.slice(7) : '/tmp/gc-test'}-outbox`,
    ...(options.env?.SERVICE_ENV === 'production' && { SECRETS_KEY: TEST_SECRETS_KEY, ...PRODUCTION_STRIPE }),
    ...options.env,
  });
  const logLines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, callback) {
      logLines.push(...String(chunk).split('\n').filter(Boolean));
      callback();
    },
  });
  const deps = await openRuntime(config, { logger: createLogger('info', sink), clock: options.clock });
  if (options.wrapProcessor) deps.processor = options.wrapProcessor(deps.processor);
  const routes: TestApp['routes'] = [];
  const app = await buildApp(deps, {
    onRoute: (route) => {
      for (const method of [route.method].flat())
        routes.push({ method, url: route.url, schema: route.schema });
    },
  });
  await app.listen({ port: options.port ?? 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  const baseUrl = `http://127.0.0.1:${address.port}`;

  async function createMerchant(o: Parameters<TestApp['createMerchant']>[0] = {}): Promise<TestMerchant> {
    return createMerchantRecord(
      deps.db,
      {
        name: o.name ?? 'Test Shop',
        environment: config.serviceEnv === 'production' ? 'live' : 'test',
        headlessApiEnabled: o.headless ?? true,
        payoutCurrency: o.payoutCurrency ?? null,
        allowedOrigins: o.allowedOrigins ?? ['https://shop.example'],
      },
      deps.clock.now(),
    );
  }

  const request = (method: string, path: string, o: RequestOptions = {}) =>
    requestOver(baseUrl, method, path, o);

  const merchant = await createMerchant();
  return {
    app,
    deps,
    baseUrl,
    logLines,
    routes,
    merchant,
    createMerchant,
    request,
    async close() {
      await app.close();
      await deps.close();
      if (ownRedisPrefix && config.redisUrl) await deleteRedisKeys(config.redisUrl, redisKeyPrefix);
      if (!options.database) await database.drop();
    },
  };
}

/** One request to the server at `baseUrl`, the body parsed as JSON when it is JSON. */
export async function requestOver(
  baseUrl: string,
  method: string,
  path: string,
  o: RequestOptions = {},
): Promise<TestResponse> {
  const headers: Record<string, string> = { ...o.headers };
  if (o.key) headers.authorization = `Bearer ${o.key}`;
  let body: string | undefined;
  if (o.rawBody !== undefined) {
    body = o.rawBody;
    headers['content-type'] ??= 'application/json';
  } else if (o.body !== undefined) {
    body = JSON.stringify(o.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(baseUrl + path, { method, headers, body });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}

/**
 * Deletes every key under `prefix` (SCAN, never KEYS or FLUSHDB: other test files share the server). Best
 * effort: a Redis that does not answer (a test of exactly that) has nothing to clean.
 */
export async function deleteRedisKeys(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis(redisUrl, {
    maxRetriesPerRequest: 1,
    lazyConnect: true,
    retryStrategy: () => null,
  });
  redis.on('error', () => {});
  try {
    await redis.connect();
  } catch {
    redis.disconnect();
    return;
  }
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
