#!/usr/bin/env node
// The CLI runs the TypeScript sources through tsx, the same way `npm start` does. In a compiled copy of
// the repository (the test run's, scripts/compiled-tree.mjs) the JavaScript beside the sources runs.
import { existsSync } from 'node:fs';

const compiled = new URL('../src/cli/index.js', import.meta.url);
if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/index.ts');
}
