// Reconcile stays clean on the rarer paths of money: an FX fee, a share of nothing, a hold declined at
// capture and paid again, expiry with a hold and with a charge, a cancel after a declined capture.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { CARDS, equalGroup, type Group, payOk, type Share } from '../helpers/payments.ts';
import { assertReconciled } from '../helpers/reconcile.ts';
import { createSession, organizerToken, SESSION_ENV } from '../helpers/sessions.ts';

const shareOf = (g: Group, i: number) => g.shares[i] as Share;

const statusOf = async (t: TestApp, sessionId: string) =>
  (
    await t.deps.db.kysely
      .selectFrom('sessions')
      .select('status')
      .where('id', '=', sessionId)
      .executeTakeFirstOrThrow()
  ).status;

const membersOf = async (t: TestApp, sessionId: string) =>
  (
    await t.deps.db.kysely
      .selectFrom('members')
      .select('status')
      .where('session_id', '=', sessionId)
      .orderBy('position')
      .execute()
  ).map((m) => m.status);

for (const dialect of DIALECTS) {
  describe(`reconcile on the rarer paths, ${dialect.name}`, { skip: dialect.skip }, () => {
    test('is clean', async () => {
      const t = await startTestApp(dialect, { env: SESSION_ENV });
      try {
        // A merchant paid out in another currency: the FX fee is taken at funding.
        const fx = await t.createMerchant({ payoutCurrency: 'eur' });
        const created = await createSession(t, { merchant: fx });
        const group = await t.request('PUT', `/api/v1/session/group?access=${organizerToken(created)}`, {
          body: { mode: 'equal', members: [{ name: 'Ada' }, { name: 'Ben' }] },
        });
        assert.equal(group.status, 200, group.text);
        for (const m of group.body.group.members) await payOk(t, m.share_id);
        assert.equal(await statusOf(t, created.session_id), 'funded');
        const fxLines = await t.deps.db.kysely
          .selectFrom('ledger_lines')
          .select('amount_cents')
          .where('session_id', '=', created.session_id)
          .where('account', '=', 'fx_fees')
          .execute();
        assert.equal(fxLines.length, 1);

        // The host pays everything: the guest's share of nothing counts as paid without a payment.
        const hostPays = await createSession(t);
        const hp = await t.request('PUT', `/api/v1/session/group?access=${organizerToken(hostPays)}`, {
          body: {
            mode: 'host-pays',
            members: [
              { name: 'Ada', amount_cents: 10_000 },
              { name: 'Ben', amount_cents: 0 },
            ],
          },
        });
        assert.equal(hp.status, 200, hp.text);
        await payOk(t, hp.body.group.members[0].share_id);
        assert.deepEqual(await membersOf(t, hostPays.session_id), ['paid', 'paid']);

        // A hold declined at capture, paid again with another card, then captured.
        const again = await equalGroup(t, ['Ada', 'Ben'], { group_config: { capture: 'on_funded' } });
        await payOk(t, shareOf(again, 0).shareId);
        await payOk(t, shareOf(again, 1).shareId, CARDS.failsAtCapture);
        await payOk(t, shareOf(again, 1).shareId);
        assert.equal(await statusOf(t, again.created.session_id), 'funded');

        // Expiry lets a hold go, and refunds a charge.
        const expire = (g: Group) =>
          t.request('POST', `/v1/test_helpers/sessions/${g.created.session_id}/expire`, {
            key: t.merchant.secretKey,
          });
        const held = await equalGroup(t, ['Ada', 'Ben'], { group_config: { capture: 'on_funded' } });
        await payOk(t, shareOf(held, 0).shareId);
        assert.equal((await expire(held)).status, 200);
        assert.deepEqual(await membersOf(t, held.created.session_id), ['released', 'pending']);
        const charged = await equalGroup(t, ['Ada', 'Ben']);
        await payOk(t, shareOf(charged, 0).shareId);
        assert.equal((await expire(charged)).status, 200);
        assert.deepEqual(await membersOf(t, charged.created.session_id), ['refunded', 'pending']);

        // Cancelled after one hold was captured and the other declined at capture.
        const split = await equalGroup(t, ['Ada', 'Ben'], { group_config: { capture: 'on_funded' } });
        await payOk(t, shareOf(split, 0).shareId);
        await payOk(t, shareOf(split, 1).shareId, CARDS.failsAtCapture);
        const cancel = await t.request('POST', `/v1/sessions/${split.created.session_id}/cancel`, {
          key: t.merchant.secretKey,
        });
        assert.equal(cancel.status, 200, cancel.text);
        assert.deepEqual(await membersOf(t, split.created.session_id), ['refunded', 'pending']);

        const report = await assertReconciled(t);
        assert.equal(report.checked.sessions, 6);
      } finally {
        await t.close();
      }
    });
  });
}
