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
const found = ['packages', 'examples']
  .flatMap((top) => readdirSync(top).map((pkg) => join(top, pkg, 'test')))
  .filter((dir) => statSync(dir, { throwIfNoEntry: false })?.isDirectory())
  .flatMap(find)
  .filter((file) => filter.length === 0 || filter.some((f) => file.includes(f)))
  .sort();

/**
 * The order files start in. The browser suites (the server's first: the longest) keep the CPU busy for
 * minutes each, while most other suites spend much of their time waiting (on a server restarting, a
 * retry coming due, a poll): one browser suite every BROWSER_SPACING other files keeps about one or two
 * running beside the others from the start, rather than several at once, and none left to start last.
 */
const BROWSER_SPACING = 6;
function interleaved(files) {
  const browser = files
    .filter(isBrowserSuite)
    .sort((a, b) => Number(b.includes('packages/server/')) - Number(a.includes('packages/server/')));
  const others = files.filter((file) => !isBrowserSuite(file));
  const order = [];
  while (browser.length > 0 || others.length > 0) {
    if (browser.length > 0) order.push(browser.shift());
    order.push(...others.splice(0, BROWSER_SPACING));
  }
  return order;
}
const files = interleaved(found);

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
    // Four files at a time on two cores: most suites wait more than they compute (see interleaved).
    '--test-concurrency=4',
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
