// The package as a merchant gets it: `npm pack` (which builds it), installed from the tarball into a
// blank project with no network, then used from an ES module, a CommonJS file and TypeScript compiled
// against its .d.ts, with a type error that must be reported, so the types are known to be the ones used.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

// The package's own folder even when this file runs compiled (scripts/test.mjs sets TEST_SOURCE_ROOT).
const PACKAGE = process.env.TEST_SOURCE_ROOT
  ? join(process.env.TEST_SOURCE_ROOT, 'packages/node')
  : fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');
const ROOT_MODULES = fileURLToPath(new URL('../../../node_modules', import.meta.url));
const TSC = fileURLToPath(new URL('../../../node_modules/typescript/bin/tsc', import.meta.url));
const TYPES = fileURLToPath(new URL('../../../node_modules/@types', import.meta.url));

// Without the repository's NODE_OPTIONS: its export condition (scripts/test.mjs) would load the sources.
const { NODE_OPTIONS: _repositoryOnly, ...env } = process.env;

let dir: string;
let project: string;
let files: string[];
let installWarnings: string[];

function run(command: string, args: string[], cwd: string) {
  return spawnSync(command, args, { cwd, env, encoding: 'utf8' });
}

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'gc-node-pack-'));
  // Packed from a copy: the build writes dist/, and the repository's own dist/ must not change under
  // the test processes running beside this one (the CLI's tests load it). The copy finds TypeScript and
  // @types/node through a link to the repository's node_modules, which npm never packs.
  const copy = join(dir, 'package');
  cpSync(PACKAGE, copy, {
    recursive: true,
    filter: (source) => !/\/(dist|node_modules)$/.test(source),
  });
  symlinkSync(ROOT_MODULES, join(copy, 'node_modules'));
  // Built as a release is: the package has no lifecycle script of its own (npm ci builds it from the root).
  execFileSync('npm', ['run', '-s', 'build'], { cwd: copy, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const packed = execFileSync('npm', ['pack', '--json', '--pack-destination', dir], {
    cwd: copy,
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const [info] = JSON.parse(packed) as { filename: string; files: { path: string }[] }[];
  assert.ok(info);
  files = info.files.map((f) => f.path);
  project = join(dir, 'shop');
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), '{ "name": "shop", "private": true, "type": "module" }\n');
  const install = run(
    'npm',
    ['install', join(dir, info.filename), '--offline', '--no-audit', '--no-fund', '--no-package-lock'],
    project,
  );
  assert.equal(install.status, 0, install.stderr);
  installWarnings = install.stderr
    .split('\n')
    .filter((line) => /^npm warn/i.test(line) && !/Unknown (user|env) config/.test(line));
});
after(() => rmSync(dir, { recursive: true, force: true }));

const USE = `
  const secret = 'whsec_' + Buffer.alloc(32, 7).toString('base64');
  const cart = { total: 500, currency: 'usd', items: [{ id: 'a', name: 'Tea', quantity: 1, unit_price: 500 }] };
  const signature = gc.signCart(cart, 'svc_sig_test_0123456789abcdef');
  if (!gc.verifyCartSignature(cart, signature, 'svc_sig_test_0123456789abcdef')) throw new Error('signature');
  const { body, headers } = gc.generateTestHeaders({ type: 'group.funded', data: { order_ref: 'ORD-1' } }, secret);
  const event = gc.verifyWebhook(body, headers, secret);
  const client = new gc.GroupCheckout('svc_sk_test_0123456789abcdef', { baseUrl: 'https://api.example/v1' });
  if (typeof client.sessions.create !== 'function') throw new Error('client');
  console.log(JSON.stringify({ order: event.data.order_ref, error: new gc.GroupCheckoutError({
    status: 400, code: 'invalid_cart', message: 'm', request_id: 'req_1' }) instanceof Error }));
`;

test('the tarball holds the build, the sources and the README, and no tests', () => {
  for (const file of [
    'dist/esm/index.js',
    'dist/esm/index.d.ts',
    'dist/cjs/index.js',
    'dist/cjs/index.d.ts',
    'dist/cjs/package.json',
    'README.md',
    'package.json',
  ]) {
    assert.ok(files.includes(file), `${file} is missing from the tarball`);
  }
  assert.deepEqual(
    files.filter((f) => f.startsWith('test/') || f.startsWith('scripts/')),
    [],
  );
});

test('installed without a warning; no install-time script points at a file the tarball lacks (#19)', () => {
  assert.deepEqual(installWarnings, []);
  const manifest = JSON.parse(
    readFileSync(join(project, 'node_modules/@group-checkout/node/package.json'), 'utf8'),
  ) as { scripts?: Record<string, string> };
  const lifecycle = ['preinstall', 'install', 'postinstall', 'prepare', 'prepack', 'postpack', 'prepublish'];
  assert.deepEqual(
    Object.keys(manifest.scripts ?? {}).filter((name) => lifecycle.includes(name)),
    [],
  );
});

test('import() from an ES module loads the ESM build', () => {
  const result = run(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `const gc = await import('@group-checkout/node');
       console.error(import.meta.resolve('@group-checkout/node'));
       ${USE}`,
    ],
    project,
  );
  assert.equal(result.status, 0, result.stderr);
  assert.deepEqual(JSON.parse(result.stdout), { order: 'ORD-1', error: true });
  assert.match(result.stderr, /node_modules\/@group-checkout\/node\/dist\/esm\/index\.js/);
});

test('require() from a .cjs file loads the CommonJS build', () => {
  writeFileSync(
    join(project, 'check.cjs'),
    `const gc = require('@group-checkout/node');
     console.error(require.resolve('@group-checkout/node'));
     ${USE}`,
  );
  const result = run(process.execPath, ['check.cjs'], project);
  assert.equal(result.status, 0, result.stderr);
  assert.deepEqual(JSON.parse(result.stdout), { order: 'ORD-1', error: true });
  assert.match(result.stderr, /node_modules\/@group-checkout\/node\/dist\/cjs\/index\.js/);
});

/**
 * The compiler over the three files below, run once: an ES module and a CommonJS file that use the package
 * as a merchant's code would (which must compile), and a file with two type errors (which must be found).
 * One program for the three, since each run of tsc spends most of its time reading @types/node.
 */
let compiled: ReturnType<typeof run> | undefined;
function typeCheck(): ReturnType<typeof run> {
  if (compiled) return compiled;
  const uses = `
    const cart: Cart = { total: 500, currency: 'usd', items: [{ name: 'Tea', quantity: 1, unit_price: 500 }] };
    const client = new GroupCheckout('svc_sk_test_0123456789abcdef', { baseUrl: 'https://api.example/v1', maxRetries: 3 });
    export async function checkout(): Promise<string> {
      const created: CreatedSession = await client.sessions.create({ cart, signature: signCart(cart, 'svc_sig_x') });
      const page = await client.sessions.list({ limit: 10 });
      const cursor: number | null = page.next_cursor;
      const event = verifyWebhook<WebhookEvent>('{}', {}, 'whsec_x');
      if (event.type === 'group.funded' && cursor === null) return event.data.order_ref ?? created.session_url;
      try {
        await client.events.redeliver('evt_1');
      } catch (error) {
        if (error instanceof GroupCheckoutError) return [error.status, error.code, error.request_id].join();
      }
      return (await client.webhooks.rotateSecret('we_1')).secret;
    }`;
  const names =
    'Cart, CreatedSession, GroupCheckout, GroupCheckoutError, signCart, verifyWebhook, WebhookEvent';
  const imports = `import { ${names.replace(/\b(Cart|CreatedSession|WebhookEvent)\b/g, 'type $1')} } from '@group-checkout/node';`;
  writeFileSync(join(project, 'use.ts'), `${imports}${uses}`);
  writeFileSync(join(project, 'use.cts'), `${imports}${uses}`);
  writeFileSync(
    join(project, 'wrong.ts'),
    `import { GroupCheckout } from '@group-checkout/node';
     const client = new GroupCheckout('svc_sk_test_0123456789abcdef', { baseUrl: 'https://api.example/v1' });
     export const total: string = (await client.sessions.get('gs_1')).total_cents;
     export const missing = client.sessions.retrieve('gs_1');`,
  );
  compiled = run(
    process.execPath,
    [
      TSC,
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--target',
      'es2022',
      '--strict',
      '--noEmit',
      '--typeRoots',
      TYPES,
      '--types',
      'node',
      'use.ts',
      'use.cts',
      'wrong.ts',
    ],
    project,
  );
  return compiled;
}

test('TypeScript compiles against the .d.ts, from an ES module and from CommonJS', () => {
  const result = typeCheck();
  const errors = `${result.stdout}${result.stderr}`.split('\n').filter((line) => /error TS\d+/.test(line));
  // The program did run (wrong.ts's errors are there), and every error it found is in wrong.ts.
  assert.ok(errors.length > 0, `tsc reported nothing:\n${result.stdout}${result.stderr}`);
  assert.deepEqual(
    errors.filter((line) => !line.startsWith('wrong.ts(')),
    [],
    `use.ts and use.cts must compile:\n${result.stdout}${result.stderr}`,
  );
});

test('a type error in code using the package is reported: the types are really read', () => {
  const result = typeCheck();
  assert.notEqual(result.status, 0);
  assert.match(
    result.stdout,
    /wrong\.ts\(3,\d+\): error TS2322: Type 'number' is not assignable to type 'string'/,
  );
  assert.match(result.stdout, /wrong\.ts\(4,\d+\): error TS2339: Property 'retrieve' does not exist/);
});
