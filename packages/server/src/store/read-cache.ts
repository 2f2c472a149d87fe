// An exact read cache for hot lookups on embedded SQLite (API keys, a merchant's name, the session the
// SDK polls), kept by what writes touch (docs/decisions.md#read-caches). Not a TTL: each cache names the
// tables its values are read from, and every write this process sends is read off the query as it goes
// by (store/db.ts): a write to one of those tables drops what it may change — for a cache keyed by
// session, only that session's entries when the write names its session (an insert's session_id, an
// update's or delete's `session_id =` or, on sessions, `id =`), else everything. A commit by another
// process (SQLite's data_version, read at most every 100 ms) drops everything. On PostgreSQL, where
// other processes write unseen, nothing is cached. Cached values are frozen, so no caller can change
// what the next one reads.
import type {
  ColumnNode,
  KyselyPlugin,
  OperationNode,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryId,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';
import { boundValue } from './prepared.ts';

/** What a write touched: its table (undefined when it cannot be told) and, when named, its sessions. */
export interface Write {
  table: string | undefined;
  sessions: string[] | undefined;
}

/**
 * What a cache reads from. Every write must reach the plugin below to be heard: a statement sent as an
 * already compiled query (db.executeQuery) is not, so such statements may only write tables no cache reads.
 */
export interface CacheOptions {
  /** The tables the cached values are read from. */
  tables: readonly string[];
  /** Entries carry the session they were read for, and a write naming another session leaves them. */
  bySession?: boolean;
  max?: number;
}

export class ReadCache<V> {
  readonly #entries = new Map<string, V>();
  /** The keys of each session's entries (caches by session). */
  readonly #keysOf = new Map<string, Set<string>>();
  /** Moves on every drop of everything: a load that saw it move is not kept. */
  #generation = 0;
  /** Moves on every drop of one session's entries, per session, while entries or loads may need it. */
  readonly #sessionGenerations = new Map<string, number>();
  #version = -1;
  readonly #tables: ReadonlySet<string>;
  readonly #bySession: boolean;
  readonly #max: number;

  constructor(
    options: CacheOptions,
    private readonly dataVersion: () => number,
  ) {
    this.#tables = new Set(options.tables);
    this.#bySession = options.bySession ?? false;
    this.#max = options.max ?? 10_000;
  }

  /** Whether this cache was made with `options` (one name, one set of tables). */
  readsAs(options: CacheOptions): boolean {
    return (
      (options.bySession ?? false) === this.#bySession &&
      options.tables.length === this.#tables.size &&
      options.tables.every((t) => this.#tables.has(t))
    );
  }

  /** A write of this process went by (as it was sent, and again once it ran). */
  written(write: Write): void {
    if (write.table !== undefined && !this.#tables.has(write.table)) return;
    if (!this.#bySession || write.table === undefined || write.sessions === undefined) {
      this.#clear();
      return;
    }
    for (const session of write.sessions) {
      const keys = this.#keysOf.get(session);
      if (keys) for (const key of keys) this.#entries.delete(key);
      this.#keysOf.delete(session);
      this.#sessionGenerations.set(session, (this.#sessionGenerations.get(session) ?? 0) + 1);
    }
    if (this.#sessionGenerations.size > this.#max) this.#clear();
  }

  #clear(): void {
    this.#entries.clear();
    this.#keysOf.clear();
    this.#sessionGenerations.clear();
    this.#generation++;
  }

  /**
   * The value for `key` (read for `session`, in a cache by session), from the cache while nothing that
   * may change it was written since, else from `load`. `load` reads outside any transaction: a value read
   * inside one could be rolled back, and a rollback is no write the cache hears of.
   */
  async get(key: string, load: () => Promise<V | undefined>, session?: string): Promise<V | undefined> {
    const version = this.dataVersion();
    if (version !== this.#version) {
      this.#clear();
      this.#version = version;
    }
    const cached = this.#entries.get(key);
    if (cached !== undefined) return cached;
    const generation = this.#generation;
    const sessionGeneration = session === undefined ? 0 : (this.#sessionGenerations.get(session) ?? 0);
    const value = await load();
    // Misses are not kept (a row created a moment later must be found), nor values read while a write
    // that may change them went by: it may have changed them after they were read.
    if (value === undefined) return value;
    deepFreeze(value);
    const clean =
      this.#generation === generation &&
      (session === undefined || (this.#sessionGenerations.get(session) ?? 0) === sessionGeneration) &&
      this.dataVersion() === version;
    if (clean) {
      if (this.#entries.size >= this.#max) this.#clear();
      this.#entries.set(key, value);
      if (session !== undefined && this.#bySession) {
        const keys = this.#keysOf.get(session);
        if (keys) keys.add(key);
        else this.#keysOf.set(session, new Set([key]));
      }
    }
    return value;
  }
}

function deepFreeze(value: unknown): void {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const inner of Object.values(value)) deepFreeze(inner);
}

/**
 * Counts queries, and tells `onWrite` of every query that is not a SELECT twice: as it is sent and once
 * it has run. A read that starts between the two (the single connection's lock does not serve waiters
 * in arrival order) sees its cache move while it loads, and what it read is not kept.
 */
export class QueryCounter implements KyselyPlugin {
  queries = 0;
  readonly #running = new WeakMap<QueryId, Write>();

  constructor(private readonly onWrite: (write: Write) => void = () => {}) {}

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    this.queries++;
    if (args.node.kind !== 'SelectQueryNode') {
      const write = writeOf(args.node);
      if (write) {
        this.onWrite(write);
        this.#running.set(args.queryId, write);
      }
    }
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    const write = this.#running.get(args.queryId);
    if (write) {
      this.#running.delete(args.queryId);
      this.onWrite(write);
    }
    return args.result;
  }
}

/**
 * What a raw statement writes: a SELECT nothing (null); an UPDATE, INSERT or DELETE its table when the
 * table plainly follows (not `update or …`, not `schema.table`); anything else an unknown table.
 */
const RAW_WRITE = /^\s*(?:update|insert\s+into|delete\s+from)\s+"?(\w+)"?(?=[\s(])/i;

/**
 * The table and sessions a write names; null for a raw SELECT (a read); a raw write names its table
 * when it starts with it, and any other shape names neither.
 */
function writeOf(node: RootOperationNode): Write | null {
  switch (node.kind) {
    case 'InsertQueryNode': {
      const table = tableOf(node.into);
      const column = table === 'sessions' ? 'id' : 'session_id';
      const at = node.columns?.findIndex((c: ColumnNode) => c.column.name === column) ?? -1;
      if (table === undefined || at < 0 || node.values?.kind !== 'ValuesNode')
        return { table, sessions: undefined };
      const sessions: string[] = [];
      for (const row of (node.values as unknown as { values: OperationNode[] }).values) {
        const id = rowValue(row, at);
        if (typeof id !== 'string') return { table, sessions: undefined };
        sessions.push(id);
      }
      return { table, sessions };
    }
    case 'UpdateQueryNode':
    case 'DeleteQueryNode': {
      const target = node.kind === 'UpdateQueryNode' ? node.table : node.from.froms[0];
      const table = tableOf(target);
      const column = table === 'sessions' ? 'id' : 'session_id';
      // Rows found through other tables, or moved to another session, name no session of their own.
      const joined =
        node.joins !== undefined ||
        (node.kind === 'UpdateQueryNode'
          ? node.from !== undefined ||
            node.updates?.some((u) => (u.column as unknown as ColumnNode).column?.name === column)
          : node.from.froms.length > 1 || node.using !== undefined);
      const id = joined || table === undefined ? undefined : equalsIn(node.where?.where, column, table);
      return { table, sessions: typeof id === 'string' ? [id] : undefined };
    }
    case 'RawNode': {
      const text = (node as unknown as { sqlFragments: readonly string[] }).sqlFragments[0] ?? '';
      if (/^\s*select\s/i.test(text)) return null;
      const table = RAW_WRITE.exec(text)?.[1];
      return { table: table?.toLowerCase() === 'or' ? undefined : table, sessions: undefined };
    }
    default:
      return { table: undefined, sessions: undefined };
  }
}

function tableOf(node: OperationNode | undefined): string | undefined {
  if (node?.kind === 'TableNode')
    return (node as unknown as { table: { identifier: { name: string } } }).table.identifier.name;
  if (node?.kind === 'AliasNode') return tableOf((node as unknown as { node: OperationNode }).node);
  return undefined;
}

function rowValue(row: OperationNode, at: number): unknown {
  const values = (row as unknown as { values: readonly unknown[] }).values;
  if (row.kind === 'PrimitiveValueListNode') return boundValue(values[at]);
  const cell = values[at] as OperationNode | undefined;
  return cell?.kind === 'ValueNode' ? boundValue((cell as unknown as { value: unknown }).value) : undefined;
}

/** The value `column = value` (the column unqualified or of `table`) sets in a where clause of ANDs. */
function equalsIn(node: OperationNode | undefined, column: string, table: string): unknown {
  if (!node) return undefined;
  if (node.kind === 'AndNode') {
    const and = node as unknown as { left: OperationNode; right: OperationNode };
    return equalsIn(and.left, column, table) ?? equalsIn(and.right, column, table);
  }
  if (node.kind === 'ParensNode')
    return equalsIn((node as unknown as { node: OperationNode }).node, column, table);
  if (node.kind !== 'BinaryOperationNode') return undefined;
  const { leftOperand, operator, rightOperand } = node as unknown as {
    leftOperand: OperationNode;
    operator: { operator: string };
    rightOperand: OperationNode;
  };
  if (operator.operator !== '=' || leftOperand.kind !== 'ReferenceNode' || rightOperand.kind !== 'ValueNode')
    return undefined;
  const { column: ref, table: qualifier } = leftOperand as unknown as {
    column: OperationNode;
    table?: OperationNode;
  };
  if (ref.kind !== 'ColumnNode' || (ref as unknown as ColumnNode).column.name !== column) return undefined;
  if (qualifier !== undefined && tableOf(qualifier) !== table) return undefined;
  return boundValue((rightOperand as unknown as { value: unknown }).value);
}
