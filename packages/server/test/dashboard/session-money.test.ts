// A session's page tells its money as the API does (docs/dashboard.md#pages): a refund the processor took
// and later failed (sandbox card 4000000000005126) is failed with its reason, as GET /v1/sessions/{id}
// lists it, and the member's row says in the merchant's words what that means, not the payer's sentence;
// a declined payment is listed before any money has moved; a cancel's notice says what happens to paid
// shares (refunds, released holds) truthfully, and a notice is only ever one of ours.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { handleDueProcessorEvents } from '../../src/flows/processor-events.ts';
import type { TestApp } from '../helpers/app.ts';
import { manualClock } from '../helpers/clock.ts';
import { change, dashboardRequest, dashboardUser, type SignedIn, signIn } from '../helpers/dashboard.ts';
import { startPagesApp } from '../helpers/pages.ts';
import { CARDS, equalGroup, merchantSession, pay, payOk } from '../helpers/payments.ts';

/** The text of the section whose heading has this id, tags removed. */
const sectionText = (page: string, headingId: string) => {
  const match = new RegExp(`<h2 id="${headingId}">[\\s\\S]*?</section>`).exec(page);
  return (match?.[0] ?? '').replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
};

describe("dashboard: a session's money as the API tells it", () => {
  let t: TestApp;
  let s: SignedIn;
  const clock = manualClock(Date.now());
  before(async () => {
    t = await startPagesApp({ clock });
    s = await signIn(t, await dashboardUser(t, 'viewer'));
  });
  after(() => t?.close());

  const sessionPage = async (sessionId: string) => {
    const res = await dashboardRequest(t, 'GET', `/dashboard/sessions/${sessionId}`, { cookie: s.cookie });
    assert.equal(res.status, 200, res.text);
    return res.text;
  };

  test('a refund taken, then failed, is failed with its reason, and the member row speaks to the merchant', async () => {
    const g = await equalGroup(t, ['Ada', 'Ben']);
    const sessionId = g.created.session_id;
    await payOk(t, g.shares[1].shareId, CARDS.refundsFail);
    const cancel = await t.request('POST', `/v1/sessions/${sessionId}/cancel`, { key: t.merchant.secretKey });
    assert.equal(cancel.status, 200, cancel.text);
    assert.match(
      sectionText(await sessionPage(sessionId), 'refund-h'),
      /refund .* pending/,
      'taken: pending',
    );

    clock.advance(3_000);
    assert.equal(await handleDueProcessorEvents(t.deps), 1);
    const api = await merchantSession(t, sessionId);
    assert.equal(api.refunds[0].status, 'failed');
    assert.equal(api.refunds[0].failure_reason, 'expired_or_canceled_card');

    const page = await sessionPage(sessionId);
    const refunds = sectionText(page, 'refund-h');
    assert.match(refunds, new RegExp(api.refunds[0].id));
    assert.match(refunds, /failed expired_or_canceled_card/);
    assert.doesNotMatch(refunds, /pending/, 'the view does not contradict the API');
    const group = sectionText(page, 'group-h');
    assert.doesNotMatch(group, /could not reach your card|The shop has been told/, 'not the payer’s words');
    assert.match(group, /refund failed \(expired_or_canceled_card\)/i);
    assert.match(group, /must be returned to the payer another way/);
  });

  test('a declined payment is listed before any money moved, with its decline code', async () => {
    const g = await equalGroup(t, ['Ada', 'Ben']);
    const declined = await pay(t, g.shares[1].shareId, CARDS.declined);
    assert.equal(declined.status, 402, declined.text);
    const page = await sessionPage(g.created.session_id);
    const payments = sectionText(page, 'pay-h');
    assert.doesNotMatch(payments, /None\./);
    assert.match(payments, /charge .* declined generic_decline/);
    assert.match(payments, /visa ···· 0002/);
  });

  test('the cancel notice says paid shares are being returned, and the holds released are listed', async () => {
    const g = await equalGroup(t, ['Ada', 'Ben'], { group_config: { capture: 'on_funded' } });
    await payOk(t, g.shares[1].shareId);
    const owner = await signIn(t, await dashboardUser(t, 'owner'));
    const cancelled = await change(t, owner, `/dashboard/sessions/${g.created.session_id}/cancel`);
    assert.equal(cancelled.status, 303, cancelled.text);
    const page = await dashboardRequest(t, 'GET', cancelled.location as string, { cookie: owner.cookie });
    const notice = /<p class="notice"[^>]*>([^<]*)</.exec(page.text)?.[1] ?? '';
    assert.doesNotMatch(notice, /Paid shares are refunded/);
    assert.match(notice, /being returned/);
    assert.match(notice, /released/);
    assert.match(notice, /Refunds and releases/);
    assert.match(
      sectionText(page.text, 'refund-h'),
      /^ Refunds and releases .* release \S+ [\d.]+ USD succeeded/,
    );
  });

  test('a notice is one of ours or none: ?done= never reads the object prototype', async () => {
    for (const done of ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'nothing']) {
      const res = await dashboardRequest(t, 'GET', `/dashboard/sessions?done=${done}`, { cookie: s.cookie });
      assert.equal(res.status, 200, done);
      assert.doesNotMatch(res.text, /class="notice"/, done);
      assert.doesNotMatch(res.text, /native code|\[object/, done);
    }
    const ours = await dashboardRequest(t, 'GET', '/dashboard/sessions?done=deleted', { cookie: s.cookie });
    assert.match(ours.text, /class="notice"[^>]*>The endpoint was deleted/);
  });
});
