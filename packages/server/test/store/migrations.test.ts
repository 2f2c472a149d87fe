// A landed migration never changes: a database that already ran it would never run the new text, so
// the schema would depend on when a database was created. The sha256 of every landed migration file is
// kept in fixtures/landed-migrations.json; this suite recomputes them. A change to a landed file means
// adding a new migration instead; a new migration file means adding its checksum to that list.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const MIGRATIONS_DIR = fileURLToPath(new URL('../../src/store/migrations/', import.meta.url));
const CHECKSUMS_FILE = 'packages/server/test/store/fixtures/landed-migrations.json';
const landed: Record<string, string> = JSON.parse(
  readFileSync(new URL('./fixtures/landed-migrations.json', import.meta.url), 'utf8'),
);

/** Every migration file (index.ts lists them and is not one). */
const migrationFiles = readdirSync(MIGRATIONS_DIR)
  .filter((name) => name.endsWith('.ts') && name !== 'index.ts')
  .sort();

/** sha256 of the file's text, line endings normalized so a CRLF checkout does not count as a change. */
const checksum = (name: string): string =>
  createHash('sha256')
    .update(readFileSync(MIGRATIONS_DIR + name, 'utf8').replace(/\r\n/g, '\n'), 'utf8')
    .digest('hex');

test('the checksum list and the migrations folder name the same files', () => {
  assert.ok(migrationFiles.length > 0, `no migration found in ${MIGRATIONS_DIR}`);
  for (const name of migrationFiles) {
    assert.ok(
      name in landed,
      `${name} has no checksum in ${CHECKSUMS_FILE}: a new migration? Add "${name}": "${checksum(name)}" ` +
        'to that file when it lands.',
    );
  }
  for (const name of Object.keys(landed)) {
    assert.ok(
      migrationFiles.includes(name),
      `${name} is listed in ${CHECKSUMS_FILE} but is gone from src/store/migrations: ` +
        'landed migrations are never removed; add a new migration that undoes it instead.',
    );
  }
});

for (const name of migrationFiles.filter((file) => file in landed)) {
  test(`landed migration ${name} is unchanged`, () => {
    const actual = checksum(name);
    assert.equal(
      actual,
      landed[name],
      `${name} changed after landing (sha256 ${actual}, landed as ${landed[name]}): ` +
        'landed migrations never change; add a new migration instead.',
    );
  });
}
