import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  assertTransition,
  canMemberTransition,
  canTransition,
  InvalidTransitionError,
  MEMBER_STATUSES,
  SESSION_STATUSES,
} from '../../src/domain/session-state.ts';

describe('session transitions', () => {
  const allowed = new Set(['pending>funded', 'pending>cancelled', 'pending>expired']);

  test('only pending → funded, cancelled or expired', () => {
    for (const from of SESSION_STATUSES) {
      for (const to of SESSION_STATUSES) {
        assert.equal(canTransition(from, to), allowed.has(`${from}>${to}`), `${from} → ${to}`);
      }
    }
  });

  test('assertTransition throws a typed error for anything else', () => {
    assertTransition('pending', 'funded');
    assert.throws(
      () => assertTransition('cancelled', 'funded'),
      (error: unknown) =>
        error instanceof InvalidTransitionError &&
        error.from === 'cancelled' &&
        error.to === 'funded' &&
        /a cancelled session cannot become funded/.test(error.message),
    );
    assert.throws(() => assertTransition('pending', 'pending'), InvalidTransitionError);
  });
});

describe('member transitions', () => {
  test('pending → paid → refunded (→ paid when the refund fails); pending → authorized → paid, released, or back to pending; pending → authenticating → paid, authorized or back to pending; nothing else', () => {
    const allowed = new Set([
      'pending>paid',
      'paid>refunded',
      'refunded>paid',
      'pending>authorized',
      'authorized>paid',
      'authorized>released',
      'authorized>pending',
      'pending>authenticating',
      'authenticating>paid',
      'authenticating>authorized',
      'authenticating>pending',
    ]);
    for (const from of MEMBER_STATUSES) {
      for (const to of MEMBER_STATUSES) {
        assert.equal(canMemberTransition(from, to), allowed.has(`${from}>${to}`), `${from} → ${to}`);
      }
    }
  });
});
