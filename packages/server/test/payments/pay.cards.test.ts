// Paying a share over HTTP with every sandbox test card (docs/api.md#test-cards): what the payer is
// answered, what the share shows afterwards, and that a refusal charges nothing and leaves the share
// pending to be paid with another card.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { assertError } from '../helpers/errors.ts';
import { CARDS, equalGroup, merchantSession, pay, payOk } from '../helpers/payments.ts';
import { assertReconciled } from '../helpers/reconcile.ts';
import { createSession, eventRows, organizerToken, SESSION_ENV } from '../helpers/sessions.ts';

const DECLINES = [
  [CARDS.declined, 'generic_decline', /declined/i],
  [CARDS.insufficientFunds, 'insufficient_funds', /insufficient funds/i],
  [CARDS.expired, 'expired_card', /expired/i],
  [CARDS.incorrectCvc, 'incorrect_cvc', /security code|CVC/i],
  [CARDS.lost, 'lost_card', /declined/i],
  [CARDS.stolen, 'stolen_card', /declined/i],
  // Authorizes, then fails at capture: charged at once (immediate), that is a decline.
  [CARDS.failsAtCapture, 'generic_decline', /declined/i],
] as const;

for (const dialect of DIALECTS) {
  describe(`paying a share with the test cards on ${dialect.name}`, { skip: dialect.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(dialect, { env: SESSION_ENV });
    });
    after(() => t?.close());

    const share = (shareId: string) => t.request('GET', `/api/v1/shares/${shareId}`);
    const sandboxObjects = async () =>
      Number(
        (
          await t.deps.db.kysely
            .selectFrom('sandbox_operations')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('id', 'is not', null)
            .executeTakeFirstOrThrow()
        ).n,
      );

    test('4242 4242 4242 4242 pays: share + consumer fee, the card brand and last four, group.share_paid', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben', 'Cy']);
      const [ada] = g.shares;
      const before = await share(ada.shareId);
      assert.equal(before.body.amount_due_cents, 3334 + 33);
      assert.equal(before.body.payment, null);
      const res = await payOk(t, ada.shareId, '4242 4242 4242 4242');
      assert.equal(res.body.member.status, 'paid');
      assert.equal(res.body.session_status, 'pending');
      assert.equal(res.body.payment.amount_cents, 3367);
      assert.equal(res.body.payment.card_brand, 'visa');
      assert.equal(res.body.payment.card_last4, '4242');
      assert.match(res.body.payment.id, /^ch_[0-9A-Za-z]+$/);
      const view = await merchantSession(t, g.created.session_id);
      assert.deepEqual(view.charges, [res.body.payment.id]);
      assert.equal(view.group.paid_amount, 3334);
      assert.equal(view.group.pending_amount, 10_000 - 3334);
      const events = (await eventRows(t, g.created.session_id)).map((e) => e.type);
      assert.deepEqual(events, ['group.created', 'group.share_paid']);
      // The share page shows the payment too, and the answer was the share as the page shows it.
      const afterwards = await share(ada.shareId);
      assert.equal(afterwards.body.member.status, 'paid');
      assert.equal(afterwards.body.payment.card_last4, '4242');
      const { request_id: _a, ...answered } = res.body;
      const { request_id: _b, ...shown } = afterwards.body;
      assert.deepEqual(answered, shown);
      assert.deepEqual(res.body.group, {
        size: 3,
        paid_count: 1,
        total_cents: 10_000,
        paid_amount: 3334,
        pending_amount: 10_000 - 3334,
      });
      // The last share's answer shows the group complete.
      await payOk(t, g.shares[1].shareId);
      const last = await payOk(t, g.shares[2].shareId);
      assert.equal(last.body.session_status, 'funded');
      assert.deepEqual(last.body.group, {
        size: 3,
        paid_count: 3,
        total_cents: 10_000,
        paid_amount: 10_000,
        pending_amount: 0,
      });
    });

    for (const [number, declineCode, sentence] of DECLINES) {
      test(`${number} is declined with ${declineCode}; the share stays pending and nothing is charged`, async () => {
        const g = await equalGroup(t, ['Ada', 'Ben']);
        const objects = await sandboxObjects();
        const res = await pay(t, g.shares[1].shareId, number);
        assertError(res, 402, 'card_declined');
        assert.equal(res.body.decline_code, declineCode);
        assert.match(res.body.error, sentence);
        assert.equal(await sandboxObjects(), objects, 'no charge was made');
        const view = await merchantSession(t, g.created.session_id);
        assert.equal(view.group.members[1].status, 'pending');
        assert.deepEqual(view.charges, []);
        // The payer tries another card.
        const retry = await payOk(t, g.shares[1].shareId);
        assert.equal(retry.body.member.status, 'paid');
      });
    }

    test('4000 0000 0000 0119 is a processing error: 503 upstream_error, nothing charged, pay again later', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben']);
      const objects = await sandboxObjects();
      const res = await pay(t, g.shares[0].shareId, CARDS.processingError);
      assertError(res, 503, 'upstream_error');
      assert.equal(await sandboxObjects(), objects);
      assert.equal((await merchantSession(t, g.created.session_id)).group.members[0].status, 'pending');
      await payOk(t, g.shares[0].shareId);
    });

    test('a number failing the Luhn check is 400 and reaches no processor; so is a past expiry', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben']);
      const objects = await sandboxObjects();
      const luhn = await pay(t, g.shares[0].shareId, '4242424242424241');
      assertError(luhn, 400, 'invalid_request');
      assert.match(luhn.body.error, /Luhn/);
      const past = await t.request('POST', `/api/v1/shares/${g.shares[0].shareId}/pay`, {
        body: { card: { number: CARDS.ok, exp_month: 1, exp_year: 2020, cvc: '123' } },
      });
      assertError(past, 400, 'invalid_request');
      assert.match(past.body.error, /expired/);
      const attempts = await t.deps.db.kysely
        .selectFrom('attempts')
        .selectAll()
        .where('session_id', '=', g.created.session_id)
        .execute();
      assert.equal(attempts.length, 0);
      assert.equal(await sandboxObjects(), objects);
    });

    test('bad bodies are 400 in the documented shape: no card, both card and payment_method, unknown fields', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben']);
      const url = `/api/v1/shares/${g.shares[0].shareId}/pay`;
      const card = { number: CARDS.ok, exp_month: 12, exp_year: 2099, cvc: '123' };
      for (const body of [
        {},
        { card, payment_method: 'pm_x' },
        { card: { ...card, name: 'x' } },
        { card: { ...card, exp_month: 13 } },
      ]) {
        assertError(await t.request('POST', url, { body }), 400, 'invalid_request', JSON.stringify(body));
      }
      // The sandbox takes cards, not Stripe PaymentMethods.
      assertError(
        await t.request('POST', url, { body: { payment_method: 'pm_card_visa' } }),
        400,
        'invalid_request',
      );
      assertError(await pay(t, 'shr_doesnotexist'), 404, 'share_not_found');
    });

    test('a paid share is 409 share_not_pending and is not charged twice', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben']);
      await payOk(t, g.shares[0].shareId);
      const objects = await sandboxObjects();
      const again = await pay(t, g.shares[0].shareId);
      assertError(again, 409, 'share_not_pending');
      assert.equal(await sandboxObjects(), objects);
    });

    test('a share of nothing (the organizer under host-pays) is 409 saying there is nothing to pay', async () => {
      const created = await createSession(t);
      const put = await t.request('PUT', `/api/v1/session/group?access=${organizerToken(created)}`, {
        body: { mode: 'host-pays', members: [{ name: 'Org' }, { name: 'Ben', amount_cents: 10_000 }] },
      });
      assert.equal(put.status, 200, put.text);
      const mine = put.body.group.members[0];
      assert.equal(mine.amount_cents, 0);
      for (const when of [
        'before the group is complete',
        'once it is funded (a share of nothing counts as paid)',
      ]) {
        if (when.startsWith('once')) await payOk(t, put.body.group.members[1].share_id);
        const objects = await sandboxObjects();
        const res = await pay(t, mine.share_id);
        assertError(res, 409, 'share_not_pending');
        assert.match(res.body.error, /nothing to pay/, when);
        assert.doesNotMatch(res.body.error, /already paid/, when);
        assert.equal(await sandboxObjects(), objects);
      }
    });

    test('the card number never reaches the database or the log', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben']);
      await payOk(t, g.shares[0].shareId, '4000056655665556');
      const log = t.logLines.join('\n');
      assert.ok(!log.includes('4000056655665556'));
      for (const table of [
        'attempts',
        'sandbox_operations',
        'ledger_lines',
        'events',
        'members',
        'idempotency_keys',
      ] as const) {
        const rows = await t.deps.db.kysely.selectFrom(table).selectAll().execute();
        assert.ok(!JSON.stringify(rows).includes('4000056655665556'), table);
        assert.ok(!JSON.stringify(rows).includes('5665565'), `${table}: no run of the number`);
      }
    });

    test('Idempotency-Key: a retried payment replays the answer and charges once', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben']);
      const headers = { 'idempotency-key': `pay-${g.shares[0].shareId}` };
      const first = await pay(t, g.shares[0].shareId, CARDS.ok, headers);
      assert.equal(first.status, 200, first.text);
      const objects = await sandboxObjects();
      const second = await pay(t, g.shares[0].shareId, CARDS.ok, headers);
      assert.equal(second.status, 200);
      assert.equal(second.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(second.body, first.body);
      assert.equal(await sandboxObjects(), objects);
    });

    test('reconcile is clean after the suite: ledger, statuses and processor agree', async () => {
      await assertReconciled(t);
    });
  });
}
