// An exact read cache for hot lookups on embedded SQLite (API keys, the session the SDK polls). Not a
// TTL: an entry is used only while this connection has written nothing since it was read (any write
// counts, whatever it touched) and SQLite's data_version shows no commit by another process, checked
// at most every 100 ms. On PostgreSQL, where other processes write unseen, nothing is cached. Each Db
// owns its caches (store/db.ts); cached values are frozen, so no caller can change what the next one reads.
import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';

/** What a cache needs to know to stay exact: this connection's writes, and other connections' commits. */
export interface CacheClock {
  writes(): number;
  dataVersion(): number;
}

export class ReadCache<V> {
  readonly #entries = new Map<string, V>();
  #writes = -1;
  #version = -1;

  constructor(
    private readonly clock: CacheClock,
    private readonly max = 10_000,
  ) {}

  /** The value for `key`, from the cache while nothing was written since, else from `load`. */
  async get(key: string, load: () => Promise<V | undefined>): Promise<V | undefined> {
    const writes = this.clock.writes();
    const version = this.clock.dataVersion();
    if (writes !== this.#writes || version !== this.#version) {
      this.#entries.clear();
      this.#writes = writes;
      this.#version = version;
    }
    const cached = this.#entries.get(key);
    if (cached !== undefined) return cached;
    const value = await load();
    // Misses are not kept (a row created a moment later must be found), nor values read while a write
    // went by: that write may have changed them after they were read.
    if (value === undefined) return value;
    deepFreeze(value);
    if (this.clock.writes() === writes && this.clock.dataVersion() === version) {
      if (this.#entries.size >= this.max) this.#entries.clear();
      this.#entries.set(key, value);
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
 * Counts queries, and every query that is not a SELECT once as it is compiled and again when it has
 * run: a read that starts between the two (the single connection's lock does not serve waiters in
 * arrival order) sees the count move while it loads, and what it read is not cached.
 */
export class QueryCounter implements KyselyPlugin {
  writes = 0;
  queries = 0;
  readonly #running = new WeakSet<object>();

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    this.queries++;
    if (args.node.kind !== 'SelectQueryNode') {
      this.writes++;
      this.#running.add(args.queryId);
    }
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    if (this.#running.delete(args.queryId)) this.writes++;
    return args.result;
  }
}
