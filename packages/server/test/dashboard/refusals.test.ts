// What the dashboard answers when a flow refuses a change (docs/dashboard.md#pages): the API's status for
// the same refusal (one table, STATUS_OF in errors.ts), with the refusal's words on a page; never a 500.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import { HOUR_MS, manualClock } from '../helpers/clock.ts';
import { change, dashboardUser, type SignedIn, signIn } from '../helpers/dashboard.ts';
import { startPagesApp } from '../helpers/pages.ts';
import { createSession, organizerToken } from '../helpers/sessions.ts';

describe('dashboard: refusals have the API’s status and words', () => {
  let t: TestApp;
  let s: SignedIn;
  const clock = manualClock(Date.parse('2026-11-12T09:00:00.000Z'));
  before(async () => {
    t = await startPagesApp({ clock });
    s = await signIn(t, await dashboardUser(t, 'developer'));
  });
  after(() => t?.close());

  test('a fourth reminder round is 409 reminder_limit_reached, as the API answers it', async () => {
    const created = await createSession(t, {
      via: 'secret',
      customer: { name: 'Ada', email: 'ada@example.com' },
    });
    const put = await t.request('PUT', `/api/v1/session/group?access=${organizerToken(created)}`, {
      body: { mode: 'equal', members: [{ name: 'Ada' }, { name: 'Ben', email: 'ben@example.com' }] },
    });
    assert.equal(put.status, 200, put.text);
    const remind = `/dashboard/sessions/${created.session_id}/remind`;
    for (let round = 1; round <= 3; round++) {
      const res = await change(t, s, remind);
      assert.equal(res.status, 303, `round ${round}: ${res.text}`);
      // A session reminds once an hour; the dashboard's session ends after 30 idle minutes.
      clock.advance(HOUR_MS + 1000);
      s = await signIn(t, await dashboardUser(t, 'developer'));
    }
    const fourth = await change(t, s, remind);
    assert.equal(fourth.status, 409, fourth.text);
    assert.match(fourth.text, /This session has sent its 3 rounds of reminders/);
    const api = await t.request('POST', `/v1/sessions/${created.session_id}/remind`, {
      key: t.merchant.secretKey,
    });
    assert.equal(api.status, fourth.status);
    assert.equal(api.body.code, 'reminder_limit_reached');
  });
});
