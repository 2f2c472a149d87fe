// npm run fuzz: the long run of the fuzz suite (docs/decisions.md#fuzz-suite), 1,000 requests per
// operation on each database unless FUZZ_RUNS says otherwise, with a fixed seed unless FUZZ_SEED does.
// FUZZ_ONLY narrows it to the operations whose name contains the text. It runs the suite file directly,
// without the 120 s limit per file that scripts/test.mjs sets for `npm test`.
import { spawnSync } from 'node:child_process';

const env = {
  ...process.env,
  NODE_ENV: 'test',
  FUZZ_RUNS: process.env.FUZZ_RUNS || '1000',
  FUZZ_SEED: process.env.FUZZ_SEED || '1107',
  // @group-checkout/node from its sources, as scripts/test.mjs loads it.
  NODE_OPTIONS: [process.env.NODE_OPTIONS, '--conditions=@group-checkout/source'].filter(Boolean).join(' '),
};
if (!process.env.TEST_DATABASE_URL) {
  console.log('note: TEST_DATABASE_URL is not set: the PostgreSQL run is skipped.');
}
console.log(`fuzz: FUZZ_SEED=${env.FUZZ_SEED} FUZZ_RUNS=${env.FUZZ_RUNS}`);
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-timeout=3600000', 'packages/server/test/fuzz/api.fuzz.test.ts'],
  { stdio: 'inherit', env },
);
process.exit(result.status ?? 1);
