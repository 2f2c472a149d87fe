// A real server for a test: its own database, the app listening on a loopback port, a demo merchant,
// and a captured log. Requests go over HTTP with fetch, as a merchant's would.
import { Writable } from 'node:stream';
import { type App, buildApp } from '../../src/app.ts';
import type { Clock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import type { Deps } from '../../src/deps.ts';
import { createLogger, openRuntime } from '../../src/runtime.ts';
import { insertMerchant, type Merchant } from '../../src/store/merchants.ts';
import type { DialectCase, TestDatabase } from './databases.ts';

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
}

export async function startTestApp(dialect: DialectCase, options: StartOptions = {}): Promise<TestApp> {
  const database = options.database ?? (await dialect.create());
  const config = loadConfig({
    DATABASE_URL: database.url,
    PORT: '0',
    MAIL_OUTBOX_DIR: `${database.url.startsWith('sqlite:') ? database.url.slice(7) : '/tmp/gc-test'}-outbox`,
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
  const app = await buildApp(deps);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  const baseUrl = `http://127.0.0.1:${address.port}`;

  async function createMerchant(o: Parameters<TestApp['createMerchant']>[0] = {}): Promise<TestMerchant> {
    return insertMerchant(
      deps.db.kysely,
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

  async function request(method: string, path: string, o: RequestOptions = {}): Promise<TestResponse> {
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

  const merchant = await createMerchant();
  return {
    app,
    deps,
    baseUrl,
    logLines,
    merchant,
    createMerchant,
    request,
    async close() {
      await app.close();
      await deps.close();
      if (!options.database) await database.drop();
    },
  };
}
