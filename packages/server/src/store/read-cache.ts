// A read cache for hot lookups on embedded SQLite (API keys, the session the SDK polls). It is exact,
// not a TTL: an entry is used only while this connection has written nothing since it was read (any
// write counts, whatever it touched) and SQLite's data_version shows no commit by another process,
// checked at most every 100 ms. On PostgreSQL, where other processes write unseen, it reads every time.
import type { Kysely } from 'kysely';
import { readCacheState } from './db.ts';
import type { Database } from './schema.ts';

export class ReadCache<V> {
  readonly #entries = new Map<string, V>();
  #writes = -1;
  #version = -1;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly max = 10_000,
  ) {}

  /** The value for `key`, from the cache while nothing was written since, else from `load`. */
  async get(key: string, load: () => Promise<V | undefined>): Promise<V | undefined> {
    const state = readCacheState(this.db);
    if (!state) return load();
    const writes = state.writes();
    const version = state.dataVersion();
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
    if (value !== undefined && state.writes() === writes && state.dataVersion() === version) {
      if (this.#entries.size >= this.max) this.#entries.clear();
      this.#entries.set(key, value);
    }
    return value;
  }
}
