// The supported Node versions are settled (docs/decisions.md#supported-node-versions): the repository —
// the service, the SDK's build, the shop and the tools — runs on Node ^20.19 or >=22.13, what the machine
// and CI run and what the toolchain asks; @group-checkout/node, which merchants install, needs only 20.10.
// Every locked package agrees, so `npm ci` prints no EBADENGINE warning (#19: cookie@2 wanted Node 22;
// light-my-request is pinned to the release that uses cookie@1).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

const ROOT = new URL('../../../', import.meta.url);
const read = (path: string) => JSON.parse(readFileSync(new URL(path, ROOT), 'utf8'));

type Version = [number, number, number];
const parse = (text: string): Version => {
  const [major = 0, minor = 0, patch = 0] = text
    .replace(/^v/, '')
    .split('.')
    .map((part) => (/^\d+$/.test(part) ? Number(part) : 0));
  return [major, minor, patch];
};
const compare = (a: Version, b: Version) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

/** Whether `version` is in an npm range of the forms packages use for engines (>=, >, <, <=, ^, ~, x, ||). */
function satisfies(version: Version, range: string): boolean {
  return range.split('||').some((alternative) =>
    alternative
      .trim()
      .replace(/([<>=^~]+)\s+/g, '$1')
      .split(/\s+/)
      .filter(Boolean)
      .every((comparator) => {
        const [, operator = '', rest = ''] = /^([<>=^~]*)(.*)$/.exec(comparator) ?? [];
        if (rest === '*' || rest === 'x' || rest === '') return true;
        const parts = rest.split('.');
        const wanted = parse(rest);
        const c = compare(version, wanted);
        if (operator === '>=') return c >= 0;
        if (operator === '>') return c > 0;
        if (operator === '<=') return c <= 0;
        if (operator === '<') return c < 0;
        if (operator === '^') return c >= 0 && version[0] === wanted[0];
        if (operator === '~') return c >= 0 && version[0] === wanted[0] && version[1] === wanted[1];
        // A bare version: 20, 20.x, 20.10.0.
        return parts.every((part, i) => part === 'x' || part === '*' || Number(part) === version[i]);
      }),
  );
}

const SUPPORTED = '^20.19.0 || >=22.13.0';
/** The oldest release of each supported line, and the Node running this test. */
const OLDEST = ['20.19.0', '22.13.0'];

test('every workspace says the supported Node versions, and this Node is one of them', () => {
  assert.equal(read('package.json').engines.node, SUPPORTED);
  for (const workspace of read('package.json').workspaces as string[])
    assert.equal(
      read(`${workspace}/package.json`).engines?.node,
      workspace === 'packages/node' ? '>=20.10' : SUPPORTED,
      workspace,
    );
  assert.ok(satisfies(parse(process.version), SUPPORTED), process.version);
});

test('no locked package wants a Node the project supports not to be: npm ci warns of none', () => {
  const lock = read('package-lock.json') as { packages: Record<string, { engines?: { node?: string } }> };
  const versions = [...OLDEST, process.version].map(parse);
  const refused = Object.entries(lock.packages)
    .filter(([path, p]) => typeof p.engines?.node === 'string' && path !== 'packages/node')
    .filter(([, p]) => versions.some((v) => !satisfies(v, p.engines?.node as string)))
    .map(([path, p]) => `${path} wants node ${p.engines?.node}`);
  assert.deepEqual(refused, []);
});
