// The real server (src/main.ts, workers included) as a child process on a free port, for the crash
// suites: started with an environment, killed by its own crash switch (SANDBOX_CRASH_AT) or by the test,
// and started again on the same database and port.
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { type CreatedMerchant, createMerchant } from '../../src/flows/merchants.ts';
import { type Db, openDb } from '../../src/store/db.ts';
import { migrateToLatest } from '../../src/store/migrations/index.ts';
import type { DialectCase, TestDatabase } from './databases.ts';

// Run as this file is: compiled (scripts/test.mjs runs the compiled tree) or from the sources through tsx.
const COMPILED = import.meta.url.endsWith('.js');
const MAIN = fileURLToPath(new URL(`../../src/main.${COMPILED ? 'js' : 'ts'}`, import.meta.url));
const NODE_ARGS = COMPILED ? [MAIN] : ['--import', 'tsx', MAIN];

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (!address || typeof address === 'string') throw new Error('no port');
  return address.port;
}

export class ServerProcess {
  child: ChildProcess | undefined;
  /** The signal that ended the last start (null when it exited on its own). */
  exited: Promise<NodeJS.Signals | null> | undefined;
  output = '';

  constructor(
    readonly env: Record<string, string>,
    readonly baseUrl: string,
  ) {}

  /** Starts the server with its environment and `extra` on top (this start only); waits for /healthz. */
  async start(extra: Record<string, string> = {}): Promise<void> {
    const child = spawn(process.execPath, NODE_ARGS, {
      env: { ...process.env, ...this.env, ...extra },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    child.stdout?.on('data', (chunk) => (this.output += chunk));
    child.stderr?.on('data', (chunk) => (this.output += chunk));
    this.exited = new Promise((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
    for (let i = 0; i < 600; i++) {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`server exited at start:\n${this.output}`);
      const up = await fetch(`${this.baseUrl}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (up) return;
      await sleep(50);
    }
    throw new Error(`server did not start:\n${this.output}`);
  }

  async stop(): Promise<void> {
    if (this.child && this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGKILL');
      await this.exited;
    }
  }
}

/** What a crash suite runs on: its own database (migrated), a merchant, and a server process for it. */
export interface CrashFixture {
  database: TestDatabase;
  db: Db;
  merchant: CreatedMerchant;
  server: ServerProcess;
  close(): Promise<void>;
}

/**
 * Makes a crash suite's database, its merchant and the server process (not started) on a free port, in
 * the sandbox with `env` added; close() stops the server and drops the database.
 */
export async function crashFixture(dialect: DialectCase, env: Record<string, string>): Promise<CrashFixture> {
  const database = await dialect.create();
  const db = openDb(database.url);
  await migrateToLatest(db);
  const merchant = await createMerchant(
    db,
    {
      name: 'Crash Shop',
      environment: 'test',
      headlessApiEnabled: true,
      payoutCurrency: null,
      allowedOrigins: [],
    },
    Date.now(),
  );
  const port = await freePort();
  const server = new ServerProcess(
    {
      DATABASE_URL: database.url,
      PORT: String(port),
      SERVICE_ENV: 'sandbox',
      LOG_LEVEL: 'warn',
      MAIL_OUTBOX_DIR: join(database.url.replace(/^sqlite:/, ''), '..', 'outbox'),
      ...env,
    },
    `http://127.0.0.1:${port}`,
  );
  return {
    database,
    db,
    merchant,
    server,
    async close() {
      await server.stop();
      await db.close();
      await database.drop();
    },
  };
}
