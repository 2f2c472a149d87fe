// Reconcile (docs/decisions.md#ledger-and-reconciliation): clean after real money moved over the API in
// every way it can, and naming each mismatch planted by hand afterwards, from the flow and from the CLI.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Mismatch } from '../../src/domain/reconciliation.ts';
import { reconcile } from '../../src/flows/reconcile.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { cli } from '../helpers/cli.ts';
import { DIALECTS } from '../helpers/databases.ts';
import {
  authenticate,
  CARDS,
  equalGroup,
  type Group,
  merchantSession,
  pay,
  payOk,
  type Share,
} from '../helpers/payments.ts';
import { assertReconciled } from '../helpers/reconcile.ts';
import { organizerToken, SESSION_ENV } from '../helpers/sessions.ts';

/** Runs `use` on a fresh app, closed after. */
async function withApp(dialect: (typeof DIALECTS)[number], use: (t: TestApp) => Promise<void>) {
  const t = await startTestApp(dialect, { env: SESSION_ENV });
  try {
    await use(t);
  } finally {
    await t.close();
  }
}

/** An immediate group of three, every share charged: funded, and its transfer made. */
async function fundedImmediate(t: TestApp): Promise<Group> {
  const g = await equalGroup(t, ['Ada', 'Ben', 'Cy']);
  for (const s of g.shares) await payOk(t, s.shareId);
  const view = await merchantSession(t, g.created.session_id);
  assert.equal(view.status, 'funded');
  assert.match(view.transfer, /^tr_/);
  return g;
}

/** The group's `i`th share (the organizer's is 0). */
const shareOf = (g: Group, i: number) => g.shares[i] as Share;

const cancel = async (t: TestApp, g: Group) => {
  const res = await t.request('POST', `/v1/sessions/${g.created.session_id}/cancel`, {
    key: t.merchant.secretKey,
  });
  assert.equal(res.status, 200, res.text);
};

const statuses = async (t: TestApp, g: Group) =>
  (
    await t.deps.db.kysely
      .selectFrom('members')
      .select(['id', 'status'])
      .where('session_id', '=', g.created.session_id)
      .orderBy('position')
      .execute()
  ).map((m) => m.status);

const kinds = (mismatches: Mismatch[]) => [...new Set(mismatches.map((m) => m.kind))].sort();

for (const dialect of DIALECTS) {
  describe(`reconcile on ${dialect.name}`, { skip: dialect.skip }, () => {
    test('is clean after funding, refunds, captures, releases, a declined capture and a declined card', async () => {
      await withApp(dialect, async (t) => {
        await fundedImmediate(t);

        const refunded = await equalGroup(t, ['Ada', 'Ben']);
        await payOk(t, shareOf(refunded, 0).shareId);
        await cancel(t, refunded);
        assert.deepEqual(await statuses(t, refunded), ['refunded', 'pending']);

        const captured = await equalGroup(t, ['Ada', 'Ben'], { group_config: { capture: 'on_funded' } });
        await payOk(t, shareOf(captured, 0).shareId);
        await payOk(t, shareOf(captured, 1).shareId);
        assert.equal((await merchantSession(t, captured.created.session_id)).status, 'funded');
        assert.deepEqual(await statuses(t, captured), ['paid', 'paid']);

        const released = await equalGroup(t, ['Ada', 'Ben'], { group_config: { capture: 'on_funded' } });
        await payOk(t, shareOf(released, 0).shareId);
        const c = await t.request(
          'POST',
          `/api/v1/session/cancel?access=${organizerToken(released.created)}`,
          {},
        );
        assert.equal(c.status, 200, c.text);
        assert.deepEqual(await statuses(t, released), ['released', 'pending']);

        // The second hold fails at capture: it is let go, and its member owes their share again, while
        // the first hold is captured.
        const failedCapture = await equalGroup(t, ['Ada', 'Ben'], { group_config: { capture: 'on_funded' } });
        await payOk(t, shareOf(failedCapture, 0).shareId);
        await payOk(t, shareOf(failedCapture, 1).shareId, CARDS.failsAtCapture);
        assert.deepEqual(await statuses(t, failedCapture), ['paid', 'pending']);

        const declined = await equalGroup(t, ['Ada', 'Ben']);
        assert.equal((await pay(t, shareOf(declined, 0).shareId, CARDS.declined)).status, 402);
        await payOk(t, shareOf(declined, 1).shareId);

        const report = await assertReconciled(t);
        assert.equal(report.checked.sessions, 6);
        assert.equal(report.checked.members, 13);
        // (3 charges, 1 transfer) + (1 charge, 1 refund) + (2 holds, 2 captures, 1 transfer)
        // + (1 hold, 1 release) + (2 holds, 1 capture, 1 declined capture) + (1 declined, 1 charge).
        assert.equal(report.checked.attempts, 4 + 2 + 5 + 2 + 4 + 2);
        assert.ok(report.checked.ledger_lines > 30, `${report.checked.ledger_lines} ledger lines`);
        // Charges, holds, refunds and transfers: 4 + 2 + 3 + 1 + 2 + 1.
        assert.equal(report.checked.processor_objects, 4 + 2 + 3 + 1 + 2 + 1);
      });
    });

    test('a ledger line deleted by hand: the ledger and the entry are unbalanced, in that session', async () => {
      await withApp(dialect, async (t) => {
        const g = await fundedImmediate(t);
        const sid = g.created.session_id;
        const line = await t.deps.db.kysely
          .selectFrom('ledger_lines')
          .selectAll()
          .where('session_id', '=', sid)
          .where('kind', '=', 'charge')
          .where('account', '=', 'session_funds')
          .executeTakeFirstOrThrow();
        await t.deps.db.kysely.deleteFrom('ledger_lines').where('id', '=', line.id).execute();

        const report = await reconcile(t.deps);
        assert.equal(report.ok, false);
        assert.deepEqual(kinds(report.mismatches), [
          'entry_unbalanced',
          'ledger_session_funds',
          'ledger_unbalanced',
        ]);
        const ledger = report.mismatches.find((m) => m.kind === 'ledger_unbalanced') as Mismatch;
        assert.match(ledger.detail, new RegExp(`add up to -${line.amount_cents} USD`));
        const entry = report.mismatches.find((m) => m.kind === 'entry_unbalanced') as Mismatch;
        assert.equal(entry.session_id, sid);
        assert.match(entry.detail, new RegExp(line.entry_id));
      });
    });

    test('a paid member set back to pending by hand: its status and its ledger lines disagree', async () => {
      await withApp(dialect, async (t) => {
        const g = await fundedImmediate(t);
        const sid = g.created.session_id;
        const member = shareOf(g, 1).id;
        await t.deps.db.kysely
          .updateTable('members')
          .set({ status: 'pending' })
          .where('id', '=', member)
          .execute();

        const report = await reconcile(t.deps);
        assert.equal(report.ok, false);
        for (const kind of ['status_mismatch', 'ledger_member']) {
          const found = report.mismatches.filter((m) => m.kind === kind && m.detail.includes(member));
          assert.ok(found.length > 0, `${kind} naming ${member} in ${JSON.stringify(report.mismatches)}`);
          for (const m of found) assert.equal(m.session_id, sid);
        }
        // The processor still has the charge as taken, which a pending member contradicts.
        assert.ok(
          report.mismatches.some((m) => m.kind === 'processor_mismatch' && m.detail.includes(member)),
        );
      });
    });

    test('a paid share changed by hand, the total still adding up, is no longer what its payment took', async () => {
      await withApp(dialect, async (t) => {
        const g = await fundedImmediate(t);
        const sid = g.created.session_id;
        const [one, two] = [shareOf(g, 1).id, shareOf(g, 2).id];
        const shares = await t.deps.db.kysely
          .selectFrom('members')
          .select(['id', 'amount_cents'])
          .where('id', 'in', [one, two])
          .execute();
        const amountOf = (id: string) => shares.find((m) => m.id === id)?.amount_cents as number;
        // 34 minor units moved from one paid member to another: the shares still add up to the total.
        await t.deps.db.kysely
          .updateTable('members')
          .set({ amount_cents: amountOf(one) - 34 })
          .where('id', '=', one)
          .execute();
        await t.deps.db.kysely
          .updateTable('members')
          .set({ amount_cents: amountOf(two) + 34 })
          .where('id', '=', two)
          .execute();

        const report = await reconcile(t.deps);
        assert.equal(report.ok, false);
        for (const member of [one, two]) {
          const found = report.mismatches.filter(
            (m) => m.kind === 'status_mismatch' && m.session_id === sid && m.detail.includes(member),
          );
          assert.equal(found.length, 1, JSON.stringify(report.mismatches));
          assert.match(
            found[0]?.detail as string,
            /is paid with a share of \d+ USD minor units, but its charge/,
          );
        }
      });
    });

    test('a charge at the processor that no attempt names is money taken without a record', async () => {
      await withApp(dialect, async (t) => {
        await fundedImmediate(t);
        const now = Date.now();
        await t.deps.db.kysely
          .insertInto('sandbox_operations')
          .values({
            idempotency_key: 'planted_by_hand',
            id: 'ch_PlantedByHand',
            kind: 'charge',
            target_id: null,
            amount_cents: 4242,
            currency: 'usd',
            state: 'succeeded',
            outcome: JSON.stringify({
              outcome: { status: 'succeeded', processorId: 'ch_PlantedByHand', amountCents: 4242 },
            }),
            created_at: now,
            updated_at: now,
          })
          .execute();

        const report = await reconcile(t.deps);
        assert.equal(report.ok, false);
        assert.equal(report.mismatches.length, 1, JSON.stringify(report.mismatches));
        const [m] = report.mismatches as [Mismatch];
        assert.equal(m.kind, 'processor_unknown_object');
        assert.equal(m.session_id, undefined);
        assert.match(
          m.detail,
          /charge ch_PlantedByHand of 4242 USD minor units \(succeeded\).*money taken without a record/,
        );
      });
    });

    test('a payment recorded as declined that the processor took after all is a processor_mismatch', async () => {
      await withApp(dialect, async (t) => {
        const g = await equalGroup(t, ['Ada', 'Ben']);
        const ben = g.shares[1].shareId;
        const asked = await payOk(t, ben, CARDS.authenticates);
        const failed = await authenticate(t, ben, asked.body.next_action.client_secret, 'fail');
        assert.equal(failed.body.status, 'pending');
        // The declined try keeps the processor's id of the payment, which the processor shows as not taken.
        const attempt = await t.deps.db.kysely
          .selectFrom('attempts')
          .select(['id', 'state', 'processor_id'])
          .where('session_id', '=', g.created.session_id)
          .executeTakeFirstOrThrow();
        assert.equal(attempt.state, 'declined');
        assert.ok(attempt.processor_id, 'the declined try names the payment');
        assert.deepEqual((await reconcile(t.deps)).mismatches, []);

        // The processor completed it all the same (a race on its side): money taken, recorded as declined.
        await t.deps.db.kysely
          .updateTable('sandbox_operations')
          .set({ state: 'succeeded' })
          .where('id', '=', attempt.processor_id)
          .execute();
        const report = await reconcile(t.deps);
        assert.equal(report.ok, false);
        assert.deepEqual(
          report.mismatches.map((m) => [m.kind, m.session_id]),
          [['processor_mismatch', g.created.session_id]],
          JSON.stringify(report.mismatches),
        );
        assert.match(
          (report.mismatches[0] as Mismatch).detail,
          new RegExp(
            `${attempt.processor_id} .*\\(succeeded\\), made by attempt ${attempt.id}, which is recorded as declined`,
          ),
        );
      });
    });

    test('an attempt left started past the recovery delay is unsettled', async () => {
      await withApp(dialect, async (t) => {
        const g = await equalGroup(t, ['Ada', 'Ben']);
        const member = await t.deps.db.kysely
          .selectFrom('members')
          .selectAll()
          .where('id', '=', shareOf(g, 0).id)
          .executeTakeFirstOrThrow();
        const old = Date.now() - 60 * 60_000;
        await t.deps.db.kysely
          .insertInto('attempts')
          .values({
            id: 'att_PlantedByHand',
            idempotency_key: 'planted_by_hand',
            kind: 'charge',
            merchant_id: member.merchant_id,
            session_id: g.created.session_id,
            member_id: member.id,
            target_id: null,
            amount_cents: 5050,
            fee_cents: 50,
            currency: 'usd',
            payment_method: null,
            state: 'started',
            processor_id: null,
            card_brand: null,
            card_last4: null,
            decline_code: null,
            error: null,
            created_at: old,
            updated_at: old,
          })
          .execute();
        assert.deepEqual(kinds((await reconcile(t.deps)).mismatches), ['attempt_unsettled']);
        // Within the delay it is a call in flight, not a mismatch.
        const early = { ...t.deps, clock: { now: () => old + 1000 } };
        assert.equal((await reconcile(early)).ok, true);
      });
    });

    test('group-checkout reconcile --json: exit 0 when clean, 1 naming the mismatch', async () => {
      await withApp(dialect, async (t) => {
        const g = await fundedImmediate(t);
        const env = { DATABASE_URL: t.deps.config.databaseUrl };
        const clean = await cli(['reconcile', '--json'], env);
        assert.equal(clean.code, 0, clean.stderr);
        assert.equal(clean.stderr, '');
        const lines = clean.stdout.split('\n');
        assert.equal(lines.length, 2, clean.stdout);
        const answer = JSON.parse(lines[0] as string);
        assert.deepEqual(Object.keys(answer), ['ok', 'checked', 'mismatches']);
        assert.equal(answer.ok, true);
        assert.equal(answer.checked.sessions, 1);
        assert.deepEqual(answer.mismatches, []);

        const human = await cli(['reconcile'], env);
        assert.equal(human.code, 0, human.stderr);
        assert.equal(human.stdout, 'reconcile: 1 session checked, clean\n');

        await t.deps.db.kysely
          .updateTable('members')
          .set({ status: 'pending' })
          .where('id', '=', shareOf(g, 0).id)
          .execute();
        const dirty = await cli(['reconcile', '--json'], env);
        assert.equal(dirty.code, 1, dirty.stderr);
        assert.equal(dirty.stderr, '');
        const report = JSON.parse(dirty.stdout);
        assert.equal(report.ok, false);
        assert.ok(
          report.mismatches.some(
            (m: Mismatch) => m.kind === 'status_mismatch' && m.session_id === g.created.session_id,
          ),
          dirty.stdout,
        );
        const text = await cli(['reconcile'], env);
        assert.equal(text.code, 1);
        assert.match(
          text.stdout,
          new RegExp(`^status_mismatch  ${g.created.session_id}  Member ${shareOf(g, 0).id}`, 'm'),
        );
        assert.match(text.stdout, /\nreconcile: 1 session checked, \d+ mismatches\n$/);

        const usage = await cli(['reconcile', '--verbose'], env);
        assert.equal(usage.code, 2);
        assert.match(
          (await cli(['--help'], {})).stdout,
          /group-checkout reconcile \[--changed \[--limit N\]\] \[--json\]/,
        );
      });
    });
  });
}
