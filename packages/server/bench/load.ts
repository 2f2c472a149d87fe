// One autocannon load against one service process, with the process's CPU time per answered request: what
// the growth and soak benchmarks share (run.ts keeps its own, which also compares against baselines).
import autocannon, { type RequestParams } from 'autocannon';
import { type Child, cpuSeconds } from './children.ts';

export interface Load {
  method: 'GET' | 'POST';
  /** Path and query; with `next`, the first request's (the check). */
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** A path per request (each pays another share), instead of `path` every time. */
  next?: () => string;
}

export interface Measured {
  requestsPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  requests: number;
  non2xx: number;
  errors: number;
  /** Server CPU time per answered request, microseconds. */
  serverCpuMicrosPerRequest: number | null;
}

/**
 * One request (which must answer 2xx), `warmupSeconds` of unmeasured load, then the measurement: for
 * `seconds`, or for exactly `amount` requests when given (a pool that may not last `seconds`).
 */
export async function measureLoad(
  server: Child,
  load: Load,
  options: { connections: number; warmupSeconds: number; seconds: number; amount?: number },
): Promise<Measured> {
  const base = `http://127.0.0.1:${server.port}`;
  const first = load.next ? load.next() : load.path;
  const checked = await fetch(`${base}${first}`, {
    method: load.method,
    headers: load.headers,
    body: load.body,
  });
  const text = await checked.text();
  if (!checked.ok)
    throw new Error(`${load.method} ${first} answered ${checked.status}: ${text.slice(0, 300)}`);
  const { next } = load;
  const request = {
    url: next ? base : `${base}${load.path}`,
    method: load.method,
    headers: load.headers,
    body: load.body,
    connections: Math.min(options.connections, options.amount ?? Number.POSITIVE_INFINITY),
    ...(next && { requests: [{ setupRequest: (req: RequestParams) => ({ ...req, path: next() }) }] }),
  };
  if (options.warmupSeconds > 0 && options.amount === undefined)
    await autocannon({ ...request, duration: options.warmupSeconds });
  const before = cpuSeconds(server);
  const result = await autocannon(
    options.amount === undefined
      ? { ...request, duration: options.seconds }
      : { ...request, amount: options.amount },
  );
  const after = cpuSeconds(server);
  const answered = result['2xx'] + result.non2xx;
  return {
    requestsPerSecond:
      options.amount === undefined ? result.requests.mean : result['2xx'] / (result.duration || Number.NaN),
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    serverCpuMicrosPerRequest:
      before === null || after === null || answered === 0 ? null : ((after - before) * 1e6) / answered,
  };
}

/** Rows of cells as aligned columns: the first `left` columns padded right, the others left. */
export function columns(rows: string[][], left = 1): string[] {
  const widths = (rows[0] ?? []).map((_, i) => Math.max(...rows.map((row) => (row[i] ?? '').length)));
  return rows.map((row) =>
    row
      .map((cell, i) => (i < left ? cell.padEnd(widths[i] as number) : cell.padStart(widths[i] as number)))
      .join('  '),
  );
}
