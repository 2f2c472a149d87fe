// The hosted pages' scripts and styles (docs/architecture.md#hosted-pages): built from TypeScript and CSS
// with esbuild once per process, the first time the pages plugin is registered, kept in memory (their
// gzip and brotli forms made on first use: pages/compressed.ts), and served under names that carry a hash
// of their content, so a browser may keep them for a year and a new build is a new URL.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { type Compressed, compress } from './compressed.ts';

export interface Asset extends Compressed {
  /** The hashed file name, as served under {pay_url}/assets/. */
  name: string;
  contentType: string;
}

/** The pages' scripts, by page, and the one stylesheet they share. */
export interface PageAssets {
  byName: Map<string, Asset>;
  css: Asset;
  scripts: Record<PageScript, Asset>;
}

export type PageScript = 'organizer' | 'group' | 'share';
const SCRIPTS: PageScript[] = ['organizer', 'group', 'share'];

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

function asset(stem: string, ext: string, contentType: string, body: Buffer): Asset {
  const hash = createHash('sha256').update(body).digest('base64url').slice(0, 12);
  return { name: `${stem}.${hash}.${ext}`, contentType, ...compress(body) };
}

async function buildAssets(): Promise<PageAssets> {
  const scripts = await build({
    entryPoints: Object.fromEntries(SCRIPTS.map((s) => [s, here(`./client/${s}.ts`)])),
    bundle: true,
    minify: true,
    format: 'iife',
    target: ['es2020'],
    write: false,
    outdir: '/',
    legalComments: 'none',
    logLevel: 'silent',
  });
  const css = await build({
    stdin: { contents: await readFile(here('./styles.css'), 'utf8'), loader: 'css' },
    minify: true,
    write: false,
    logLevel: 'silent',
  });
  const byPage = {} as Record<PageScript, Asset>;
  for (const file of scripts.outputFiles) {
    const page = file.path.replace(/^.*\//, '').replace(/\.js$/, '') as PageScript;
    byPage[page] = asset(page, 'js', 'text/javascript; charset=utf-8', Buffer.from(file.contents));
  }
  const styles = asset(
    'pages',
    'css',
    'text/css; charset=utf-8',
    Buffer.from(css.outputFiles[0]?.contents ?? []),
  );
  const all = [styles, ...Object.values(byPage)];
  return { byName: new Map(all.map((a) => [a.name, a])), css: styles, scripts: byPage };
}

let built: Promise<PageAssets> | undefined;

/** The assets, built on first use and shared by every app in the process (tests build many apps). */
export function pageAssets(): Promise<PageAssets> {
  built ??= buildAssets();
  return built;
}
