// Runs every *.test.ts under packages/*/test and examples/*/test with Node's test runner (through tsx), and says up front
// which suites will be skipped for want of a server, so a local run never hides what it did not test;
// the closing "skipped" count includes those suites (scripts/test-reporter.mjs).
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

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

const isBrowserSuite = (file) => file.split(/[\\/]/).includes('browser');

const filter = process.argv.slice(2);
const files = ['packages', 'examples']
  .flatMap((top) => readdirSync(top).map((pkg) => join(top, pkg, 'test')))
  .filter((dir) => statSync(dir, { throwIfNoEntry: false })?.isDirectory())
  .flatMap(find)
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

const result = spawnSync(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    '--test-concurrency=3',
    // Per test file as well as per test: the crash suites restart the server twenty times, and the
    // browser suites that run axe and take screenshots of every page in both themes took 4½ minutes on
    // a loaded machine (about one on a quiet one). A hang still ends, and is named, within ten minutes.
    '--test-timeout=600000',
    // Node's own reporter, except that the closing "skipped" count includes suites skipped whole.
    `--test-reporter=${fileURLToPath(new URL('./test-reporter.mjs', import.meta.url))}`,
    '--test-reporter-destination=stdout',
    ...files,
  ],
  {
    stdio: 'inherit',
    env: {
      ...process.env,
      NODE_ENV: 'test',
      // @group-checkout/node from its sources, as the type-check reads it (tsconfig.json), in the test
      // processes and the servers they start; a child given an environment of its own (the CLI's
      // tests) loads the package's build instead, which npm ci makes.
      NODE_OPTIONS: [process.env.NODE_OPTIONS, '--conditions=@group-checkout/source']
        .filter(Boolean)
        .join(' '),
    },
  },
);
process.exit(result.status ?? 1);
