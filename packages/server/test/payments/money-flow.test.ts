// The money flow end to end over HTTP (docs/api.md#capture-modes): both capture modes funded, cancelled
// (by the merchant and by the organizer) and expired; a capture that fails; the organizer covering the
// rest; refunds retried until they succeed; the transfer with and without the FX fee.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { settleDueSessions } from '../../src/jobs/settle.ts';
import type { PaymentProcessor } from '../../src/processor/types.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import type { DialectCase } from '../helpers/databases.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { assertError } from '../helpers/errors.ts';
import { CARDS, equalGroup, merchantSession, pay, payOk } from '../helpers/payments.ts';
import { assertReconciled } from '../helpers/reconcile.ts';
import { createSession, eventRows, organizerToken, SESSION_ENV } from '../helpers/sessions.ts';

const types = async (t: TestApp, sessionId: string) => (await eventRows(t, sessionId)).map((e) => e.type);
const cancelByMerchant = (t: TestApp, id: string) =>
  t.request('POST', `/v1/sessions/${id}/cancel`, { key: t.merchant.secretKey });
const expireNow = (t: TestApp, id: string) =>
  t.request('POST', `/v1/test_helpers/sessions/${id}/expire`, { key: t.merchant.secretKey });

for (const dialect of DIALECTS) {
  describe(`money flow on ${dialect.name}`, { skip: dialect.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(dialect, { env: SESSION_ENV });
    });
    after(() => t?.close());

    test('immediate: three pay, one after a decline; funded with three charges and one transfer of total − merchant fee', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben', 'Cy']);
      assertError(await pay(t, g.shares[1].shareId, CARDS.declined), 402, 'card_declined');
      for (const s of g.shares) await payOk(t, s.shareId);
      const view = await merchantSession(t, g.created.session_id);
      assert.equal(view.status, 'funded');
      assert.equal(view.charges.length, 3);
      assert.match(view.transfer, /^tr_[0-9A-Za-z]+$/);
      assert.deepEqual(view.refunds, []);
      assert.deepEqual(
        view.group.members.map((m: { status: string }) => m.status),
        ['paid', 'paid', 'paid'],
      );
      // 10,000 at 0.0201: the merchant fee is 201, the transfer 9,799.
      const transfer = await t.deps.db.kysely
        .selectFrom('attempts')
        .selectAll()
        .where('session_id', '=', g.created.session_id)
        .where('kind', '=', 'transfer')
        .execute();
      assert.equal(transfer.length, 1);
      assert.equal(transfer[0]?.amount_cents, 9_799);
      assert.deepEqual(await types(t, g.created.session_id), [
        'group.created',
        'group.share_paid',
        'group.share_paid',
        'group.share_paid',
        'group.funded',
      ]);
      const rows = await eventRows(t, g.created.session_id);
      const funded = rows.at(-1)?.payload;
      assert.equal(funded.data.status, 'funded');
      assert.equal(funded.data.paid_amount, 10_000);
      assert.deepEqual(funded.data.charges, view.charges);
      assert.equal(funded.data.member, undefined, 'group.funded is about the group, not one member');
      // Each share's event shows the session after that payment: the last one is the one that funded it.
      assert.deepEqual(
        rows.slice(1, 4).map((row) => [row.payload.data.status, row.payload.data.pending_amount]),
        [
          ['pending', 10_000 - (g.shares[0]?.amount ?? 0)],
          ['pending', g.shares[2]?.amount],
          ['funded', 0],
        ],
      );
      assert.equal(rows[3]?.payload.data.member.status, 'paid');
      // A funded session takes no more payments or cancels.
      assertError(await cancelByMerchant(t, g.created.session_id), 409, 'session_not_pending');
    });

    test('the transfer takes the FX fee when the merchant is paid out in another currency', async () => {
      const merchant = await t.createMerchant({ name: 'Euro Shop', payoutCurrency: 'eur' });
      await t.deps.db.kysely
        .updateTable('merchants')
        .set({ payout_mode: 'preferred' })
        .where('id', '=', merchant.merchant.id)
        .execute();
      const created = await createSession(t, { merchant });
      const res = await t.request('PUT', `/api/v1/session/group?access=${organizerToken(created)}`, {
        body: { mode: 'equal', members: [{ name: 'Ada' }, { name: 'Ben' }] },
      });
      for (const m of res.body.group.members) await payOk(t, m.share_id);
      const transfer = await t.deps.db.kysely
        .selectFrom('attempts')
        .selectAll()
        .where('session_id', '=', created.session_id)
        .where('kind', '=', 'transfer')
        .executeTakeFirstOrThrow();
      // 10,000 − 201 (merchant fee at 0.0201) − 100 (FX at 0.01), in the checkout currency.
      assert.equal(transfer.amount_cents, 9_699);
      assert.equal(transfer.currency, 'usd');
      assert.equal(transfer.state, 'succeeded');
    });

    for (const who of ['merchant', 'organizer'] as const) {
      test(`immediate, cancelled by the ${who} after one payment: that payment is refunded in full, then group.cancelled`, async () => {
        const g = await equalGroup(t, ['Ada', 'Ben']);
        const paid = await payOk(t, g.shares[0].shareId);
        const res =
          who === 'merchant'
            ? await cancelByMerchant(t, g.created.session_id)
            : await t.request('POST', `/api/v1/session/cancel?access=${organizerToken(g.created)}`);
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.status, 'cancelled');
        assert.equal(res.body.refunds.length, 1);
        const [refund] = res.body.refunds;
        assert.equal(refund.member_id, g.shares[0].id);
        assert.equal(refund.amount_cents, 5_050, 'share + consumer fee');
        assert.equal(refund.status, 'succeeded');
        assert.match(refund.id, /^re_[0-9A-Za-z]+$/);
        const view = await merchantSession(t, g.created.session_id);
        assert.deepEqual(view.refunds, res.body.refunds);
        assert.deepEqual(view.charges, [paid.body.payment.id]);
        assert.deepEqual(
          view.group.members.map((m: { status: string }) => m.status),
          ['refunded', 'pending'],
        );
        assert.equal(view.group.paid_amount, 0);
        assert.deepEqual(await types(t, g.created.session_id), [
          'group.created',
          'group.share_paid',
          'group.share_refunded',
          'group.cancelled',
        ]);
        assertError(await pay(t, g.shares[1].shareId), 409, 'session_not_pending');
      });
    }

    test('immediate, expired with paid shares: refunded, then group.expired', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben', 'Cy']);
      await payOk(t, g.shares[0].shareId);
      await payOk(t, g.shares[2].shareId);
      const res = await expireNow(t, g.created.session_id);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(
        res.body.refunds.map((r: { status: string }) => r.status),
        ['succeeded', 'succeeded'],
      );
      const view = await merchantSession(t, g.created.session_id);
      assert.equal(view.status, 'expired');
      assert.deepEqual(
        view.group.members.map((m: { status: string }) => m.status),
        ['refunded', 'pending', 'refunded'],
      );
      assert.equal((await types(t, g.created.session_id)).at(-1), 'group.expired');
    });

    test('on_funded: holds until the last share, then every hold captured and the session funded', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben', 'Cy'], { group_config: { capture: 'on_funded' } });
      const first = await payOk(t, g.shares[0].shareId);
      assert.equal(first.body.member.status, 'authorized');
      assert.equal(first.body.payment.kind, 'authorize');
      let view = await merchantSession(t, g.created.session_id);
      assert.deepEqual(view.charges, [], 'a hold is not a charge');
      assert.equal(view.group.paid_amount, 3_334, 'authorized shares count as paid');
      await payOk(t, g.shares[1].shareId);
      await payOk(t, g.shares[2].shareId);
      view = await merchantSession(t, g.created.session_id);
      assert.equal(view.status, 'funded');
      assert.deepEqual(
        view.group.members.map((m: { status: string }) => m.status),
        ['paid', 'paid', 'paid'],
      );
      assert.equal(view.charges.length, 3);
      assert.match(view.transfer, /^tr_/);
      assert.deepEqual(await types(t, g.created.session_id), [
        'group.created',
        'group.share_paid',
        'group.share_paid',
        'group.share_paid',
        'group.funded',
      ]);
    });

    test('on_funded, cancelled after one payment: the hold is released, nobody is charged, no refund', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben'], { group_config: { capture: 'on_funded' } });
      const hold = (await payOk(t, g.shares[0].shareId)).body.payment.id;
      const res = await cancelByMerchant(t, g.created.session_id);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body.refunds, []);
      const view = await merchantSession(t, g.created.session_id);
      assert.deepEqual(view.charges, []);
      assert.deepEqual(
        view.group.members.map((m: { status: string }) => m.status),
        ['released', 'pending'],
      );
      // At the processor, the hold was let go: never captured.
      assert.equal((await t.deps.processor.lookup('authorize', hold))?.state, 'released');
      assert.deepEqual(await types(t, g.created.session_id), [
        'group.created',
        'group.share_paid',
        'group.cancelled',
      ]);
    });

    test('on_funded, expired: holds released, then group.expired', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben'], { group_config: { capture: 'on_funded' } });
      await payOk(t, g.shares[1].shareId);
      await expireNow(t, g.created.session_id);
      const view = await merchantSession(t, g.created.session_id);
      assert.deepEqual(
        view.group.members.map((m: { status: string }) => m.status),
        ['pending', 'released'],
      );
      assert.equal((await types(t, g.created.session_id)).at(-1), 'group.expired');
    });

    test('on_funded, a capture fails: that member is pending again with the reason, group.share_failed; paying again funds', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben'], { group_config: { capture: 'on_funded' } });
      await payOk(t, g.shares[0].shareId);
      const last = await payOk(t, g.shares[1].shareId, CARDS.failsAtCapture);
      assert.equal(last.body.member.status, 'authorized', 'the hold itself succeeded');
      let view = await merchantSession(t, g.created.session_id);
      assert.equal(view.status, 'pending');
      assert.deepEqual(
        view.group.members.map((m: { status: string }) => m.status),
        ['paid', 'pending'],
      );
      assert.equal(view.charges.length, 1, 'the captured share stays paid');
      const share = await t.request('GET', `/api/v1/shares/${g.shares[1].shareId}`);
      assert.match(share.body.failure, /declined/);
      assert.ok((await types(t, g.created.session_id)).includes('group.share_failed'));
      await payOk(t, g.shares[1].shareId);
      view = await merchantSession(t, g.created.session_id);
      assert.equal(view.status, 'funded');
      assert.equal(view.charges.length, 2);
      assert.match(view.transfer, /^tr_/);
    });

    test('on_funded, the first capture fails: every other hold is still captured, and the new hold of the member who pays again too', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben', 'Cy'], { group_config: { capture: 'on_funded' } });
      // Ada's card holds but is refused at capture; hers is the first capture tried.
      await payOk(t, g.shares[0].shareId, CARDS.failsAtCapture);
      await payOk(t, g.shares[1].shareId);
      await payOk(t, g.shares[2].shareId);
      let view = await merchantSession(t, g.created.session_id);
      assert.equal(view.status, 'pending');
      assert.deepEqual(
        view.group.members.map((m: { status: string }) => m.status),
        ['pending', 'paid', 'paid'],
        'Ben and Cy are captured although Ada’s capture was declined',
      );
      assert.equal(view.charges.length, 2);
      assert.equal(view.group.pending_amount, g.shares[0].amount);
      await payOk(t, g.shares[0].shareId);
      view = await merchantSession(t, g.created.session_id);
      assert.equal(view.status, 'funded');
      assert.equal(view.charges.length, 3);
      assert.deepEqual(await types(t, g.created.session_id), [
        'group.created',
        'group.share_paid',
        'group.share_paid',
        'group.share_paid',
        'group.share_failed',
        'group.share_paid',
        'group.funded',
      ]);
    });

    test('on_funded, a capture fails and the session expires: the captured share is refunded', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben'], { group_config: { capture: 'on_funded' } });
      await payOk(t, g.shares[0].shareId);
      await payOk(t, g.shares[1].shareId, CARDS.failsAtCapture);
      const res = await expireNow(t, g.created.session_id);
      assert.deepEqual(
        res.body.refunds.map((r: { member_id: string; status: string; amount_cents: number }) => [
          r.member_id,
          r.status,
          r.amount_cents,
        ]),
        [[g.shares[0].id, 'succeeded', 5_050]],
      );
      const view = await merchantSession(t, g.created.session_id);
      assert.deepEqual(
        view.group.members.map((m: { status: string }) => m.status),
        ['refunded', 'pending'],
      );
    });

    test('on_funded with expiry_hours above 144 is a 400 that says why', async () => {
      const res = await t.request('POST', '/v1/sessions', {
        key: t.merchant.secretKey,
        body: {
          cart: { total: 1000, currency: 'usd', items: [{ name: 'x', quantity: 1, unit_price: 1000 }] },
          group_config: { capture: 'on_funded', expiry_hours: 145 },
        },
      });
      assertError(res, 400, 'invalid_request');
      assert.match(res.body.error, /144/);
      assert.match(res.body.error, /hold/);
      const ok = await t.request('POST', '/v1/sessions', {
        key: t.merchant.secretKey,
        body: {
          cart: { total: 1000, currency: 'usd', items: [{ name: 'x', quantity: 1, unit_price: 1000 }] },
          group_config: { capture: 'on_funded', expiry_hours: 144 },
        },
      });
      assert.equal(ok.status, 200, ok.text);
    });

    for (const capture of ['immediate', 'on_funded'] as const) {
      test(`${capture}: the organizer covers the rest after paying, with a new share of theirs; paying it funds`, async () => {
        const g = await equalGroup(t, ['Ada', 'Ben', 'Cy'], { group_config: { capture } });
        await payOk(t, g.shares[0].shareId);
        const res = await t.request('POST', `/api/v1/session/cover?access=${organizerToken(g.created)}`);
        assert.equal(res.status, 200, res.text);
        const members = res.body.group.members;
        assert.equal(members.length, 2);
        assert.equal(members[0].id, g.shares[0].id);
        assert.equal(members[1].name, 'Ada');
        assert.equal(members[1].amount_cents, 6_666);
        assert.equal(members[1].status, 'pending');
        // The covered members' links are gone.
        assertError(await pay(t, g.shares[1].shareId), 404, 'share_not_found');
        await payOk(t, members[1].share_id);
        const view = await merchantSession(t, g.created.session_id);
        assert.equal(view.status, 'funded');
        assert.equal(view.group.paid_amount, 10_000);
      });
    }

    test('a second cover adds to the share of theirs still to pay; a set-up keeps it the organizer’s', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben']);
      await payOk(t, g.shares[0].shareId);
      const first = await t.request('POST', `/api/v1/session/cover?access=${organizerToken(g.created)}`);
      assert.equal(first.status, 200, first.text);
      const [paid, second] = first.body.group.members as { id: string; is_organizer: boolean }[];
      // The group again, with a new member beside the organizer's second share (it stands second).
      const put = await t.request('PUT', `/api/v1/session/group?access=${organizerToken(g.created)}`, {
        body: {
          mode: 'equal',
          members: [{ id: paid?.id, name: 'Ada' }, { id: second?.id, name: 'Ada' }, { name: 'Eve' }],
        },
      });
      assert.equal(put.status, 200, put.text);
      const shape = (members: { amount_cents: number; status: string; is_organizer: boolean }[]) =>
        members.map((m) => [m.amount_cents, m.status, m.is_organizer]);
      assert.deepEqual(shape(put.body.group.members), [
        [5_000, 'paid', true],
        [2_500, 'pending', true],
        [2_500, 'pending', false],
      ]);
      const read = await t.request('GET', `/api/v1/session?access=${organizerToken(g.created)}`);
      assert.deepEqual(
        shape(read.body.group.members),
        shape(put.body.group.members),
        'the answer is the group',
      );
      const again = await t.request('POST', `/api/v1/session/cover?access=${organizerToken(g.created)}`);
      assert.equal(again.status, 200, again.text);
      assert.deepEqual(shape(again.body.group.members), [
        [5_000, 'paid', true],
        [5_000, 'pending', true],
      ]);
      await payOk(t, again.body.group.members[1].share_id);
      assert.equal((await merchantSession(t, g.created.session_id)).status, 'funded');
    });

    test('cover before the organizer paid: their own share takes the others; a group token may not cover', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben', 'Cy']);
      await payOk(t, g.shares[1].shareId);
      assertError(
        await t.request('POST', `/api/v1/session/cover?access=${g.created.group_access_token}`),
        403,
        'organizer_only',
      );
      const res = await t.request('POST', `/api/v1/session/cover?access=${organizerToken(g.created)}`);
      assert.deepEqual(
        res.body.group.members.map((m: { amount_cents: number; status: string }) => [
          m.amount_cents,
          m.status,
        ]),
        [
          [6_667, 'pending'],
          [3_333, 'paid'],
        ],
      );
      assert.equal(res.body.group.mode, 'custom');
    });

    test('reconcile is clean after the suite: ledger, statuses and processor agree', async () => {
      await assertReconciled(t);
    });
  });
}

/** A sandbox processor whose refunds fail `times` times before they succeed. */
function failingRefunds(times: number) {
  let failures = 0;
  return (processor: PaymentProcessor): PaymentProcessor => ({
    ...processor,
    async refund(request) {
      if (failures < times) {
        failures++;
        return { status: 'failed', message: 'the card network is down' };
      }
      return processor.refund(request);
    },
  });
}

async function refundRetries(dialect: DialectCase) {
  const { manualClock } = await import('../helpers/clock.ts');
  const clock = manualClock(Date.now());
  const t = await startTestApp(dialect, { env: SESSION_ENV, clock, wrapProcessor: failingRefunds(2) });
  try {
    const g = await equalGroup(t, ['Ada', 'Ben']);
    await payOk(t, g.shares[0].shareId);
    const res = await cancelByMerchant(t, g.created.session_id);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      res.body.refunds.map((r: { status: string; id: string | null }) => [r.status, r.id]),
      [['failed', null]],
    );
    // No group.cancelled until the money is back.
    assert.ok(!(await types(t, g.created.session_id)).includes('group.cancelled'));
    // Not retried before its delay…
    await settleDueSessions(t.deps);
    assert.equal((await merchantSession(t, g.created.session_id)).refunds[0].status, 'failed');
    // …then retried: the second try fails too, the third succeeds.
    clock.advance(5_000);
    await settleDueSessions(t.deps);
    clock.advance(30_000);
    await settleDueSessions(t.deps);
    const view = await merchantSession(t, g.created.session_id);
    assert.equal(view.refunds[0].status, 'succeeded');
    assert.match(view.refunds[0].id, /^re_/);
    assert.equal(view.group.members[0].status, 'refunded');
    const refunds = await t.deps.db.kysely
      .selectFrom('attempts')
      .select(['state', 'idempotency_key'])
      .where('session_id', '=', g.created.session_id)
      .where('kind', '=', 'refund')
      .execute();
    assert.deepEqual(
      refunds.map((r) => r.state),
      ['failed', 'failed', 'succeeded'],
    );
    assert.equal(new Set(refunds.map((r) => r.idempotency_key)).size, 3, 'each try has its own key');
    assert.deepEqual((await types(t, g.created.session_id)).slice(-2), [
      'group.share_refunded',
      'group.cancelled',
    ]);
    await assertReconciled(t);
  } finally {
    await t.close();
  }
}

for (const dialect of DIALECTS) {
  test(
    `a refund that fails is retried until it succeeds, then group.cancelled (${dialect.name})`,
    { skip: dialect.skip },
    () => refundRetries(dialect),
  );
}
