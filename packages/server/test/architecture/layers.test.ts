// The layers of docs/architecture.md, checked on the sources: every import of a folder must point at a
// folder that table allows, so an upward import fails here rather than in review.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');

/** Folder → the folders (or top-level files) it may import, itself included. Type-only imports of store are allowed everywhere below api. */
const ALLOWED: Record<string, string[]> = {
  api: [
    'api',
    'flows',
    'wire',
    'domain',
    'errors.ts',
    'ids.ts',
    'clock.ts',
    'config.ts',
    'deps.ts',
    'app.ts',
    'events',
  ],
  pages: ['pages', 'flows', 'wire', 'domain', 'errors.ts', 'clock.ts', 'config.ts', 'deps.ts', 'app.ts'],
  jobs: ['jobs', 'flows', 'deps.ts'],
  flows: [
    'flows',
    'domain',
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
  wire: ['wire', 'domain', 'events', 'clock.ts'],
  store: ['store', 'domain', 'ids.ts'],
  domain: ['domain'],
};

/** Layers that may name the store's types (Session, Member) without importing its queries. */
const STORE_TYPES_ALLOWED = new Set(['api', 'wire', 'pages']);

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

const topOf = (path: string) => relative(SRC, path).split('/')[0] as string;

test('every import points down the layers of docs/architecture.md', () => {
  const violations: string[] = [];
  for (const file of sources(SRC)) {
    const layer = topOf(file);
    const allowed = ALLOWED[layer];
    if (!allowed) continue;
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/^import (type )?[^;]*? from '(\.[^']+)';/gms)) {
      const typeOnly = match[1] !== undefined;
      const target = topOf(resolve(dirname(file), match[2] as string));
      if (allowed.includes(target)) continue;
      // Types of stored objects (Session, Member) may be named above the store; its queries may not.
      if (typeOnly && target === 'store' && STORE_TYPES_ALLOWED.has(layer)) continue;
      violations.push(`${relative(SRC, file)} imports ${match[2]}`);
    }
  }
  assert.deepEqual(violations, []);
});

test('nothing below api/ imports from it (the check above is not vacuous)', () => {
  const files = sources(SRC).filter((f) => ['flows', 'store', 'domain', 'events', 'jobs'].includes(topOf(f)));
  assert.ok(files.length > 20, `found only ${files.length} sources below api/`);
  for (const file of files)
    assert.doesNotMatch(readFileSync(file, 'utf8'), /from '\.\.\/(\.\.\/)?api\//, file);
});
