// The layers of docs/architecture.md, checked on the sources: every import of a folder must point at a
// folder that table allows, so an upward import fails here rather than in review; and the rules listed
// under that table: no import cycles, app.ts imported by main.ts alone, the CLI's table, objects (not rows)
// out of store/, and one webhook signer.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');

/** Folder → the folders (or top-level files) it may import, itself included. Type-only imports of store are allowed everywhere below api. */
const ALLOWED: Record<string, string[]> = {
  cli: ['cli', 'flows', 'store', 'processor', 'domain', 'config.ts', 'clock.ts', 'ids.ts', 'main.ts'],
  http: ['http', 'api', 'app-type.ts', 'deps.ts', 'config.ts', 'errors.ts', 'ids.ts'],
  api: [
    'api',
    'flows',
    'wire',
    'domain',
    'i18n',
    'errors.ts',
    'ids.ts',
    'clock.ts',
    'config.ts',
    'deps.ts',
    'app-type.ts',
  ],
  pages: [
    'pages',
    'flows',
    'wire',
    'domain',
    'i18n',
    'errors.ts',
    'clock.ts',
    'config.ts',
    'deps.ts',
    'app-type.ts',
  ],
  // The dashboard renders with the hosted pages' html`` and serves its stylesheet as they serve theirs.
  dashboard: [
    'dashboard',
    'pages',
    'flows',
    'wire',
    'domain',
    'errors.ts',
    'clock.ts',
    'config.ts',
    'deps.ts',
    'app-type.ts',
  ],
  jobs: ['jobs', 'flows', 'deps.ts'],
  flows: [
    'flows',
    'domain',
    'i18n',
    'store',
    'events',
    'wire',
    'errors.ts',
    'ids.ts',
    'clock.ts',
    'config.ts',
    'deps.ts',
    'processor',
  ],
  processor: ['processor', 'domain', 'store', 'ids.ts', 'clock.ts', 'config.ts'],
  events: ['events', 'wire', 'store', 'domain', 'ids.ts', 'clock.ts'],
  wire: ['wire', 'domain', 'clock.ts'],
  store: ['store', 'domain', 'i18n', 'ids.ts'],
  domain: ['domain'],
  i18n: ['i18n'],
};

/** Layers that may name the store's types (Session, Member) without importing its queries. */
const STORE_TYPES_ALLOWED = new Set(['api', 'wire', 'pages', 'dashboard']);

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

const topOf = (path: string) => relative(SRC, path).split('/')[0] as string;

interface Import {
  /** As written: '../store/db.ts'. */
  specifier: string;
  /** The file it names. */
  path: string;
  /** `import type …` / `export type … from`: gone once compiled, but still an arrow between files. */
  typeOnly: boolean;
}

/** Every import of another source file: static, re-exports and dynamic import(), type-only ones too. */
function importsOf(file: string): Import[] {
  const text = readFileSync(file, 'utf8');
  const found: { specifier: string; typeOnly: boolean }[] = [];
  for (const match of text.matchAll(/^(?:import|export) (type )?[^;]*? from '(\.[^']+)';/gms))
    found.push({ specifier: match[2] as string, typeOnly: match[1] !== undefined });
  for (const match of text.matchAll(/^import '(\.[^']+)';/gm))
    found.push({ specifier: match[1] as string, typeOnly: false });
  for (const match of text.matchAll(/\bimport\('(\.[^']+)'\)/g))
    found.push({ specifier: match[1] as string, typeOnly: false });
  return found.map((i) => ({ ...i, path: resolve(dirname(file), i.specifier) }));
}

const FILES = sources(SRC);

test('every import points down the layers of docs/architecture.md', () => {
  const violations: string[] = [];
  for (const file of FILES) {
    const layer = topOf(file);
    const allowed = ALLOWED[layer];
    if (!allowed) continue;
    for (const { specifier, path, typeOnly } of importsOf(file)) {
      const target = topOf(path);
      if (allowed.includes(target)) continue;
      // Types of stored objects (Session, Member) may be named above the store; its queries may not.
      if (typeOnly && target === 'store' && STORE_TYPES_ALLOWED.has(layer)) continue;
      violations.push(`${relative(SRC, file)} imports ${specifier}`);
    }
  }
  assert.deepEqual(violations, []);
});

/** Each loop of imports among `files`, as the files around it (depth-first: a loop is an edge back to a file still open). */
function cycles(edges: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    path.push(file);
    for (const next of edges.get(file) ?? []) {
      if (state.get(next) === 'open') found.push([...path.slice(path.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(file, 'done');
  };
  for (const file of edges.keys()) if (!state.has(file)) visit(file);
  return found;
}

test('the loop finder finds a loop, and none where there is none', () => {
  const loop = new Map([
    ['a', ['b']],
    ['b', ['c']],
    ['c', ['a', 'd']],
    ['d', []],
  ]);
  assert.deepEqual(cycles(loop), [['a', 'b', 'c', 'a']]);
  assert.deepEqual(cycles(new Map([...loop, ['c', ['d']]])), []);
});

test('no two source files import each other, however indirectly (type-only imports included)', () => {
  const known = new Set(FILES);
  const edges = new Map(
    FILES.map((file) => [file, importsOf(file).flatMap((i) => (known.has(i.path) ? [i.path] : []))]),
  );
  assert.ok([...edges.values()].flat().length > 300, 'the import graph was read');
  assert.deepEqual(
    cycles(edges).map((loop) => loop.map((file) => relative(SRC, file)).join(' -> ')),
    [],
  );
});

test('only the entry points import app.ts: api/ and pages/ name the App type from app-type.ts', () => {
  const importers = FILES.filter((file) => importsOf(file).some((i) => i.path === join(SRC, 'app.ts')));
  assert.deepEqual(importers.map((file) => relative(SRC, file)).sort(), ['main.ts']);
  assert.deepEqual(
    importsOf(join(SRC, 'app-type.ts')).map((i) => i.specifier),
    [],
    'app-type.ts stands below everything it is imported by',
  );
});

test('nothing but the bin entry runs the CLI: no source file outside cli/ imports it', () => {
  const importers = FILES.filter(
    (file) => topOf(file) !== 'cli' && importsOf(file).some((i) => topOf(i.path) === 'cli'),
  );
  assert.deepEqual(importers, []);
});

test('every command file of cli/ is a line of the table in cli/index.ts', () => {
  const commands = FILES.filter(
    (file) => topOf(file) === 'cli' && /^export const \w+: Command = \{/m.test(readFileSync(file, 'utf8')),
  );
  assert.ok(commands.length >= 8, `found only ${commands.length} commands`);
  const table = importsOf(join(SRC, 'cli/index.ts')).map((i) => i.path);
  assert.deepEqual(
    commands.filter((file) => !table.includes(file)).map((file) => relative(SRC, file)),
    [],
  );
});

/** The exported declarations of a file: each `export …` statement up to the end of its body. */
const exportedDeclarations = (text: string) =>
  [...text.matchAll(/^export (?:async )?(?:interface|type|function|const) [\s\S]*?(?:^\}|;$)/gm)].map(
    (m) => m[0],
  );

test('store/ hands objects up, not rows: no exported store type has snake_case fields or is a Kysely row', () => {
  const violations: string[] = [];
  for (const file of FILES.filter((f) => topOf(f) === 'store' && !f.includes('/migrations/'))) {
    if (file.endsWith('/schema.ts')) continue;
    for (const declaration of exportedDeclarations(readFileSync(file, 'utf8'))) {
      const name = /^export (?:async )?(?:interface|type|function|const) (\w+)/.exec(declaration)?.[1];
      const head = declaration.startsWith('export interface') ? declaration : declaration.split('{')[0];
      const row = /\b(?:Selectable|Insertable|Updateable)</.test(head as string);
      const snake =
        /^export (?:interface|type)/.test(declaration) && /^ {2}[a-z]+_[a-z0-9_]*\??:/m.test(declaration);
      if (row || snake) violations.push(`${relative(SRC, file)}: ${name}`);
    }
  }
  assert.deepEqual(violations, []);
});

test("outside store/, store/schema.ts is read for Database and Executor only, never a table's row type", () => {
  const violations: string[] = [];
  for (const file of FILES.filter((f) => topOf(f) !== 'store')) {
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/^import (?:type )?\{([^}]*)\} from '[./]*store\/schema\.ts';/gm)) {
      const names = (match[1] as string).split(',').map((n) => n.replace(/^\s*type /, '').trim());
      for (const name of names.filter((n) => n && n !== 'Database' && n !== 'Executor'))
        violations.push(`${relative(SRC, file)} imports ${name}`);
    }
  }
  assert.deepEqual(violations, []);
});

test('one webhook signer: the server signs through @group-checkout/node and computes no HMAC of a webhook', () => {
  const signers = FILES.filter((file) =>
    /import \{[^}]*\b(?:signWebhook|generateTestHeaders)\b[^}]*\} from '@group-checkout\/node';/.test(
      readFileSync(file, 'utf8'),
    ),
  );
  assert.ok(signers.includes(join(SRC, 'events/send.ts')), 'events/send.ts signs with signWebhook');
  const hmacOfWebhooks = FILES.filter((file) => {
    const text = readFileSync(file, 'utf8');
    const hmac = /\bcreateHmac\b/.test(text);
    return (
      hmac && (['events', 'cli'].includes(topOf(file)) || /webhook-(?:signature|id|timestamp)/.test(text))
    );
  });
  assert.deepEqual(hmacOfWebhooks, []);
});

test('nothing below api/ imports from it (the check above is not vacuous)', () => {
  const files = sources(SRC).filter((f) => ['flows', 'store', 'domain', 'events', 'jobs'].includes(topOf(f)));
  assert.ok(files.length > 20, `found only ${files.length} sources below api/`);
  for (const file of files)
    assert.doesNotMatch(readFileSync(file, 'utf8'), /from '\.\.\/(\.\.\/)?api\//, file);
});

/** Source files (relative to src/) that call `name(`, outside the file that defines it in store/. */
const callersOf = (name: string) =>
  sources(SRC)
    .filter((f) => topOf(f) !== 'store' && new RegExp(`\\b${name}\\(`).test(readFileSync(f, 'utf8')))
    .map((f) => relative(SRC, f));

test('an outcome is recorded in one file: only flows/record.ts settles attempts and books the ledger', () => {
  // The settling loop, paying and recovery hand their outcomes to recordOutcome; none writes a record itself.
  assert.deepEqual(callersOf('settleAttempt'), ['flows/record.ts']);
  assert.deepEqual(callersOf('insertLedgerLines'), ['flows/record.ts']);
  assert.deepEqual(callersOf('fundPendingSession'), ['flows/record.ts']);
  assert.ok(
    callersOf('recordOutcome').includes('flows/settle.ts'),
    'the settling loop records through record.ts',
  );
});

test("reconcile's rules are pure and the fees have one mapping", () => {
  // flows/reconcile.ts reads rows and the processor; what they should say is domain/reconciliation.ts.
  const reconcile = readFileSync(join(SRC, 'flows/reconcile.ts'), 'utf8');
  for (const rule of ['checkLedger', 'checkStatuses', 'expectedStates'])
    assert.doesNotMatch(
      reconcile,
      new RegExp(`function ${rule}\\b`),
      `${rule} belongs in domain/reconciliation.ts`,
    );
  // From a session and its merchant to the fees: domain/fees.ts sessionFees, and nowhere else.
  assert.deepEqual(callersOf('merchantFees'), ['domain/fees.ts']);
});
