// Recovery at its edges (docs/decisions.md#payments): a retry taking over the idempotency claim of a
// payment still with the processor must not undo the payment's record; a recovery that cannot learn an
// outcome asks again a minute later, not every round; an outcome arriving after the recovery recorded
// another one is never answered as a success, and reconcile names the money moved without a record; a
// charge the processor has made whose record is still on its way is a call in flight, not a mismatch.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { reconcile } from '../../src/flows/reconcile.ts';
import { settleDueSessions } from '../../src/jobs/settle.ts';
import type { Outcome, PaymentProcessor } from '../../src/processor/types.ts';
import { startTestApp } from '../helpers/app.ts';
import { manualClock } from '../helpers/clock.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { assertError } from '../helpers/errors.ts';
import { equalGroup, merchantSession, pay } from '../helpers/payments.ts';
import { SESSION_ENV } from '../helpers/sessions.ts';

const dialect = DIALECTS[0] as (typeof DIALECTS)[number];
const ENV = { ...SESSION_ENV, PAYMENT_RECOVERY_AFTER_MS: '90000' };

/** A sandbox whose charges wait until the test lets them go. */
function heldCharges() {
  const waiting: (() => void)[] = [];
  let started: () => void = () => {};
  const wrap = (processor: PaymentProcessor): PaymentProcessor => ({
    ...processor,
    async charge(request) {
      started();
      await new Promise<void>((resolve) => waiting.push(resolve));
      return processor.charge(request);
    },
  });
  return {
    wrap,
    started: () => new Promise<void>((resolve) => (started = resolve)),
    release: () => {
      for (const go of waiting.splice(0)) go();
    },
  };
}

test('a retry taking over the claim of a payment still with the processor does not undo its record', async () => {
  const clock = manualClock(Date.now());
  const held = heldCharges();
  const t = await startTestApp(dialect, { env: ENV, clock, wrapProcessor: held.wrap });
  try {
    const g = await equalGroup(t, ['Ada', 'Ben']);
    const headers = { 'idempotency-key': 'slow-pay-1' };
    const charging = held.started();
    const first = pay(t, g.shares[0].shareId, undefined, headers);
    await charging;
    clock.advance(61_000); // past the idempotency claim's abandon time
    assertError(await pay(t, g.shares[0].shareId, undefined, headers), 409, 'payment_in_progress');
    held.release();
    const answered = await first;
    assert.equal(answered.status, 200, answered.text);
    const view = await merchantSession(t, g.created.session_id);
    assert.equal(view.group.members[0].status, 'paid');
    assert.equal(view.charges.length, 1);
    const report = await reconcile(t.deps);
    assert.deepEqual(report.mismatches, []);
  } finally {
    await t.close();
  }
});

test('a recovery that learns nothing asks again a minute later, not at every round', async () => {
  const clock = manualClock(Date.now());
  let retrieves = 0;
  const t = await startTestApp(dialect, {
    env: ENV,
    clock,
    wrapProcessor: (processor) => ({
      ...processor,
      async charge(): Promise<Outcome> {
        throw new Error('connection reset');
      },
      async retrieve() {
        retrieves++;
        return { status: 'unknown', message: 'still unreachable' };
      },
    }),
  });
  try {
    const g = await equalGroup(t, ['Ada', 'Ben']);
    assertError(await pay(t, g.shares[0].shareId), 503, 'upstream_error');
    // The share is held while nobody knows what became of the charge.
    assertError(await pay(t, g.shares[0].shareId), 409, 'payment_in_progress');
    await settleDueSessions(t.deps);
    assert.equal(retrieves, 0, 'not before the recovery delay');
    clock.advance(90_000);
    await settleDueSessions(t.deps);
    assert.equal(retrieves, 1);
    for (let round = 0; round < 5; round++) {
      clock.advance(1_000);
      await settleDueSessions(t.deps);
    }
    assert.equal(retrieves, 1, 'no hot loop: the next ask is a minute after the last');
    clock.advance(60_000);
    await settleDueSessions(t.deps);
    assert.equal(retrieves, 2);
  } finally {
    await t.close();
  }
});

test('an outcome arriving after the recovery recorded another one is 503, logged, and reconcile names it', async () => {
  const clock = manualClock(Date.now());
  const held = heldCharges();
  const t = await startTestApp(dialect, { env: ENV, clock, wrapProcessor: held.wrap });
  try {
    const g = await equalGroup(t, ['Ada', 'Ben']);
    const charging = held.started();
    const first = pay(t, g.shares[0].shareId);
    await charging;
    // The call outlives the recovery delay (it cannot with the default and a real processor): the
    // recovery finds no record at the sandbox and settles the attempt as failed.
    clock.advance(91_000);
    await settleDueSessions(t.deps);
    held.release();
    const answered = await first;
    assertError(answered, 503, 'upstream_error');
    assert.ok(t.logLines.some((l) => l.includes('after the recovery recorded another one')));
    const view = await merchantSession(t, g.created.session_id);
    assert.equal(view.group.members[0].status, 'pending', 'the record stands as the recovery wrote it');
    const report = await reconcile(t.deps);
    const [charge] = await t.deps.db.kysely
      .selectFrom('attempts')
      .select(['id', 'state'])
      .where('session_id', '=', g.created.session_id)
      .execute();
    assert.equal(charge?.state, 'failed');
    // The processor took the money; the attempt that asked for it is recorded as failed.
    assert.ok(
      report.mismatches.some(
        (m) =>
          m.kind === 'processor_mismatch' &&
          m.session_id === g.created.session_id &&
          m.detail.includes(`made by attempt ${charge.id}, which is recorded as failed`),
      ),
      JSON.stringify(report.mismatches),
    );
  } finally {
    await t.close();
  }
});

test('a charge the processor made whose record is still on its way is in flight, not unknown to reconcile', async () => {
  let made: () => void = () => {};
  let go: () => void = () => {};
  const charged = new Promise<void>((resolve) => (made = resolve));
  const released = new Promise<void>((resolve) => (go = resolve));
  // The sandbox has made and kept the charge; its answer waits before the record step runs.
  const wrap = (processor: PaymentProcessor): PaymentProcessor => ({
    ...processor,
    async charge(request) {
      const outcome = await processor.charge(request);
      made();
      await released;
      return outcome;
    },
  });
  const t = await startTestApp(dialect, { env: ENV, wrapProcessor: wrap });
  try {
    const g = await equalGroup(t, ['Ada', 'Ben']);
    const paying = pay(t, g.shares[0].shareId);
    await charged;
    const during = await reconcile(t.deps);
    assert.deepEqual(during.mismatches, [], 'the charge is named by its call, still in flight');
    assert.equal(during.ok, true);
    go();
    assert.equal((await paying).status, 200);
    const after = await reconcile(t.deps);
    assert.deepEqual(after.mismatches, []);
    assert.equal((await merchantSession(t, g.created.session_id)).group.members[0].status, 'paid');
  } finally {
    go();
    await t.close();
  }
});
