// Builds what the package ships: dist/esm (ES modules) and dist/cjs (CommonJS), each with its .d.ts,
// from the same sources, with the repository's TypeScript (no bundler, no runtime dependency).
// dist/cjs gets its own package.json saying "commonjs": the package's own says "module", and without it
// Node would read the CommonJS files there as ES modules.
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('..', import.meta.url));
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

function compile(extra) {
  const result = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json', ...extra], {
    cwd: here,
    stdio: 'inherit',
  });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
compile([]);
// node10 resolution is what TypeScript pairs with CommonJS output; the sources only import each other
// and node: modules, so it finds the same files NodeNext does.
compile(['--module', 'commonjs', '--moduleResolution', 'node10', '--outDir', 'dist/cjs']);
mkdirSync(new URL('../dist/cjs', import.meta.url), { recursive: true });
writeFileSync(new URL('../dist/cjs/package.json', import.meta.url), '{ "type": "commonjs" }\n');
