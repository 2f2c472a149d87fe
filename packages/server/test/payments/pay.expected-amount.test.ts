// The amount a payer was shown is the amount charged: a payment sent with expected_amount_due_cents that
// no longer matches the share (the organizer re-split the group meanwhile) is 409 amount_changed, and
// nothing is claimed, charged or recorded.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { assertError } from '../helpers/errors.ts';
import { CARDS, equalGroup, merchantSession } from '../helpers/payments.ts';
import { organizerToken, SESSION_ENV } from '../helpers/sessions.ts';

for (const dialect of DIALECTS) {
  describe(`paying what was shown, on ${dialect.name}`, { skip: dialect.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(dialect, { env: SESSION_ENV });
    });
    after(() => t?.close());

    const payShown = (shareId: string, expected: number) =>
      t.request('POST', `/api/v1/shares/${shareId}/pay`, {
        body: {
          card: { number: CARDS.ok, exp_month: 12, exp_year: 2099, cvc: '123' },
          expected_amount_due_cents: expected,
        },
      });

    test('a re-split after the page was shown: 409 amount_changed, nothing charged; the new amount pays', async () => {
      const g = await equalGroup(t, ['Ann', 'Bob']);
      const bob = g.shares[1];
      // 100.00 / 2 = 50.00, + 1 % fee = 50.50: what Bob's page shows.
      assert.equal(bob.due, 5050);
      const resplit = await t.request('PUT', `/api/v1/session/group?access=${organizerToken(g.created)}`, {
        body: {
          mode: 'custom',
          members: [
            { id: g.shares[0].id, name: 'Ann', amount_cents: 4000 },
            { id: bob.id, name: 'Bob', amount_cents: 6000 },
          ],
        },
      });
      assert.equal(resplit.status, 200, resplit.text);
      const stale = await payShown(bob.shareId, 5050);
      assertError(stale, 409, 'amount_changed');
      assert.match(stale.body.error, /60\.60 USD/);
      const attempts = await t.deps.db.kysely
        .selectFrom('attempts')
        .select('id')
        .where('session_id', '=', g.created.session_id)
        .execute();
      assert.equal(attempts.length, 0, 'nothing was claimed');
      const view = await merchantSession(t, g.created.session_id);
      assert.equal(view.group.paid_amount, 0);
      const fresh = await payShown(bob.shareId, 6060);
      assert.equal(fresh.status, 200, fresh.text);
      assert.equal(fresh.body.payment.amount_cents, 6060);
    });

    test('without expected_amount_due_cents the share is paid at its amount, as before', async () => {
      const g = await equalGroup(t, ['Ann', 'Bob']);
      const res = await t.request('POST', `/api/v1/shares/${g.shares[1].shareId}/pay`, {
        body: { card: { number: CARDS.ok, exp_month: 12, exp_year: 2099, cvc: '123' } },
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.payment.amount_cents, 5050);
    });

    test('expected_amount_due_cents must be a whole non-negative number', async () => {
      const g = await equalGroup(t, ['Ann', 'Bob']);
      for (const bad of [-1, 50.5, '5050', null]) {
        const res = await t.request('POST', `/api/v1/shares/${g.shares[1].shareId}/pay`, {
          body: {
            card: { number: CARDS.ok, exp_month: 12, exp_year: 2099, cvc: '123' },
            expected_amount_due_cents: bad,
          },
        });
        assertError(res, 400, 'invalid_request', String(bad));
      }
    });
  });
}
