// The soak (docs/benchmarks.md#how-cost-grows-17), `BENCH_ONLY=soak`, not part of the default run: the
// `mixed` load (bench/mixed.ts: GET /v1/sessions/{id} over BENCH_MIXED_SESSIONS sessions with autocannon,
// and BENCH_MIXED_WRITES creates and as many pays a second beside it) for BENCH_SOAK_SECONDS (600, the
// documented run), with the service's resident memory (VmRSS of /proc/<pid>/status) sampled every
// BENCH_SOAK_SAMPLE_SECONDS (10), and the SQLite file's size beside it. It reports the samples, the growth
// over the second half and its slope: information, no goal.
import { readFileSync, statSync } from 'node:fs';
import autocannon, { type RequestParams } from 'autocannon';
import { type Child, cpuSeconds } from './children.ts';
import { columns } from './load.ts';
import { SessionCycle, seedPolled, startWrites, type WritesDone } from './mixed.ts';
import { GROUP_SIZE, PAY_BODY, SharePool, seedService } from './shares.ts';

export interface SoakOptions {
  baseUrl: string;
  service: Child;
  /** The service's SQLite file (its -wal beside it is counted too). */
  databaseFile: string;
  createHeaders: Record<string, string>;
  createBody: string;
  secretHeaders: Record<string, string>;
  signingSecret: string;
  seconds: number;
  sampleSeconds: number;
  writesPerSecond: number;
  sessions: number;
  connections: number;
}

interface Sample {
  /** Seconds since the load started. */
  at: number;
  rssMb: number;
  databaseMb: number;
}

export interface SoakResult {
  seconds: number;
  samples: Sample[];
  gets: number;
  getsPerSecond: number;
  non2xx: number;
  writes: WritesDone;
  serverCpuMicrosPerRequest: number | null;
}

const MB = 1024 * 1024;

function rssMb(child: Child): number {
  const status = readFileSync(`/proc/${child.process.pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN) / 1024;
}

function fileMb(file: string): number {
  let bytes = 0;
  for (const f of [file, `${file}-wal`]) {
    try {
      bytes += statSync(f).size;
    } catch {
      // not there (yet)
    }
  }
  return bytes / MB;
}

export async function benchSoak(options: SoakOptions): Promise<SoakResult> {
  const { baseUrl, service, seconds } = options;
  const payGroups = Math.ceil((options.writesPerSecond * (seconds + 10) * 1.1) / GROUP_SIZE);
  process.stderr.write(
    `bench: soak: making ${options.sessions} sessions to poll and ${payGroups} groups to pay …\n`,
  );
  const polled = new SessionCycle(
    await seedPolled(baseUrl, options.createHeaders, options.createBody, options.sessions),
  );
  const pays = new SharePool(
    await seedService(baseUrl, options.createHeaders, options.signingSecret, payGroups),
  );
  process.stderr.write(`bench: soak: ${seconds} s, RSS every ${options.sampleSeconds} s …\n`);
  const samples: Sample[] = [];
  const started = performance.now();
  const sample = () =>
    samples.push({
      at: (performance.now() - started) / 1000,
      rssMb: rssMb(service),
      databaseMb: fileMb(options.databaseFile),
    });
  sample();
  const timer = setInterval(sample, options.sampleSeconds * 1000);
  const beside = startWrites(
    baseUrl,
    { headers: options.createHeaders, body: options.createBody },
    pays,
    PAY_BODY,
    options.writesPerSecond,
  );
  const cpuBefore = cpuSeconds(service);
  const result = await autocannon({
    url: baseUrl,
    method: 'GET',
    headers: options.secretHeaders,
    connections: options.connections,
    duration: seconds,
    requests: [{ setupRequest: (req: RequestParams) => ({ ...req, path: polled.path() }) }],
  });
  const writes = await beside.stop();
  const cpuAfter = cpuSeconds(service);
  clearInterval(timer);
  sample();
  const answered = result['2xx'] + result.non2xx + writes.creates + writes.pays + writes.failed;
  return {
    seconds,
    samples,
    gets: result['2xx'],
    getsPerSecond: result.requests.mean,
    non2xx: result.non2xx,
    writes,
    serverCpuMicrosPerRequest:
      cpuBefore === null || cpuAfter === null || answered === 0
        ? null
        : ((cpuAfter - cpuBefore) * 1e6) / answered,
  };
}

/** Least-squares slope of `y` over `x`. */
function slope(points: { x: number; y: number }[]): number {
  const n = points.length;
  if (n < 2) return Number.NaN;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const num = points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0);
  const den = points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  return den === 0 ? Number.NaN : num / den;
}

export function soakReport(r: SoakResult): string[] {
  const out = [
    `soak: the mixed load for ${r.seconds} s (information, no goal): ${r.gets} GETs answered 2xx ` +
      `(${r.getsPerSecond.toFixed(0)}/s, ${r.non2xx} non-2xx), beside them ${r.writes.creates} creates and ` +
      `${r.writes.pays} pays (${r.writes.failed} failed, ${r.writes.skipped} ticks skipped); ` +
      `server ${r.serverCpuMicrosPerRequest?.toFixed(0) ?? 'n/a'} µs per request`,
    '',
  ];
  const every = Math.max(1, Math.round(r.samples.length / 20));
  const rows = [['s', 'RSS MB', 'SQLite file MB']];
  r.samples.forEach((s, i) => {
    if (i % every === 0 || i === r.samples.length - 1)
      rows.push([s.at.toFixed(0), s.rssMb.toFixed(1), s.databaseMb.toFixed(1)]);
  });
  out.push(...columns(rows, 0));
  const half = r.samples.filter((s) => s.at >= r.seconds / 2);
  if (half.length >= 2) {
    const rss = half.map((s) => s.rssMb);
    const perMinute = slope(half.map((s) => ({ x: s.at / 60, y: s.rssMb })));
    const dbPerMinute = slope(half.map((s) => ({ x: s.at / 60, y: s.databaseMb })));
    out.push(
      '',
      `second half: RSS ${Math.min(...rss).toFixed(1)}–${Math.max(...rss).toFixed(1)} MB, slope ` +
        `${perMinute.toFixed(2)} MB/min; the SQLite file grows ${dbPerMinute.toFixed(2)} MB/min; ` +
        `peak ${Math.max(...r.samples.map((s) => s.rssMb)).toFixed(1)} MB`,
    );
  }
  return out;
}
