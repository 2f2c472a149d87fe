// Fixed-window counters for failed authentications (docs/api.md#authentication): in memory for one process, or in
// Redis so that every server process sees the same counts. Route rate limits use @fastify/rate-limit
// with the same Redis connection; this store exists because those limits count every request while
// these count only failures.
import type { Redis } from 'ioredis';

export interface CounterStore {
  /** Adds one to `key` in its current window; answers the count and milliseconds until the window ends. */
  increment(key: string, windowMs: number): Promise<{ count: number; resetMs: number }>;
  /** Current counts of `keys` (0 where none) and, for each, milliseconds until its window ends. */
  read(keys: string[]): Promise<{ count: number; resetMs: number }[]>;
}

export class MemoryCounterStore implements CounterStore {
  readonly #windows = new Map<string, { count: number; resetAt: number }>();
  #lastSweep = 0;

  constructor(private readonly now: () => number = Date.now) {}

  async increment(key: string, windowMs: number) {
    const now = this.now();
    this.#sweep(now);
    let window = this.#windows.get(key);
    if (!window || window.resetAt <= now) {
      window = { count: 0, resetAt: now + windowMs };
      this.#windows.set(key, window);
    }
    window.count++;
    return { count: window.count, resetMs: window.resetAt - now };
  }

  async read(keys: string[]) {
    const now = this.now();
    return keys.map((key) => {
      const window = this.#windows.get(key);
      return window && window.resetAt > now
        ? { count: window.count, resetMs: window.resetAt - now }
        : { count: 0, resetMs: 0 };
    });
  }

  /** Drops ended windows at most once a second, so memory stays bounded by the active keys. */
  #sweep(now: number) {
    if (now - this.#lastSweep < 1000) return;
    this.#lastSweep = now;
    for (const [key, window] of this.#windows) if (window.resetAt <= now) this.#windows.delete(key);
  }
}

const INCREMENT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {count, redis.call('PTTL', KEYS[1])}`;

/** Counters in Redis. When Redis fails, counts read as 0 (fail open) and `onError` hears of it. */
export class RedisCounterStore implements CounterStore {
  constructor(
    private readonly redis: Redis,
    private readonly onError: (error: Error) => void,
    private readonly namespace = 'gc:counter:',
  ) {}

  async increment(key: string, windowMs: number) {
    try {
      const [count, ttl] = (await this.redis.eval(INCREMENT_SCRIPT, 1, this.namespace + key, windowMs)) as [
        number,
        number,
      ];
      return { count, resetMs: Math.max(ttl, 0) };
    } catch (error) {
      this.onError(error as Error);
      return { count: 0, resetMs: 0 };
    }
  }

  async read(keys: string[]) {
    try {
      return await this.#read(keys);
    } catch (error) {
      this.onError(error as Error);
      return keys.map(() => ({ count: 0, resetMs: 0 }));
    }
  }

  async #read(keys: string[]) {
    if (keys.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const key of keys) pipeline.get(this.namespace + key).pttl(this.namespace + key);
    const results = (await pipeline.exec()) ?? [];
    return keys.map((_, i) => {
      const count = Number(results[i * 2]?.[1] ?? 0);
      const ttl = Number(results[i * 2 + 1]?.[1] ?? 0);
      return { count: Number.isFinite(count) ? count : 0, resetMs: Math.max(ttl, 0) };
    });
  }
}
