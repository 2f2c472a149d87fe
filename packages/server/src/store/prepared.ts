// Hot statements built once (docs/decisions.md#statements-built-once): Kysely builds and compiles a
// query on every call, which costs several times what SQLite takes to run a short one. A `Prepared`
// statement is written with the same builder, against placeholders instead of values; the first call on
// a database compiles it, and every call after executes that SQL with its values in their slots, through
// the same executor (the transaction, the plugins, the result). What the builder writes must not depend
// on a value: a placeholder is a parameter, never `null` (`is null`) or a list (`in`), so those stay
// ordinary queries.
//
// Inside a transaction on SQLite a prepared statement goes one step further: the transaction holds the
// database's one connection, so the statement runs on it directly (the driver's cached better-sqlite3
// statement), with the plugins still seeing the query and its result, but without Kysely's executor in
// between (its connection queue and result handling cost several times what SQLite takes to run a short
// statement; docs/decisions.md#statements-built-once).
import {
  type Compilable,
  createQueryId,
  type DialectAdapter,
  type Kysely,
  type OperationNodeSource,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
} from 'kysely';
import type { Database, Executor } from './schema.ts';

/** A value the statement's caller gives on each call, by name: `lines.0.id` reads `values.lines[0].id`. */
class Slot {
  readonly path: readonly string[];
  constructor(name: string) {
    this.path = name.split('.');
  }

  read(values: object): unknown {
    let value: unknown = values;
    for (const key of this.path) value = (value as Record<string, unknown>)[key];
    return value;
  }
}

interface Shape {
  node: RootOperationNode;
  sql: string;
  /** Each parameter of `sql`: a constant of the statement, or the name of a value given per call. */
  parameters: readonly unknown[];
}

/** Runs compiled SQL on the connection the caller's transaction holds, synchronously. */
export type DirectRun = (sql: string, parameters: readonly unknown[]) => QueryResult<UnknownRow>;

/** The dialects whose transactions run prepared statements directly, by their adapter (see Prepared). */
const directRuns = new WeakMap<DialectAdapter, DirectRun>();

/**
 * Lets transactions of `kysely` run prepared statements with `run` rather than through the executor: only
 * for a database of one connection, which a transaction holds from its begin to its end (SQLite).
 */
export function runPreparedDirectly(kysely: Kysely<Database>, run: DirectRun): void {
  directRuns.set(kysely.getExecutor().adapter, run);
}

/** The values of the statement whose plugins are running (see execute), for boundValue. */
let bound: object | undefined;

/**
 * A value as a plugin reads it off a query: a placeholder of a prepared statement is the value it
 * stands for in the execution under way (undefined outside one), anything else is itself.
 */
export const boundValue = (value: unknown): unknown =>
  value instanceof Slot ? (bound === undefined ? undefined : value.read(bound)) : value;

/**
 * The placeholders a builder writes with: `p.id` stands for the `id` each call gives, and
 * `p['lines.0.id']` for `lines[0].id` (rows of an insert whose shape has their count).
 */
const placeholders = new Proxy(
  {},
  { get: (_target, name) => (typeof name === 'string' ? new Slot(name) : undefined) },
);

/**
 * The placeholders of the fields of `T` under `path` (`fieldsOf<Row>(p, 'rows.0')('id')` stands for
 * `rows[0].id`), typed to fit any column: for rows whose fields a builder names one by one.
 */
export const fieldsOf =
  <T>(p: object, path: string) =>
  (field: keyof T & string): never =>
    (p as Record<string, never>)[`${path}.${field}`] as never;

export class Prepared<P extends object, O> {
  /** The compiled shape, per database (an adapter belongs to one Kysely instance and its transactions). */
  readonly #shapes = new WeakMap<DialectAdapter, Shape>();

  constructor(private readonly build: (db: Executor, p: P) => Compilable<O> & OperationNodeSource) {}

  #shape(db: Executor): Shape {
    const adapter = db.getExecutor().adapter;
    let shape = this.#shapes.get(adapter);
    if (!shape) {
      // Built and compiled without the plugins: they see each execution instead (below).
      const node = this.build(db.withoutPlugins(), placeholders as P).toOperationNode() as RootOperationNode;
      const compiled = db.getExecutor().compileQuery(node, createQueryId());
      shape = { node, sql: compiled.sql, parameters: compiled.parameters };
      this.#shapes.set(adapter, shape);
    }
    return shape;
  }

  async execute(db: Executor, values: P): Promise<QueryResult<O>> {
    const shape = this.#shape(db);
    const executor = db.getExecutor();
    const queryId = createQueryId();
    // The plugins see the query as they would see it built (the query counter of store/read-cache.ts); one
    // that rewrote it would make the compiled SQL stale, so that is refused rather than run.
    // Plugins run synchronously: what they read of the placeholders (boundValue) is this call's values.
    bound = values;
    let seen: RootOperationNode;
    try {
      seen = executor.transformQuery(shape.node, queryId);
    } finally {
      bound = undefined;
    }
    if (seen !== shape.node)
      throw new Error('a Kysely plugin rewrites queries: prepared statements cannot be used with it');
    const parameters = shape.parameters.map((p) => (p instanceof Slot ? p.read(values) : p));
    const direct = db.isTransaction ? directRuns.get(executor.adapter) : undefined;
    if (!direct) return db.executeQuery<O>({ query: shape.node, queryId, sql: shape.sql, parameters });
    let result = direct(shape.sql, parameters);
    for (const plugin of executor.plugins) result = await plugin.transformResult({ queryId, result });
    return result as QueryResult<O>;
  }

  async all(db: Executor, values: P): Promise<O[]> {
    return (await this.execute(db, values)).rows;
  }

  async first(db: Executor, values: P): Promise<O | undefined> {
    return (await this.execute(db, values)).rows[0];
  }

  /** Rows an update or delete changed. */
  async affected(db: Executor, values: P): Promise<number> {
    return Number((await this.execute(db, values)).numAffectedRows ?? 0n);
  }
}

/** A statement written once with `build` (with placeholders from `p`), compiled once per database. */
export const prepared = <P extends object, O>(
  build: (db: Executor, p: P) => Compilable<O> & OperationNodeSource,
) => new Prepared(build);

/**
 * A statement whose shape depends on a few choices (which columns a move writes, how many rows an insert
 * has): one Prepared per choice, made on first use.
 */
export function preparedBy<K extends string | number, P extends object, O>(
  build: (db: Executor, p: P, key: K) => Compilable<O> & OperationNodeSource,
): (key: K) => Prepared<P, O> {
  const made = new Map<K, Prepared<P, O>>();
  return (key) => {
    let statement = made.get(key);
    if (!statement) {
      statement = new Prepared<P, O>((db, p) => build(db, p, key));
      made.set(key, statement);
    }
    return statement;
  };
}
