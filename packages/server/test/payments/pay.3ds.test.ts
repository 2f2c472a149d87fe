// 3-D Secure in the sandbox (docs/api.md#3-d-secure): card 4000002500003155 asks the payer to authenticate.
// The pay answer is the share authenticating with next_action; the sandbox's step completes or fails it;
// refresh (or the processor-events worker) records it; an abandoned authentication is given up after
// PAYMENT_AUTH_TIMEOUT_MS; cancel gives it up at once; the group is not re-split around the member.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { handleDueProcessorEvents } from '../../src/flows/processor-events.ts';
import { settleDueSessions } from '../../src/jobs/settle.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { manualClock } from '../helpers/clock.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { assertError } from '../helpers/errors.ts';
import { authenticate, CARDS, equalGroup, merchantSession, pay, payOk } from '../helpers/payments.ts';
import { assertReconciled } from '../helpers/reconcile.ts';
import { eventRows, organizerToken, SESSION_ENV } from '../helpers/sessions.ts';

const AUTH_TIMEOUT_MS = 60_000;

for (const dialect of DIALECTS) {
  describe(`3-D Secure in the sandbox on ${dialect.name}`, { skip: dialect.skip }, () => {
    const clock = manualClock(Date.now());
    let t: TestApp;
    before(async () => {
      t = await startTestApp(dialect, {
        clock,
        env: { ...SESSION_ENV, PAYMENT_AUTH_TIMEOUT_MS: String(AUTH_TIMEOUT_MS) },
      });
    });
    after(async () => {
      await assertReconciled(t);
      await t?.close();
    });

    const share = (shareId: string) => t.request('GET', `/api/v1/shares/${shareId}`);
    const sandboxState = async (id: string) =>
      (
        await t.deps.db.kysely
          .selectFrom('sandbox_operations')
          .select('state')
          .where('id', '=', id)
          .executeTakeFirstOrThrow()
      ).state;

    test('the pay answer is the share authenticating, with the client secret; nothing is charged until it is completed', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben']);
      const ben = g.shares[1];
      const res = await payOk(t, ben.shareId, CARDS.authenticates);
      assert.equal(res.body.status, 'authenticating');
      assert.equal(res.body.member.status, 'authenticating');
      assert.equal(res.body.next_action.type, 'authenticate');
      assert.match(res.body.next_action.client_secret, /^ch_\w+_secret_\w+$/);
      // A page opened again (or reloaded) finds the same step to complete.
      const again = await share(ben.shareId);
      assert.deepEqual(again.body.next_action, res.body.next_action);
      const view = await merchantSession(t, g.created.session_id);
      assert.equal(view.group.members[1].status, 'authenticating');
      assert.equal(view.group.paid_amount, 0, 'an authentication is not a payment');
      assert.deepEqual(view.charges, []);
      assert.deepEqual(
        (await eventRows(t, g.created.session_id)).map((e) => e.type),
        ['group.created'],
        'no event until the payment is decided',
      );

      const done = await authenticate(t, ben.shareId, res.body.next_action.client_secret, 'succeed');
      assert.equal(done.status, 200, done.text);
      assert.equal(done.body.status, 'paid');
      assert.equal(done.body.next_action, null);
      assert.equal(done.body.payment.card_last4, '3155');
      assert.equal(await sandboxState(done.body.payment.id), 'succeeded');
      assert.deepEqual(
        (await eventRows(t, g.created.session_id)).map((e) => e.type),
        ['group.created', 'group.share_paid'],
      );
      // The last share funds the group as usual.
      await payOk(t, g.shares[0].shareId);
      assert.equal((await merchantSession(t, g.created.session_id)).status, 'funded');
    });

    test('under on_funded a completed authentication places the hold: authorized', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben'], { group_config: { capture: 'on_funded' } });
      const res = await payOk(t, g.shares[1].shareId, CARDS.authenticates);
      assert.equal(res.body.status, 'authenticating');
      const done = await authenticate(t, g.shares[1].shareId, res.body.next_action.client_secret, 'succeed');
      assert.equal(done.body.status, 'authorized');
      assert.equal(await sandboxState(done.body.payment.id), 'authorized');
      await payOk(t, g.shares[0].shareId);
      const view = await merchantSession(t, g.created.session_id);
      assert.equal(view.status, 'funded');
      assert.deepEqual(
        view.group.members.map((m: { status: string }) => m.status),
        ['paid', 'paid'],
      );
    });

    test('a failed authentication leaves the share pending with a sentence, and another card pays it', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben']);
      const ben = g.shares[1].shareId;
      const res = await payOk(t, ben, CARDS.authenticates);
      const failed = await authenticate(t, ben, res.body.next_action.client_secret, 'fail');
      assert.equal(failed.status, 200, failed.text);
      assert.equal(failed.body.status, 'pending');
      assert.match(failed.body.failure, /bank could not confirm/);
      assert.equal(failed.body.next_action, null);
      assert.deepEqual(
        (await eventRows(t, g.created.session_id)).map((e) => e.type),
        ['group.created'],
      );
      const paid = await payOk(t, ben);
      assert.equal(paid.body.status, 'paid');
      assert.equal(paid.body.failure, null);
    });

    test('while a member authenticates, paying again is payment_in_progress and the group is not re-split around them', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben', 'Cy']);
      const ben = g.shares[1];
      const res = await payOk(t, ben.shareId, CARDS.authenticates);
      assertError(await pay(t, ben.shareId), 409, 'payment_in_progress');
      const access = organizerToken(g.created);
      const without = await t.request('PUT', `/api/v1/session/group?access=${access}`, {
        body: {
          mode: 'equal',
          members: [
            { id: g.shares[0].id, name: 'Ada' },
            { id: g.shares[2].id, name: 'Cy' },
          ],
        },
      });
      assertError(without, 400, 'invalid_group');
      assert.match(JSON.stringify(without.body), /Ben is paying right now \(confirming it with their bank\)/);
      // Re-split around Ben: his share is fixed, the others change.
      const resplit = await t.request('PUT', `/api/v1/session/group?access=${access}`, {
        body: {
          mode: 'custom',
          members: [
            { id: g.shares[0].id, name: 'Ada', amount_cents: 10_000 - ben.amount - 1000 },
            { id: ben.id, name: 'Ben', amount_cents: ben.amount },
            { id: g.shares[2].id, name: 'Cy', amount_cents: 1000 },
          ],
        },
      });
      assert.equal(resplit.status, 200, resplit.text);
      const changedBen = await t.request('PUT', `/api/v1/session/group?access=${access}`, {
        body: {
          mode: 'custom',
          members: [
            { id: g.shares[0].id, name: 'Ada', amount_cents: 10_000 - ben.amount - 1001 },
            { id: ben.id, name: 'Ben', amount_cents: ben.amount + 1 },
            { id: g.shares[2].id, name: 'Cy', amount_cents: 1000 },
          ],
        },
      });
      assert.equal(changedBen.status >= 400, true, 'an authenticating share keeps its amount');
      const done = await authenticate(t, ben.shareId, res.body.next_action.client_secret, 'succeed');
      assert.equal(done.body.amount_cents, ben.amount);
    });

    test('the processor-events worker records an authentication the page never came back from', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben']);
      const ben = g.shares[1].shareId;
      const res = await payOk(t, ben, CARDS.authenticates);
      const done = await t.request('POST', '/api/v1/sandbox/authenticate', {
        body: { client_secret: res.body.next_action.client_secret, outcome: 'succeed' },
      });
      assert.equal(done.status, 200, done.text);
      assert.equal((await share(ben)).body.status, 'authenticating', 'not recorded until asked');
      await handleDueProcessorEvents(t.deps);
      assert.equal((await share(ben)).body.status, 'paid');
      // The event is taken once: another round changes nothing.
      assert.equal(await handleDueProcessorEvents(t.deps), 0);
    });

    test('an authentication abandoned past PAYMENT_AUTH_TIMEOUT_MS is cancelled at the processor; the share is pending again', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben']);
      const ben = g.shares[1].shareId;
      const res = await payOk(t, ben, CARDS.authenticates);
      const secret = res.body.next_action.client_secret;
      clock.advance(AUTH_TIMEOUT_MS - 1000);
      await settleDueSessions(t.deps);
      assert.equal((await share(ben)).body.status, 'authenticating', 'the payer still has time');
      clock.advance(2000);
      await settleDueSessions(t.deps);
      const now = await share(ben);
      assert.equal(now.body.status, 'pending');
      assert.match(now.body.failure, /not completed in time/);
      // Too late to complete it: the sandbox cancelled the payment.
      const late = await t.request('POST', '/api/v1/sandbox/authenticate', {
        body: { client_secret: secret, outcome: 'succeed' },
      });
      assertError(late, 404, 'authentication_not_found');
      assert.equal((await payOk(t, ben)).body.status, 'paid');
    });

    test('cancelling the session gives up an open authentication at once, then writes group.cancelled', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben', 'Cy']);
      await payOk(t, g.shares[0].shareId);
      const res = await payOk(t, g.shares[1].shareId, CARDS.authenticates);
      const cancelled = await t.request('POST', `/v1/sessions/${g.created.session_id}/cancel`, {
        key: t.merchant.secretKey,
      });
      assert.equal(cancelled.status, 200, cancelled.text);
      await settleDueSessions(t.deps);
      const view = await merchantSession(t, g.created.session_id);
      assert.equal(view.status, 'cancelled');
      assert.deepEqual(
        view.group.members.map((m: { status: string }) => m.status),
        ['refunded', 'pending', 'pending'],
      );
      // Ben is told why nothing was taken: the group closed, not a check he can finish by paying again.
      const ben = await share(g.shares[1].shareId);
      assert.equal(
        ben.body.failure,
        "The group was cancelled before your bank's check was completed, so the card was not charged.",
      );
      assertError(
        await t.request('POST', '/api/v1/sandbox/authenticate', {
          body: { client_secret: res.body.next_action.client_secret, outcome: 'succeed' },
        }),
        404,
        'authentication_not_found',
      );
      const types = (await eventRows(t, g.created.session_id)).map((e) => e.type);
      assert.deepEqual(types, [
        'group.created',
        'group.share_paid',
        'group.share_refunded',
        'group.cancelled',
      ]);
    });

    test('an authenticating answer is never kept against the Idempotency-Key: the same key runs again', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben']);
      const ben = g.shares[1].shareId;
      const headers = { 'idempotency-key': `3ds-${Date.now()}` };
      const first = await pay(t, ben, CARDS.authenticates, headers);
      assert.equal(first.status, 200, first.text);
      assert.equal(first.headers.get('idempotent-replayed'), null);
      const second = await pay(t, ben, CARDS.authenticates, headers);
      assertError(second, 409, 'payment_in_progress');
      assert.equal(second.headers.get('idempotent-replayed'), null, 'run again, not replayed');
      await authenticate(t, ben, first.body.next_action.client_secret, 'succeed');
    });

    test('the authenticate helper refuses a client secret nobody waits on, and a bad outcome', async () => {
      assertError(
        await t.request('POST', '/api/v1/sandbox/authenticate', {
          body: { client_secret: 'ch_nothing_secret_nothing', outcome: 'succeed' },
        }),
        404,
        'authentication_not_found',
      );
      assertError(
        await t.request('POST', '/api/v1/sandbox/authenticate', {
          body: { client_secret: 'x', outcome: 'maybe' },
        }),
        400,
        'invalid_request',
      );
      // refresh of a share with nothing to authenticate answers it as it is.
      const g = await equalGroup(t, ['Ada', 'Ben']);
      const refreshed = await t.request('POST', `/api/v1/shares/${g.shares[1].shareId}/refresh`);
      assert.equal(refreshed.status, 200, refreshed.text);
      assert.equal(refreshed.body.status, 'pending');
      assertError(await t.request('POST', '/api/v1/shares/shr_unknown/refresh'), 404, 'share_not_found');
    });
  });
}

describe('3-D Secure helpers in production', () => {
  test('POST /api/v1/sandbox/authenticate is 404', async () => {
    const t = await startTestApp(DIALECTS[0] as (typeof DIALECTS)[0], {
      env: { ...SESSION_ENV, SERVICE_ENV: 'production' },
    });
    try {
      assertError(
        await t.request('POST', '/api/v1/sandbox/authenticate', {
          body: { client_secret: 'x', outcome: 'succeed' },
        }),
        404,
        'route_not_found',
      );
    } finally {
      await t.close();
    }
  });
});
