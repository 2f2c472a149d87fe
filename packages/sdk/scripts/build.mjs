// Builds what the SDK ships and the service serves at {pay_url}/sdk/v1/: dist/group-checkout.js (a classic
// script defining the global GroupCheckout), dist/group-checkout.mjs (ES module) and dist/index.d.ts,
// from src/ with esbuild (bundled, minified, no runtime dependency) and the repository's TypeScript.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = fileURLToPath(new URL('..', import.meta.url));
const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));

rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
const common = {
  absWorkingDir: here,
  entryPoints: ['src/index.ts'],
  bundle: true,
  minify: true,
  target: ['es2019'],
  define: { __SDK_VERSION__: JSON.stringify(version) },
  legalComments: 'none',
  logLevel: 'warning',
};
await build({ ...common, format: 'iife', globalName: 'GroupCheckout', outfile: 'dist/group-checkout.js' });
await build({ ...common, format: 'esm', outfile: 'dist/group-checkout.mjs' });

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const types = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], {
  cwd: here,
  stdio: 'inherit',
});
if (types.status !== 0) process.exit(types.status ?? 1);
