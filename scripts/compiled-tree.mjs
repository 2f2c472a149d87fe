// The repository as the test run loads it: every workspace's TypeScript compiled once to JavaScript, in a
// tree beside the sources (scripts/test.mjs makes one a run, in node_modules/.cache/group-checkout-tests/)
// laid out as the repository is, so that every path a module or a test works out from its own URL still
// lands where it should.
//
// Why: through tsx, each test file and each server or CLI a test starts spent about two seconds of CPU
// loading the service's two hundred modules through the loader thread, about a third of the whole run's
// CPU. Loading the same modules compiled takes under one second (docs/decisions.md#tests-run-compiled).
//
// The tree: in each workspace (package.json's "workspaces"), every .ts becomes a .js beside a link to the
// .ts itself (the hosted pages compile their browser scripts from the .ts at run time), .d.ts files and
// anything else are links, other JavaScript files are copied (so that their relative imports stay in the
// tree), dist/ and node_modules/ are links. The workspace's package.json is copied with its
// "@group-checkout/source" export pointing at the compiled .js. At the top, every entry is a link but for
// node_modules, a folder of links to the repository's own except @group-checkout/*, which points at the
// tree's workspaces. A relative import of a .ts file is rewritten to its .js; a package import is left alone.
import {
  copyFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative, resolve } from 'node:path';

/** Builds the tree for the repository at `root` into `out` (emptied first); returns `out`. */
export async function buildCompiledTree(root, out) {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const workspaces = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).workspaces;
  const compile = [];

  for (const name of readdirSync(root)) {
    if (['node_modules', '.git'].includes(name)) continue;
    if (workspaces.some((w) => w.split('/')[0] === name)) continue;
    symlinkSync(join(root, name), join(out, name));
  }

  for (const workspace of workspaces) mirror(join(root, workspace), join(out, workspace), compile, true);

  // The repository's node_modules, but for our own workspaces, which are the tree's.
  const modules = join(out, 'node_modules');
  mkdirSync(modules);
  for (const name of readdirSync(join(root, 'node_modules'))) {
    if (name === '.cache') continue;
    if (name !== '@group-checkout') {
      symlinkSync(join(root, 'node_modules', name), join(modules, name));
      continue;
    }
    mkdirSync(join(modules, name));
    for (const pkg of readdirSync(join(root, 'node_modules', name))) {
      const link = join(root, 'node_modules', name, pkg);
      const real = resolve(join(root, 'node_modules', name), readlinkSync(link));
      symlinkSync(join(out, relative(root, real)), join(modules, name, pkg));
    }
  }

  // esbuild comes with the server's dependencies (its hosted pages are built with it).
  const { build } = createRequire(join(root, 'packages/server/package.json'))('esbuild');
  await build({
    entryPoints: compile,
    outdir: out,
    outbase: root,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'inline',
    sourcesContent: false,
    logLevel: 'error',
    plugins: [
      {
        name: 'one-file-each',
        setup(b) {
          // Bundling only to rewrite imports: every import stays an import, a relative .ts one made .js.
          b.onResolve({ filter: /.*/ }, (args) => {
            if (args.kind === 'entry-point') return undefined;
            if (args.path.startsWith('.')) return { path: args.path.replace(/\.ts$/, '.js'), external: true };
            return { path: args.path, external: true };
          });
        },
      },
    ],
  });
  return out;
}

/** Lays `from` out at `to`; `top` is a workspace's own folder, whose package.json is made to fit the tree. */
function mirror(from, to, compile, top = false) {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.isDirectory()) {
      if (entry.name === 'node_modules' || entry.name === 'dist') symlinkSync(source, target);
      else mirror(source, target, compile);
    } else if (top && entry.name === 'package.json') {
      const pkg = readFileSync(source, 'utf8').replace(
        /("@group-checkout\/source":\s*"[^"]*)\.ts"/g,
        (_, start) => `${start}.js"`,
      );
      writeFileSync(target, pkg);
    } else if (/\.(m|c)?js$/.test(entry.name)) {
      copyFileSync(source, target);
    } else {
      symlinkSync(source, target);
      if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) compile.push(source);
    }
  }
}
