// Exactly one payment per share, however many requests race (docs/api.md#payments): 50 pays of one
// share, and 20 pays over the four shares of one group, sent at once. On PostgreSQL the requests are
// spread over two app instances on one database, as two servers behind a load balancer would get them.
// What is checked is what a payer and the merchant would check: one 200, the card charged once (one
// sandbox charge), the share paid, one share_paid event, one ledger charge; the group funded once.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { settleSession } from '../../src/flows/settle.ts';
import type { PaymentProcessor } from '../../src/processor/types.ts';
import { startTestApp, type TestApp, type TestResponse } from '../helpers/app.ts';
import { DIALECTS, type TestDatabase } from '../helpers/databases.ts';
import { assertError } from '../helpers/errors.ts';
import {
  assertChargedOnce,
  memberMoney,
  sessionEventTypes,
  sessionTransfers,
} from '../helpers/money-rows.ts';
import { equalGroup, merchantSession, pay, type Share } from '../helpers/payments.ts';
import { assertReconciled } from '../helpers/reconcile.ts';
import { SESSION_ENV } from '../helpers/sessions.ts';

/**
 * Charges wait at the card network until the test opens the gate. Without a wait the race is weak: on
 * SQLite (synchronous under its promises) a whole payment runs without yielding to the next request.
 */
let gate: Promise<void> | undefined;
const gated = (processor: PaymentProcessor): PaymentProcessor => ({
  ...processor,
  charge: async (request) => {
    await gate;
    return processor.charge(request);
  },
});

/**
 * Sends every pay at once, holding each charge at the card network until all but `winners` pays have
 * answered (or 5 s passed, should more than `winners` reach the card network): every loser then
 * answered while a winner's charge was in flight.
 */
async function race(pays: { app: TestApp; shareId: string }[], winners: number): Promise<TestResponse[]> {
  let open = () => {};
  gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  const timer = setTimeout(open, 5000);
  let answered = 0;
  try {
    return await Promise.all(
      pays.map(async ({ app, shareId }) => {
        const res = await pay(app, shareId);
        if (++answered >= pays.length - winners) open();
        return res;
      }),
    );
  } finally {
    clearTimeout(timer);
    gate = undefined;
  }
}

/** Sorts the answers into the 200s and the refusals; fails on anything else (a 5xx above all). */
function sortAnswers(answers: TestResponse[]) {
  const ok = answers.filter((r) => r.status === 200);
  const refused = answers.filter((r) => r.status !== 200);
  for (const r of refused) {
    // Every refused pay came while the winning pay of its share was in flight.
    assertError(r, 409, 'payment_in_progress');
  }
  return { ok, refused };
}

for (const dialect of DIALECTS) {
  describe(`concurrent pays on ${dialect.name}`, { skip: dialect.skip }, () => {
    let database: TestDatabase;
    /** Two instances on PostgreSQL (one database), one on SQLite (one file, one process). */
    const apps: TestApp[] = [];
    let t: TestApp;

    before(async () => {
      database = await dialect.create();
      const options = { env: SESSION_ENV, database, wrapProcessor: gated };
      t = await startTestApp(dialect, options);
      apps.push(t);
      if (dialect.name === 'postgres') apps.push(await startTestApp(dialect, options));
    });
    after(async () => {
      for (const app of apps.reverse()) await app.close();
      await database?.drop();
    });

    test('50 pays of one share at once: one 200, 49 refusals, one charge', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben', 'Cy']);
      const share = g.shares[1] as Share;
      const answers = await race(
        Array.from({ length: 50 }, (_, i) => ({
          app: apps[i % apps.length] as TestApp,
          shareId: share.shareId,
        })),
        1,
      );
      const { ok, refused } = sortAnswers(answers);
      assert.equal(ok.length, 1, `one 200: ${answers.map((r) => r.status).join(',')}`);
      assert.equal(refused.length, 49);
      assert.equal(ok[0]?.body.member.status, 'paid');

      const attempt = await assertChargedOnce(t.deps.db.kysely, g.created.session_id, share);
      assert.equal(ok[0]?.body.payment.id, attempt?.processorId, 'the 200 names the one charge');
      const view = await merchantSession(t, g.created.session_id);
      assert.equal(view.status, 'pending');
      assert.deepEqual(
        view.group.members.map((m: { status: string }) => m.status),
        ['pending', 'paid', 'pending'],
      );
      assert.deepEqual(view.charges, [attempt?.processorId]);
      // The others were never charged.
      for (const other of [g.shares[0], g.shares[2]] as Share[]) {
        const money = await memberMoney(t.deps.db.kysely, g.created.session_id, other.id);
        assert.deepEqual([money.attempts.length, money.sandbox.length], [0, 0]);
      }
    });

    test('20 pays over the 4 shares of a group at once: each charged once, funded once, one transfer', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben', 'Cy', 'Dee']);
      const sessionId = g.created.session_id;
      // Five racing pays per share, interleaved, spread over the instances.
      const targets = Array.from({ length: 20 }, (_, i) => g.shares[i % 4] as Share);
      const answers = await race(
        targets.map((s, i) => ({
          app: apps[Math.floor(i / 4) % apps.length] as TestApp,
          shareId: s.shareId,
        })),
        4,
      );
      const { ok } = sortAnswers(answers);
      for (const s of g.shares) {
        const paid = answers.filter((r, i) => targets[i] === s && r.status === 200);
        assert.equal(paid.length, 1, `one 200 for ${s.name}`);
      }
      assert.equal(ok.length, 4);

      // The transfer follows the funding (right after it, or by the settling worker): settle to be sure.
      await settleSession(t.deps, sessionId);
      const chargeIds: (string | null | undefined)[] = [];
      for (const s of g.shares)
        chargeIds.push((await assertChargedOnce(t.deps.db.kysely, sessionId, s))?.processorId);

      const view = await merchantSession(t, sessionId);
      assert.equal(view.status, 'funded');
      assert.equal(view.charges.length, 4, `four charges: ${JSON.stringify(view.charges)}`);
      assert.deepEqual([...view.charges].sort(), [...chargeIds].sort());
      const events = await sessionEventTypes(t.deps.db.kysely, sessionId);
      assert.equal(events.filter((e) => e === 'group.funded').length, 1, events.join(','));
      assert.equal(events.filter((e) => e === 'group.share_paid').length, 4, events.join(','));
      assert.equal(events.at(-1), 'group.funded');

      const transfers = await sessionTransfers(t.deps.db.kysely, sessionId);
      assert.deepEqual(
        transfers.attempts.map((a) => a.state),
        ['succeeded'],
      );
      assert.equal(transfers.sandbox.length, 1, 'one transfer at the processor');
      assert.equal(view.transfer, transfers.sandbox[0]?.id);
    });

    test('reconcile is clean after the suite: ledger, statuses and processor agree', async () => {
      await assertReconciled(t);
    });
  });
}
