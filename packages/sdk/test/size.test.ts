// The classic script stays small (docs/sdk.md): at most 10,240 bytes gzipped, no runtime dependency.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { builtFile } from './dist.ts';

const LIMIT_BYTES = 10_240;

test(`dist/group-checkout.js is at most ${LIMIT_BYTES} bytes gzipped`, () => {
  const gzipped = gzipSync(readFileSync(builtFile('group-checkout.js'))).length;
  assert.ok(gzipped <= LIMIT_BYTES, `${gzipped} bytes gzipped, over the ${LIMIT_BYTES}-byte budget`);
});

test('the SDK has no runtime dependency', () => {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  assert.deepEqual(Object.keys(pkg.dependencies ?? {}), []);
  assert.deepEqual(Object.keys(pkg.peerDependencies ?? {}), []);
});
