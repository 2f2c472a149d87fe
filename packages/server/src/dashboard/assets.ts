// The dashboard's stylesheet (docs/dashboard.md): minified with esbuild once per process, kept in memory
// (its gzip and brotli forms made on first use: pages/compressed.ts), served under a name carrying a hash
// of its content. The dashboard has no script: every page is a document and every change a form.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { transform } from 'esbuild';
import { type Compressed, compress } from '../pages/compressed.ts';

export interface DashboardAsset extends Compressed {
  name: string;
}

let built: Promise<DashboardAsset> | undefined;

async function build(): Promise<DashboardAsset> {
  const source = await readFile(fileURLToPath(new URL('./styles.css', import.meta.url)), 'utf8');
  const { code } = await transform(source, { loader: 'css', minify: true });
  const body = Buffer.from(code);
  const hash = createHash('sha256').update(body).digest('base64url').slice(0, 12);
  return { name: `dashboard.${hash}.css`, ...compress(body) };
}

/** Built on first use and shared by every app in the process. */
export function dashboardStyles(): Promise<DashboardAsset> {
  built ??= build();
  return built;
}
