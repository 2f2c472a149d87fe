// Runs every *.test.ts under packages/*/test and examples/*/test with Node's test runner, and says up front
// which suites will be skipped for want of a server, so a local run never hides what it did not test;
// the closing "skipped" count includes those suites (scripts/test-reporter.mjs). The files run compiled:
// the whole repository is compiled once, in under a second, into a tree laid out as it is
// (scripts/compiled-tree.mjs), and each test file, and each server or CLI a test starts, loads JavaScript
// rather than going through tsx. One file runs from its sources with `node --import tsx --test <file>`.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildCompiledTree } from './compiled-tree.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));

function find(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (name === 'node_modules' || name === 'fixtures') continue;
    if (statSync(path).isDirectory()) out.push(...find(path));
    else if (name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

/** Whether a process with this id runs (one of another user's counts: its tree is not ours to remove). */
function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

const isBrowserSuite = (file) => file.split(/[\\/]/).includes('browser');

const filter = process.argv.slice(2);
const files = ['packages', 'examples']
  .flatMap((top) => readdirSync(join(root, top)).map((pkg) => join(top, pkg, 'test')))
  .filter((dir) => statSync(join(root, dir), { throwIfNoEntry: false })?.isDirectory())
  .flatMap((dir) => find(join(root, dir)).map((file) => relative(root, file)))
  .filter((file) => filter.length === 0 || filter.some((f) => file.includes(f)))
  .sort()
  // The browser suites are the longest (a minute to several each): started first, the run does not end
  // waiting on one of them while the other slots are empty.
  .sort((a, b) => Number(isBrowserSuite(b)) - Number(isBrowserSuite(a)));

if (!process.env.TEST_DATABASE_URL) {
  console.log(
    'note: TEST_DATABASE_URL is not set: every PostgreSQL variant of the storage suites is skipped.',
  );
}
if (!process.env.TEST_REDIS_URL) {
  console.log('note: TEST_REDIS_URL is not set: the Redis rate-limit suites are skipped.');
}

// A tree of this run's own, so that two runs side by side never rebuild each other's; removed after.
// A run that was killed could not remove its own: the trees of runs no longer alive go first, once an
// hour old (a run in another PID namespace on the same checkout looks dead from here; none lasts an hour).
const trees = join(root, 'node_modules/.cache/group-checkout-tests');
mkdirSync(trees, { recursive: true });
for (const name of readdirSync(trees, { withFileTypes: true })) {
  const path = join(trees, name.name);
  if (!name.isDirectory() || !/^\d+$/.test(name.name) || isAlive(Number(name.name))) continue;
  if (statSync(path).mtimeMs < Date.now() - 3_600_000) rmSync(path, { recursive: true, force: true });
}
const tree = await buildCompiledTree(root, join(trees, String(process.pid)));
const compiled = files.map((file) => join(tree, file).replace(/\.ts$/, '.js'));

const result = spawnSync(
  process.execPath,
  [
    '--test',
    '--test-concurrency=3',
    // Per test file as well as per test: the crash suites restart the server again and again, and the
    // browser suites that run axe and take screenshots of every page in both themes took 4½ minutes on
    // a loaded machine (about one on a quiet one). A hang still ends, and is named, within ten minutes.
    '--test-timeout=600000',
    // Node's own reporter, except that the closing "skipped" count includes suites skipped whole.
    `--test-reporter=${fileURLToPath(new URL('./test-reporter.mjs', import.meta.url))}`,
    '--test-reporter-destination=stdout',
    ...compiled,
  ],
  {
    stdio: 'inherit',
    env: {
      ...process.env,
      NODE_ENV: 'test',
      // Where the sources are, for the few tests that work on the repository itself rather than the
      // compiled tree (packing @group-checkout/node, running the README's commands).
      TEST_SOURCE_ROOT: root,
      // @group-checkout/node from its sources (compiled in the tree), as the type-check reads it
      // (tsconfig.json), in the test processes and the servers they start; a child given an environment
      // of its own (the CLI's tests) loads the package's build instead, which npm ci makes. Stack traces
      // name the .ts files and lines.
      NODE_OPTIONS: [process.env.NODE_OPTIONS, '--conditions=@group-checkout/source', '--enable-source-maps']
        .filter(Boolean)
        .join(' '),
    },
  },
);
rmSync(tree, { recursive: true, force: true });
process.exit(result.status ?? 1);
