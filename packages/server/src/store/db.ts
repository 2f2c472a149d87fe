// One Kysely instance over either embedded SQLite (better-sqlite3, WAL) or PostgreSQL (pg), chosen by
// DATABASE_URL. Queries and migrations are written once for both.
import { closeSync, constants, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql, type UnknownRow } from 'kysely';
import pg from 'pg';
import { type EventSignal, postgresEventSignal, sqliteEventSignal } from './event-signal.ts';
import { runPreparedDirectly } from './prepared.ts';
import { type CacheOptions, QueryCounter, ReadCache, type Write } from './read-cache.ts';
import type { Database } from './schema.ts';
import { NO_KEYS, type SecretBox } from './secrets.ts';

type Dialect = 'sqlite' | 'postgres';

export interface Db {
  kysely: Kysely<Database>;
  dialect: Dialect;
  /**
   * This handle's read cache called `name` (store/read-cache.ts), made on first use with `options` (the
   * tables its values are read from); undefined on PostgreSQL, where other processes write unseen and
   * every read goes to the database.
   */
  readCache<V>(name: string, options: CacheOptions): ReadCache<V> | undefined;
  /** Seals and opens the secrets this database stores (store/secrets.ts); plaintext without a key. */
  secrets: SecretBox;
  /** Tells the webhook dispatcher that events were committed (store/event-signal.ts). */
  events: EventSignal;
  /** Queries sent through this handle so far: lets tests count what a cached path costs. */
  queryCount(): number;
  close(): Promise<void>;
}

const PG_INT8 = 20;
const PG_NUMERIC = 1700;
/** How often data_version is read on SQLite: another process's commit is seen within this. */
const DATA_VERSION_PERIOD_MS = 100;

export interface OpenDbOptions {
  /** Told when PostgreSQL drops an idle pooled connection (restart, failover, idle timeout). */
  onIdleError?: (error: Error) => void;
  /** The keys secrets are stored with (SECRETS_KEY); without, they are stored as they are. */
  secrets?: SecretBox;
}

/** How every connection to a SQLite file is set up (the bench's references use them too). */
export const SQLITE_PRAGMAS = [
  'journal_mode = WAL',
  'synchronous = NORMAL',
  'foreign_keys = ON',
  // Several processes may share one file (CLI beside the server): wait for the writer, don't fail.
  'busy_timeout = 5000',
  // Checkpoint the WAL every ~40 MB rather than every 4 MB: fewer fsyncs on a write-heavy sandbox.
  'wal_autocheckpoint = 10000',
  // 32 MB of pages kept by the connection (SQLite's default is 2 MB): a group's members, attempts and
  // ledger lines, and the indexes the hot paths walk, stay in memory rather than being read back from
  // the WAL and the file on the next request.
  'cache_size = -32000',
] as const;

export function openDb(databaseUrl: string, options: OpenDbOptions = {}): Db {
  // Every write this handle sends is told to its read caches, which drop what it may change.
  const caches = new Map<string, ReadCache<unknown>>();
  const counter = new QueryCounter((write: Write) => {
    for (const cache of caches.values()) cache.written(write);
  });
  const secrets = options.secrets ?? NO_KEYS;
  if (databaseUrl.startsWith('sqlite:')) {
    const file = databaseUrl.slice('sqlite:'.length) || './data/group-checkout.db';
    if (file !== ':memory:') createPrivately(file);
    const database = new SQLite(file);
    for (const pragma of SQLITE_PRAGMAS) database.pragma(pragma);
    const statements = withStatementCache(database);
    const kysely = new Kysely<Database>({
      dialect: new SqliteDialect({ database: statements }),
      plugins: [counter],
    });
    // A transaction holds the one connection: its prepared statements run on it directly (store/prepared.ts).
    runPreparedDirectly(kysely, (text, parameters) => {
      const statement = statements.prepare(text);
      if (statement.reader) return { rows: statement.all(parameters) as UnknownRow[] };
      return { rows: [], numAffectedRows: BigInt(statement.run(parameters).changes) };
    });
    // Reading data_version opens a read transaction (locks on the WAL index), which costs as much as a
    // query: read it at most every DATA_VERSION_PERIOD_MS.
    const dataVersion = database.prepare('pragma data_version').pluck();
    let version = 0;
    let readAt = Number.NEGATIVE_INFINITY;
    const readDataVersion = () => {
      const now = performance.now();
      if (now - readAt >= DATA_VERSION_PERIOD_MS) {
        version = dataVersion.get() as number;
        readAt = now;
      }
      return version;
    };
    return {
      kysely,
      dialect: 'sqlite',
      secrets,
      events: sqliteEventSignal(),
      readCache<V>(name: string, cacheOptions: CacheOptions) {
        let cache = caches.get(name);
        if (!cache) {
          cache = new ReadCache<unknown>(cacheOptions, readDataVersion);
          caches.set(name, cache);
        } else if (!cache.readsAs(cacheOptions)) {
          throw new Error(`read cache ${name} is used with other tables than it was made with`);
        }
        return cache as ReadCache<V>;
      },
      queryCount: () => counter.queries,
      close: () => kysely.destroy(),
    };
  }
  // Timestamps are BIGINT milliseconds: well inside Number's safe range, so parse them as numbers.
  const types = {
    getTypeParser: (oid: number, format?: 'text' | 'binary') =>
      oid === PG_INT8 || oid === PG_NUMERIC ? Number : pg.types.getTypeParser(oid, format),
  };
  const pool = new pg.Pool({ connectionString: databaseUrl, types, max: 10 });
  // pg-pool re-emits the error of an idle client on the pool, and an 'error' event nobody listens to
  // ends the process: without this a database restart would take every server down with it. The
  // broken client is already out of the pool; the next query opens a new connection.
  pool.on('error', (error) => options.onIdleError?.(error));
  const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), plugins: [counter] });
  return {
    kysely,
    dialect: 'postgres',
    secrets,
    events: postgresEventSignal(databaseUrl),
    readCache: () => undefined,
    queryCount: () => counter.queries,
    close: () => kysely.destroy(),
  };
}

/**
 * The file holds merchants' secrets: a new database is made readable by its owner only (0600) in a
 * directory only its owner may enter (0700), before SQLite opens it. SQLite gives the -wal and -shm
 * files the database file's mode. An existing file or directory keeps its mode (docs/operations.md#database).
 */
function createPrivately(file: string): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  try {
    closeSync(openSync(file, constants.O_CREAT | constants.O_EXCL | constants.O_RDWR, 0o600));
  } catch (error) {
    if ((error as { code?: string }).code !== 'EEXIST') throw error;
  }
}

const STATEMENT_CACHE_SIZE = 500;

/** A prepared statement as Kysely's SQLite driver and the direct runner use it. */
interface CachedStatement {
  readonly reader: boolean;
  all(parameters: readonly unknown[]): UnknownRow[];
  run(parameters: readonly unknown[]): SQLite.RunResult;
  iterate(parameters: readonly unknown[]): IterableIterator<UnknownRow>;
}

/**
 * Kysely prepares every query afresh, and preparing costs SQLite more than running a short query. Our
 * queries are a fixed set of SQL texts, so prepared statements are kept per text (least recently used out
 * past 500). Safe because Kysely runs one query at a time on its one SQLite connection.
 */
function withStatementCache(database: SQLite.Database) {
  const cache = new Map<string, CachedStatement>();
  return {
    close: () => database.close(),
    prepare(text: string): CachedStatement {
      let statement = cache.get(text);
      if (statement) {
        cache.delete(text);
      } else {
        statement = cachedStatement(database.prepare(text));
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
      }
      cache.set(text, statement);
      return statement;
    },
  };
}

/**
 * A statement whose rows are read as arrays and made objects here (docs/decisions.md#statements-built-once):
 * the driver building each row's object property by property costs about half again as much, on the
 * wide rows and the lists of a group that the hot paths read. Rows are the same objects either way (a
 * name given twice keeps its last value, as the driver does).
 */
function cachedStatement(statement: SQLite.Statement): CachedStatement {
  const names = statement.reader ? statement.columns().map((c) => c.name) : [];
  // A write answers no rows; a name the object literal would not make an own property of is read the
  // driver's way.
  if (!statement.reader || names.includes('__proto__')) {
    return {
      reader: statement.reader,
      all: (parameters) => statement.all(parameters) as UnknownRow[],
      run: (parameters) => statement.run(parameters),
      iterate: (parameters) => statement.iterate(parameters) as IterableIterator<UnknownRow>,
    };
  }
  const raw = statement.raw(true);
  const row = new Function(
    'values',
    `return { ${names.map((name, i) => `${JSON.stringify(name)}: values[${i}]`).join(', ')} };`,
  ) as (values: unknown[]) => UnknownRow;
  return {
    reader: true,
    all: (parameters) => (raw.all(parameters) as unknown[][]).map(row),
    run: (parameters) => raw.run(parameters),
    *iterate(parameters) {
      for (const values of raw.iterate(parameters) as IterableIterator<unknown[]>) yield row(values);
    },
  };
}

/** True when the database answers a trivial query (readiness). */
export async function ping(db: Db): Promise<boolean> {
  try {
    await sql`select 1`.execute(db.kysely);
    return true;
  } catch {
    return false;
  }
}

/** Unique-constraint violation, whichever driver raised it. */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: string } | null;
  return (
    e?.code === '23505' ||
    e?.code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
  );
}
