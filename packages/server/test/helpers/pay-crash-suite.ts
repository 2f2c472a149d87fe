// Money across a crash: the real server (src/main.ts, with its settling worker) is killed by its crash
// switch (SANDBOX_CRASH_AT) right after the processor charged a card or refunded one, before the outcome
// is recorded. After a restart without the switch, the settling worker asks the processor what became of
// the call (same idempotency key) and records it: the card charged once, refunded once, nothing stuck
// (docs/decisions.md#claim-call-record).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { systemClock } from '../../src/clock.ts';
import { reconcile } from '../../src/flows/reconcile.ts';
import { createSandboxProcessor } from '../../src/processor/sandbox.ts';
import type { Db } from '../../src/store/db.ts';
import { type ApiClient, RELAXED_LIMITS, requestOver } from './app.ts';
import type { DialectCase } from './databases.ts';
import {
  assertChargedOnce,
  entriesOf,
  madeOf,
  memberMoney,
  sessionEventTypes,
  sessionTransfers,
} from './money-rows.ts';
import { equalGroup, eventually, merchantSession, pay, payOk, type Share } from './payments.ts';
import { type CrashFixture, crashFixture, type ServerProcess } from './server-process.ts';

/**
 * The crashing run's recovery delay: settle_after is written with it when the payment is claimed, so it
 * bounds how soon the restarted server looks at the session. Long enough that the crashing run's own
 * worker never recovers the call before the crash.
 */
const CRASHING = { PAYMENT_RECOVERY_AFTER_MS: '1000' };
/** The restart: recovery after 200 ms, a settling round every 100 ms. */
const RESTART = { PAYMENT_RECOVERY_AFTER_MS: '200', SETTLE_INTERVAL_MS: '100' };

export function describePayCrashSuite(dialect: DialectCase) {
  describe(`payments across a crash on ${dialect.name}`, { skip: dialect.skip }, () => {
    let fixture: CrashFixture;
    let db: Db;
    let server: ServerProcess;
    let client: ApiClient;

    before(async () => {
      fixture = await crashFixture(dialect, RELAXED_LIMITS);
      const { merchant } = fixture;
      ({ db, server } = fixture);
      client = { merchant, request: (method, path, o) => requestOver(server.baseUrl, method, path, o) };
      await server.start(RESTART);
    });
    after(() => fixture?.close());

    /** Stops the server and starts it with the crash switch at `point`. */
    async function restartCrashingAt(point: string) {
      await server.stop();
      await server.start({ ...CRASHING, SANDBOX_CRASH_AT: point });
    }

    async function assertKilled(request: Promise<unknown>) {
      // The process dies in the middle of the request: the client sees the connection drop, no answer.
      await assert.rejects(request, 'the request got no answer');
      assert.equal(
        await server.exited,
        'SIGKILL',
        `the server was killed by its crash switch:\n${server.output}`,
      );
    }

    test('killed after the charge of the last share: recovered on restart, charged once, funded once', async () => {
      const g = await equalGroup(client, ['Ada', 'Ben']);
      const sessionId = g.created.session_id;
      const [ada, ben] = g.shares as [Share, Share];
      await payOk(client, ada.shareId);

      await restartCrashingAt('payment-called');
      await assertKilled(pay(client, ben.shareId));
      // Charged at the processor, not recorded: the attempt is left started, the share still pending.
      const crashed = await memberMoney(db.kysely, sessionId, ben.id);
      assert.deepEqual(
        crashed.attempts.map((a) => a.state),
        ['started'],
      );
      assert.equal(madeOf(crashed.sandbox, 'charge').length, 1, 'the sandbox holds the charge');
      assert.equal(crashed.status, 'pending');
      assert.equal(crashed.payingAttemptId, crashed.attempts[0]?.id);

      await server.start(RESTART);
      await eventually(
        async () => (await memberMoney(db.kysely, sessionId, ben.id)).status === 'paid',
        20_000,
        "Ben's share paid by the recovery",
      );
      await eventually(
        async () => (await merchantSession(client, sessionId)).transfer !== null,
        20_000,
        'the transfer',
      );

      const attempt = await assertChargedOnce(db.kysely, sessionId, ben);
      assert.equal(attempt?.id, crashed.attempts[0]?.id, 'the crashed attempt itself was recorded');
      await assertChargedOnce(db.kysely, sessionId, ada);
      const view = await merchantSession(client, sessionId);
      assert.equal(view.status, 'funded');
      assert.equal(view.charges.length, 2);
      const events = await sessionEventTypes(db.kysely, sessionId);
      assert.equal(events.filter((e) => e === 'group.funded').length, 1, events.join(','));
      const transfers = await sessionTransfers(db.kysely, sessionId);
      assert.deepEqual(
        transfers.attempts.map((a) => a.state),
        ['succeeded'],
      );
      assert.equal(transfers.sandbox.length, 1, 'one transfer at the processor');

      // Paying again is refused as a share already paid, and charges nothing.
      const again = await pay(client, ben.shareId);
      assert.equal(again.status, 409, again.text);
      assert.equal(
        again.body.code,
        'share_not_pending',
        `paying a paid share again: ${again.text} (docs/api.md: share_not_pending is "paying a share that is already paid")`,
      );
      assert.equal(madeOf((await memberMoney(db.kysely, sessionId, ben.id)).sandbox, 'charge').length, 1);
    });

    test('killed after the refund call of a cancel: recovered on restart, refunded once', async () => {
      const g = await equalGroup(client, ['Ada', 'Ben']);
      const sessionId = g.created.session_id;
      const ada = g.shares[0] as Share;
      await payOk(client, ada.shareId);

      await restartCrashingAt('refund-called');
      await assertKilled(
        client.request('POST', `/v1/sessions/${sessionId}/cancel`, { key: client.merchant.secretKey }),
      );
      const crashed = await memberMoney(db.kysely, sessionId, ada.id);
      assert.deepEqual(
        crashed.attempts.map((a) => [a.kind, a.state]),
        [
          ['charge', 'succeeded'],
          ['refund', 'started'],
        ],
      );
      assert.equal(madeOf(crashed.sandbox, 'refund').length, 1, 'the sandbox made the refund');
      assert.equal(crashed.status, 'paid', 'not yet recorded as refunded');

      await server.start(RESTART);
      await eventually(
        async () => (await sessionEventTypes(db.kysely, sessionId)).includes('group.cancelled'),
        20_000,
        'the refund recovered and the session closed',
      );

      const money = await memberMoney(db.kysely, sessionId, ada.id);
      assert.equal(money.status, 'refunded');
      const refunds = madeOf(money.sandbox, 'refund');
      assert.equal(refunds.length, 1, `one refund at the processor: ${JSON.stringify(money.sandbox)}`);
      assert.equal(refunds[0]?.amountCents, ada.due, 'share + consumer fee');
      assert.deepEqual(
        money.attempts.map((a) => [a.kind, a.state]),
        [
          ['charge', 'succeeded'],
          ['refund', 'succeeded'],
        ],
      );
      assert.equal(entriesOf(money.ledger, 'refund').length, 1, 'one ledger entry for the refund');
      const view = await merchantSession(client, sessionId);
      assert.equal(view.status, 'cancelled');
      assert.deepEqual(
        view.refunds.map((r: { id: string; amount_cents: number; status: string }) => [
          r.id,
          r.amount_cents,
          r.status,
        ]),
        [[refunds[0]?.id, ada.due, 'succeeded']],
      );
      const events = await sessionEventTypes(db.kysely, sessionId);
      assert.equal(events.filter((e) => e === 'group.share_refunded').length, 1, events.join(','));
      assert.equal(events.filter((e) => e === 'group.cancelled').length, 1, events.join(','));
      assert.equal(events.at(-1), 'group.cancelled', events.join(','));
    });

    test('reconcile is clean after the crashes: ledger, statuses and the sandbox agree', async () => {
      const report = await reconcile({
        db,
        processor: createSandboxProcessor(db, systemClock),
        clock: systemClock,
      });
      assert.deepEqual(report.mismatches, []);
      assert.ok(report.ok);
      assert.ok(report.checked.sessions >= 2);
    });
  });
}
