import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type AttemptFacts,
  type MemberFacts,
  nextSettleAt,
  owedWork,
  refundDue,
  refundsOf,
  withDisputes,
  workDueAt,
} from '../../src/domain/settling.ts';

const NOW = 1_000_000;
const TIMES = { recoveryAfterMs: 90_000, authTimeoutMs: 900_000 };
const member = (id: string, status: MemberFacts['status'], over: Partial<MemberFacts> = {}): MemberFacts => ({
  id,
  amountCents: 5000,
  status,
  payingAttemptId: null,
  ...over,
});
let n = 0;
const attempt = (over: Partial<AttemptFacts>): AttemptFacts => ({
  id: `att_${++n}`,
  kind: 'charge',
  memberId: 'a',
  targetId: null,
  amountCents: 5050,
  feeCents: 50,
  state: 'succeeded',
  processorId: `ch_${n}`,
  clientSecret: null,
  createdAt: NOW - 1000,
  updatedAt: NOW - 1000,
  ...over,
});
const session = (
  status: 'pending' | 'funded' | 'cancelled' | 'expired',
  capture: 'immediate' | 'on_funded' = 'immediate',
) => ({
  status,
  capture,
  expiresAt: NOW + 3_600_000,
  settledAt: null,
});

test('a cancelled session owes a refund for each paid share and a release for each hold', () => {
  const paid = attempt({ memberId: 'a' });
  const hold = attempt({ memberId: 'b', kind: 'authorize' });
  const work = owedWork(
    session('cancelled'),
    [member('a', 'paid'), member('b', 'authorized'), member('c', 'pending')],
    [paid, hold],
    NOW,
  );
  assert.deepEqual(
    work.map((w) => [w.kind, w.kind === 'transfer' ? null : w.memberId]),
    [
      ['refund', 'a'],
      ['release', 'b'],
    ],
  );
});

test('an on_funded group owes captures only once every share with money in it is authorized', () => {
  const holds = [
    attempt({ memberId: 'a', kind: 'authorize' }),
    attempt({ memberId: 'b', kind: 'authorize' }),
  ];
  const s = session('pending', 'on_funded');
  assert.deepEqual(owedWork(s, [member('a', 'authorized'), member('b', 'pending')], holds, NOW), []);
  assert.equal(
    owedWork(
      s,
      [member('a', 'authorized'), member('b', 'authorized'), member('z', 'pending', { amountCents: 0 })],
      holds,
      NOW,
    ).length,
    2,
  );
  // Not while a payment is in flight, nor past expiry.
  assert.deepEqual(
    owedWork(
      s,
      [member('a', 'authorized'), member('b', 'authorized', { payingAttemptId: 'att_x' })],
      holds,
      NOW,
    ),
    [],
  );
  assert.deepEqual(
    owedWork({ ...s, expiresAt: NOW }, [member('a', 'authorized'), member('b', 'authorized')], holds, NOW),
    [],
  );
});

test('once captures have begun, every hold is captured though a member is pending again', () => {
  const s = session('pending', 'on_funded');
  const holdA = attempt({ memberId: 'a', kind: 'authorize' });
  const holdB = attempt({ memberId: 'b', kind: 'authorize' });
  // a's capture was declined: a is pending again; b's hold is still owed its capture.
  const declined = attempt({
    memberId: 'a',
    kind: 'capture',
    state: 'declined',
    targetId: holdA.processorId,
  });
  const work = owedWork(
    s,
    [member('a', 'pending'), member('b', 'authorized')],
    [holdA, holdB, declined],
    NOW,
  );
  assert.deepEqual(
    work.map((w) => [w.kind, w.kind === 'transfer' ? null : w.memberId]),
    [['capture', 'b']],
  );
  // Before any capture, the same group owes none.
  assert.deepEqual(owedWork(s, [member('a', 'pending'), member('b', 'authorized')], [holdA, holdB], NOW), []);
});

test('a funded session owes one transfer until one succeeded', () => {
  assert.deepEqual(owedWork(session('funded'), [], [], NOW), [{ kind: 'transfer' }]);
  assert.deepEqual(owedWork(session('funded'), [], [attempt({ kind: 'transfer', memberId: null })], NOW), []);
});

test('a failed try waits: 5 s after the first failure, 30 s after the second; none while one is in flight', () => {
  const paid = attempt({ memberId: 'a' });
  const work = { kind: 'refund' as const, memberId: 'a', payment: paid };
  assert.equal(workDueAt(work, [paid], NOW), NOW);
  const failed1 = attempt({ kind: 'refund', targetId: paid.processorId, state: 'failed', updatedAt: NOW });
  assert.equal(workDueAt(work, [paid, failed1], NOW), NOW + 5_000);
  const failed2 = attempt({
    kind: 'refund',
    targetId: paid.processorId,
    state: 'failed',
    updatedAt: NOW + 5_000,
  });
  assert.equal(workDueAt(work, [paid, failed1, failed2], NOW), NOW + 35_000);
  const started = attempt({ kind: 'refund', targetId: paid.processorId, state: 'started' });
  assert.equal(workDueAt(work, [paid, started], NOW), Number.POSITIVE_INFINITY);
  // Another call for the same member still out also makes it wait.
  const capture = attempt({ kind: 'capture', targetId: paid.processorId, state: 'started' });
  assert.equal(workDueAt(work, [paid, capture], NOW), Number.POSITIVE_INFINITY);
});

test('nextSettleAt: the recovery of a call in flight, due work, the closing of a closed session, or nothing', () => {
  const pending = session('pending');
  assert.equal(nextSettleAt(pending, [member('a', 'pending')], [], NOW, TIMES), null);
  const inFlight = attempt({ state: 'started', createdAt: NOW - 10_000 });
  assert.equal(
    nextSettleAt(pending, [member('a', 'pending', { payingAttemptId: inFlight.id })], [inFlight], NOW, TIMES),
    NOW + 80_000,
  );
  assert.equal(
    nextSettleAt(session('cancelled'), [member('a', 'pending')], [], NOW, TIMES),
    NOW,
    'the closing event is owed',
  );
  assert.equal(
    nextSettleAt({ ...session('cancelled'), settledAt: NOW }, [member('a', 'pending')], [], NOW, TIMES),
    null,
  );
});

test('refundsOf: pending until tried, failed after a failed try, succeeded with the refund id', () => {
  const paid = attempt({ memberId: 'a' });
  const s = session('cancelled');
  assert.deepEqual(refundsOf(s, [member('a', 'paid')], [paid]), [
    { id: null, memberId: 'a', amountCents: 5050, status: 'pending', failureReason: null },
  ]);
  const failed = attempt({ kind: 'refund', targetId: paid.processorId, state: 'failed' });
  assert.equal(refundsOf(s, [member('a', 'paid')], [paid, failed])[0]?.status, 'failed');
  const done = attempt({ kind: 'refund', targetId: paid.processorId, processorId: 're_1' });
  assert.deepEqual(refundsOf(s, [member('a', 'refunded')], [paid, failed, done]), [
    { id: 're_1', memberId: 'a', amountCents: 5050, status: 'succeeded', failureReason: null },
  ]);
  assert.deepEqual(
    refundsOf(session('funded'), [member('a', 'paid')], [paid]),
    [],
    'only a closed session has refunds',
  );
});

test('a refund returns what the payment took, less what lost disputes returned; the fee first', () => {
  const payment = { amountCents: 5050, feeCents: 50 };
  assert.deepEqual(refundDue(payment), { amountCents: 5050, feeCents: 50 });
  assert.deepEqual(refundDue({ ...payment, lostCents: 0 }), { amountCents: 5050, feeCents: 50 });
  assert.deepEqual(refundDue({ ...payment, lostCents: 1000 }), { amountCents: 4050, feeCents: 50 });
  // Disputed for nearly all of it: what is left is fee before share.
  assert.deepEqual(refundDue({ ...payment, lostCents: 5020 }), { amountCents: 30, feeCents: 30 });
  assert.deepEqual(refundDue({ ...payment, lostCents: 9999 }), { amountCents: 0, feeCents: 0 });
});

test('the disputes of a payment: the latest decides whether it waits; every lost one counts against its refund', () => {
  const charge: AttemptFacts = {
    id: 'att_1',
    kind: 'charge',
    memberId: 'mem_1',
    targetId: null,
    amountCents: 5050,
    feeCents: 50,
    state: 'succeeded',
    processorId: 'ch_1',
    clientSecret: null,
    createdAt: NOW,
    updatedAt: NOW,
  };
  const d = (status: 'needs_response' | 'won' | 'lost', amountCents: number) => ({
    attemptId: 'att_1',
    status,
    amountCents,
  });
  const [twoLost] = withDisputes([charge], [d('lost', 1000), d('lost', 2000)]);
  assert.deepEqual(refundDue(twoLost as AttemptFacts), { amountCents: 2050, feeCents: 50 });
  const [lostThenWon] = withDisputes([charge], [d('lost', 1000), d('won', 500)]);
  assert.deepEqual(refundDue(lostThenWon as AttemptFacts), { amountCents: 4050, feeCents: 50 });
  const closed = {
    status: 'cancelled' as const,
    capture: 'immediate' as const,
    expiresAt: NOW,
    settledAt: null,
  };
  const owed = (attempts: AttemptFacts[]) =>
    owedWork(closed, [member('mem_1', 'paid')], attempts, NOW).map((w) => w.kind);
  assert.deepEqual(owed(withDisputes([charge], [d('lost', 1000), d('needs_response', 500)])), [], 'one open');
  assert.deepEqual(owed(withDisputes([charge], [d('lost', 1000), d('lost', 4050)])), [], 'all of it lost');
  assert.deepEqual(owed(withDisputes([charge], [d('lost', 1000)])), ['refund']);
});
