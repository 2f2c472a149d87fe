// Summarizes a V8 .cpuprofile (from BENCH_CPU_PROF=1): self time by package or source file, then the
// heaviest functions, then each sample charged to the innermost function of our own sources on its stack
// (what a request's steps cost with the libraries they call). Usage:
// node --import tsx packages/server/bench/profile-summary.ts FILE [TOP] [LAST_SECONDS]
// LAST_SECONDS keeps only the profile's last seconds (the measured load, not the start-up and set-up).
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [file, top = '30', last] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: profile-summary.ts FILE.cpuprofile [TOP]\n');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const parents = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
const times: number[] = [];
let clock = 0;
for (const delta of profile.timeDeltas) {
  clock += delta;
  times.push(clock);
}
const from = last ? clock - Number(last) * 1e6 : -Infinity;
const selfTime = new Map<number, number>();
let total = 0;
profile.samples.forEach((id, i) => {
  if ((times[i] ?? 0) < from) return;
  const delta = profile.timeDeltas[i] ?? 0;
  selfTime.set(id, (selfTime.get(id) ?? 0) + delta);
  total += delta;
});

const SPECIAL = new Set(['(idle)', '(garbage collector)', '(program)']);
function bucketOf({ functionName, url }: ProfileNode['callFrame']): string {
  if (SPECIAL.has(functionName)) return functionName;
  if (!url) return '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return `package ${pkg[1]}`;
  const source = /packages\/(.*)$/.exec(url);
  return source ? `source ${source[1]}` : url;
}

const ours = (frame: ProfileNode['callFrame']) => /packages\/[^/]+\/src\//.test(frame.url);
const nameOf = (frame: ProfileNode['callFrame']) => {
  const where = frame.url.replace(/.*node_modules\//, '').replace(/.*packages\//, '');
  return `${frame.functionName || '(anonymous)'}  ${where}${where ? `:${frame.lineNumber + 1}` : ''}`;
};
const buckets = new Map<string, number>();
const functions = new Map<string, number>();
const charged = new Map<string, number>();
for (const [id, time] of selfTime) {
  const frame = nodes.get(id)?.callFrame;
  if (!frame) continue;
  const bucket = bucketOf(frame);
  buckets.set(bucket, (buckets.get(bucket) ?? 0) + time);
  const name = nameOf(frame);
  functions.set(name, (functions.get(name) ?? 0) + time);
  let at: number | undefined = id;
  while (at !== undefined && !ours(nodes.get(at)?.callFrame ?? frame)) at = parents.get(at);
  const owner = at === undefined ? '(not under our sources)' : nameOf(nodes.get(at)?.callFrame ?? frame);
  charged.set(owner, (charged.get(owner) ?? 0) + time);
}

const percent = (time: number) => `${((100 * time) / total).toFixed(1).padStart(5)}%`;
const heaviest = (map: Map<string, number>) =>
  [...map].sort((a, b) => b[1] - a[1]).slice(0, Number(top) || 30);
const lines = [`${(total / 1e6).toFixed(1)} s sampled`, '', 'self time by package or file:'];
for (const [name, time] of heaviest(buckets)) lines.push(`${percent(time)}  ${name}`);
lines.push('', 'self time by function:');
for (const [name, time] of heaviest(functions)) lines.push(`${percent(time)}  ${name}`);
lines.push('', 'charged to the innermost function of our sources on the stack:');
for (const [name, time] of heaviest(charged)) lines.push(`${percent(time)}  ${name}`);
process.stdout.write(`${lines.join('\n')}\n`);
