// The grace period of a rolled secret (docs/decisions.md#rotation-grace-period): the previous one is in
// force up to, not including, its end.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ROTATION_GRACE_MS, secretsInForce } from '../../src/domain/rotation.ts';

test('the grace period is 24 hours', () => {
  assert.equal(ROTATION_GRACE_MS, 86_400_000);
});

test('the previous secret is in force until its end, the current one always', () => {
  const previous = { secret: 'old', expiresAt: 1_000 };
  assert.deepEqual(secretsInForce('new', previous, 0), ['new', 'old']);
  assert.deepEqual(secretsInForce('new', previous, 999), ['new', 'old']);
  assert.deepEqual(secretsInForce('new', previous, 1_000), ['new']);
  assert.deepEqual(secretsInForce('new', null, 0), ['new']);
});
