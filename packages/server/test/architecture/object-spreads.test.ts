// One shape of object literal is kept out of the service's sources (docs/decisions.md#no-new-keys-after-a-leading-spread):
// a literal that begins with a spread and then adds a key the spread object does not have, such as
// `{ ...fields, createdAt: now }`. On Node 20 (V8 11.3) such an object costs about a microsecond a key it
// adds, against a few nanoseconds written any other way, and a pay built a few dozen of them. Giving an
// existing key a new value (`{ ...session, status }`) stays cheap and is allowed. The check reads types,
// so it uses the TypeScript compiler on the sources, as `npm run typecheck` does.
import assert from 'node:assert/strict';
import { readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');
/** The code that runs in the server: its own sources and the Node package's, which it imports. */
const DIRS = ['packages/server/src', 'packages/node/src'].map((dir) => join(ROOT, dir));
/** Browser code, compiled by its own projects: not run by Node. */
const BROWSER = join(ROOT, 'packages/server/src/pages/client');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (path === BROWSER) return [];
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : [];
  });
}

/** A key the object of `type` always has (not an optional one, which may be missing when it runs). */
function alwaysHas(checker: ts.TypeChecker, type: ts.Type, key: string): boolean {
  const property = checker.getPropertyOfType(type, key);
  return property !== undefined && (property.flags & ts.SymbolFlags.Optional) === 0;
}

/** Whether `node` runs when a function is called: a module's top level runs once, when it loads. */
function inFunction(node: ts.Node): boolean {
  for (let at = node.parent; at; at = at.parent) if (ts.isFunctionLike(at)) return true;
  return false;
}

/** `file:line key` for each key a leading-spread literal of `file` adds to its spread object. */
function addedKeys(checker: ts.TypeChecker, file: ts.SourceFile): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    const [first, ...rest] = ts.isObjectLiteralExpression(node) ? node.properties : [];
    if (first && ts.isSpreadAssignment(first) && inFunction(node)) {
      const spread = checker.getTypeAtLocation(first.expression);
      const where = `${relative(ROOT, file.fileName)}:${file.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
      for (const member of rest) {
        const keys = ts.isSpreadAssignment(member)
          ? checker.getPropertiesOfType(checker.getTypeAtLocation(member.expression)).map((p) => p.name)
          : member.name && !ts.isComputedPropertyName(member.name)
            ? [member.name.text]
            : ['[computed]'];
        for (const key of keys) if (!alwaysHas(checker, spread, key)) found.push(`${where} ${key}`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

const files = DIRS.flatMap(sources);
const program = ts.createProgram(files, {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  strict: true,
  allowImportingTsExtensions: true,
  noEmit: true,
  skipLibCheck: true,
  resolveJsonModule: true,
  types: ['node'],
  customConditions: ['@group-checkout/source'],
});
const checker = program.getTypeChecker();

test('no object literal of the server adds keys after a leading spread', () => {
  const found = files.flatMap((path) => {
    const file = program.getSourceFile(path);
    assert.ok(file, `${path} is in the program`);
    return addedKeys(checker, file);
  });
  assert.deepEqual(found, []);
});

test('the check finds a key added, optional, or from a later spread, and allows a replaced one, keys before the spread, and the top level', () => {
  const text = [
    'const base: { a: number; b?: number } = { a: 1 };',
    'export const atLoad = { ...base, c: 2 };',
    'export function later() {',
    '  const added = { ...base, c: 2 };',
    '  const optional = { ...base, b: 2 };',
    '  const replaced = { ...base, a: 2 };',
    '  const before = { c: 2, ...base };',
    '  const spreadAfter = { ...base, ...{ d: 4 } };',
    '  return [added, optional, replaced, before, spreadAfter];',
    '}',
  ].join('\n');
  const host = ts.createCompilerHost({ strict: true, noEmit: true });
  const read = host.getSourceFile;
  host.getSourceFile = (name, version) =>
    name === 'probe.ts' ? ts.createSourceFile(name, text, version, true) : read(name, version);
  const probe = ts.createProgram(['probe.ts'], { strict: true, noEmit: true, types: [] }, host);
  const file = probe.getSourceFile('probe.ts');
  assert.ok(file);
  const lines = addedKeys(probe.getTypeChecker(), file).map((line) =>
    line.replace(/^.*probe\.ts/, 'probe.ts'),
  );
  assert.deepEqual(lines, ['probe.ts:4 c', 'probe.ts:5 b', 'probe.ts:8 d']);
});
