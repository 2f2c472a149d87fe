// Loaded with --import into a process of the PostgreSQL bench: with BENCH_PG_STATEMENT_LOG=FILE, every
// statement the process sends through `pg` (its pools, its LISTEN client) is appended to FILE, one a
// line with its whitespace collapsed, before it is sent. bench/postgres.ts reads these logs to check that
// reference-pg.ts sends what the service sends (docs/benchmarks.md#hot-paths-on-postgresql). A write per
// statement: for the check's processes only, never the measured ones.
import { appendFileSync } from 'node:fs';
import pg from 'pg';

const file = process.env.BENCH_PG_STATEMENT_LOG;
if (file) {
  const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  pg.Client.prototype.query = function logged(this: pg.Client, ...args: unknown[]) {
    const config = args[0];
    const text = typeof config === 'string' ? config : (config as { text?: unknown } | null)?.text;
    if (typeof text === 'string') appendFileSync(file, `${text.replace(/\s+/g, ' ').trim()}\n`);
    return query.apply(this, args);
  } as typeof pg.Client.prototype.query;
}
