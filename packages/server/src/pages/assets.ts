// The hosted pages' scripts and styles (docs/architecture.md#hosted-pages): built from TypeScript and CSS
// with esbuild once per process, the first time the pages plugin is registered, kept in memory with their
// gzip and brotli forms, and served under names that carry a hash of their content, so a browser may keep
// them for a year and a new build is a new URL.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { build } from 'esbuild';

export interface Asset {
  /** The hashed file name, as served under {pay_url}/assets/. */
  name: string;
  contentType: string;
  body: Buffer;
  gzip: Buffer;
  brotli: Buffer;
  etag: string;
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
  return {
    name: `${stem}.${hash}.${ext}`,
    contentType,
    body,
    gzip: gzipSync(body, { level: 9 }),
    brotli: brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }),
    etag: `"${hash}"`,
  };
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

/** The body to send for an Accept-Encoding header: brotli, else gzip, else as is. */
export function encodedBody(a: Pick<Asset, 'body' | 'gzip' | 'brotli'>, acceptEncoding: string | undefined) {
  const accept = acceptEncoding ?? '';
  if (/\bbr\b/.test(accept)) return { encoding: 'br', body: a.brotli };
  if (/\bgzip\b/.test(accept)) return { encoding: 'gzip', body: a.gzip };
  return { encoding: undefined, body: a.body };
}
