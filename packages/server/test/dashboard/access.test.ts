// The dashboard's sign-in and authorization over HTTP (docs/dashboard.md#signing-in): links by mail through
// a real SMTP server on loopback, answers that never tell whether an address is known, single-use and
// 15-minute links, the cookie's flags, the idle timeout, CSRF and Origin on every change, roles, another
// merchant's ids, sign-out.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import { MINUTE_MS, manualClock } from '../helpers/clock.ts';
import { change, dashboardRequest, dashboardUser, linkToken, signIn } from '../helpers/dashboard.ts';
import { startPagesApp } from '../helpers/pages.ts';
import { equalGroup, eventually, payOk } from '../helpers/payments.ts';
import { createSession } from '../helpers/sessions.ts';
import { type SmtpReceiver, startSmtpServer } from '../helpers/smtp.ts';

describe('dashboard: signing in and who may do what', () => {
  let t: TestApp;
  let smtp: SmtpReceiver;
  const clock = manualClock(Date.now());
  before(async () => {
    smtp = await startSmtpServer();
    t = await startPagesApp({ clock, env: { SMTP_URL: smtp.url } });
  });
  after(async () => {
    await t.close();
    await smtp.close();
  });

  const mailsTo = (email: string) => smtp.messages.filter((m) => m.to.includes(email));

  test('a known and an unknown address get the same answer; only the known one gets mail, with a working link', async () => {
    const owner = await dashboardUser(t, 'owner');
    const known = await dashboardRequest(t, 'POST', '/dashboard/sign-in/request', {
      form: { email: owner.email.toUpperCase() },
    });
    const unknown = await dashboardRequest(t, 'POST', '/dashboard/sign-in/request', {
      form: { email: 'nobody@shop.example' },
    });
    assert.equal(known.status, 200);
    assert.equal(unknown.status, 200);
    assert.equal(known.text, unknown.text);
    assert.match(known.text, /If this address belongs to a dashboard user, a sign-in link is on its way/);
    await eventually(async () => mailsTo(owner.email).length === 1);
    const mail = mailsTo(owner.email)[0];
    assert.match(mail?.subject ?? '', /Sign in to the Test Shop dashboard/);
    const url = /(http:\/\/\S+\/dashboard\/sign-in\?token=\S+)/.exec(mail?.text ?? '')?.[1];
    assert.ok(url, mail?.text);
    // Opening the link spends nothing (a mail scanner may open it); the form on its page signs in.
    const opened = await fetch(url);
    assert.equal(opened.status, 200);
    assert.match(await opened.text(), /Continue to the dashboard/);
    const token = new URL(url).searchParams.get('token') as string;
    const signed = await dashboardRequest(t, 'POST', '/dashboard/sign-in', { form: { token } });
    assert.equal(signed.status, 303);
    assert.equal(signed.location, '/dashboard/sessions');
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(mailsTo('nobody@shop.example').length, 0);
  });

  test('an address gets at most 5 links an hour, and the answer does not change past that', async () => {
    const user = await dashboardUser(t, 'viewer');
    for (let i = 0; i < 7; i++) {
      const res = await dashboardRequest(t, 'POST', '/dashboard/sign-in/request', {
        form: { email: user.email },
      });
      assert.equal(res.status, 200);
    }
    await eventually(async () => mailsTo(user.email).length === 5);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(mailsTo(user.email).length, 5);
  });

  test('a link request from another origin is refused', async () => {
    const res = await dashboardRequest(t, 'POST', '/dashboard/sign-in/request', {
      form: { email: 'x@shop.example' },
      origin: 'https://evil.example',
    });
    assert.equal(res.status, 403);
  });

  test('the cookie is HttpOnly, SameSite=Strict, Path=/ (no Secure over http on loopback)', async () => {
    const s = await signIn(t, await dashboardUser(t, 'owner'));
    assert.match(s.setCookie, /^gc_dashboard=dss_[A-Za-z0-9]+; Path=\/; HttpOnly; SameSite=Strict$/);
  });

  test('a used link and an expired link are refused', async () => {
    const user = await dashboardUser(t, 'owner');
    const token = await linkToken(t, user);
    assert.equal((await dashboardRequest(t, 'POST', '/dashboard/sign-in', { form: { token } })).status, 303);
    const again = await dashboardRequest(t, 'POST', '/dashboard/sign-in', { form: { token } });
    assert.equal(again.status, 410);
    assert.match(again.text, /used already, or it is more than 15 minutes old/);
    assert.equal(again.headers.get('set-cookie'), null);
    assert.equal((await dashboardRequest(t, 'GET', `/dashboard/sign-in?token=${token}`)).status, 410);

    const late = await linkToken(t, user);
    clock.advance(15 * MINUTE_MS + 1);
    assert.equal(
      (await dashboardRequest(t, 'POST', '/dashboard/sign-in', { form: { token: late } })).status,
      410,
    );
  });

  test('a session ends after 30 minutes without a request; requests within keep it alive', async () => {
    const s = await signIn(t, await dashboardUser(t, 'viewer'));
    clock.advance(20 * MINUTE_MS);
    assert.equal((await dashboardRequest(t, 'GET', '/dashboard/sessions', { cookie: s.cookie })).status, 200);
    clock.advance(20 * MINUTE_MS);
    assert.equal((await dashboardRequest(t, 'GET', '/dashboard/sessions', { cookie: s.cookie })).status, 200);
    clock.advance(31 * MINUTE_MS);
    const gone = await dashboardRequest(t, 'GET', '/dashboard/sessions', { cookie: s.cookie });
    assert.equal(gone.status, 303);
    assert.equal(gone.location, '/dashboard/sign-in');
  });

  test('without a session every page sends to sign-in and every change is 401', async () => {
    const page = await dashboardRequest(t, 'GET', '/dashboard/sessions');
    assert.equal(page.status, 303);
    assert.equal(page.location, '/dashboard/sign-in');
    const created = await createSession(t);
    const cancel = await dashboardRequest(t, 'POST', `/dashboard/sessions/${created.session_id}/cancel`, {
      form: { _csrf: 'csrf_x' },
    });
    assert.equal(cancel.status, 401);
  });

  test('pages carry the CSP, nosniff, no referrer to other sites and no framing', async () => {
    const res = await dashboardRequest(t, 'GET', '/dashboard/sign-in');
    assert.equal(res.status, 200);
    const csp = res.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.doesNotMatch(csp, /script-src/);
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(res.headers.get('referrer-policy'), 'same-origin');
    assert.equal(res.headers.get('cache-control'), 'no-store');
  });

  test('a change without the CSRF token, with a wrong one, or from another origin is 403 and changes nothing', async () => {
    const s = await signIn(t, await dashboardUser(t, 'owner'));
    const created = await createSession(t);
    const path = `/dashboard/sessions/${created.session_id}/cancel`;
    const none = await dashboardRequest(t, 'POST', path, { cookie: s.cookie, form: {} });
    const wrong = await dashboardRequest(t, 'POST', path, {
      cookie: s.cookie,
      // One character changed (a token ending in x would otherwise be left as it was).
      form: { _csrf: `${s.csrf.slice(0, -1)}${s.csrf.endsWith('x') ? 'y' : 'x'}` },
    });
    const foreign = await dashboardRequest(t, 'POST', path, {
      cookie: s.cookie,
      form: { _csrf: s.csrf },
      origin: 'https://evil.example',
    });
    const missing = await dashboardRequest(t, 'POST', path, {
      cookie: s.cookie,
      form: { _csrf: s.csrf },
      origin: null,
    });
    for (const res of [none, wrong, foreign, missing]) assert.equal(res.status, 403, res.text);
    const after = await t.request('GET', `/v1/sessions/${created.session_id}`, { key: t.merchant.secretKey });
    assert.equal(after.body.status, 'pending');
  });

  test("a viewer's change is 403; a developer may cancel but not change the team; an owner may", async () => {
    const viewer = await signIn(t, await dashboardUser(t, 'viewer'));
    const developer = await signIn(t, await dashboardUser(t, 'developer'));
    const owner = await signIn(t, await dashboardUser(t, 'owner'));
    const created = await createSession(t);
    const cancel = `/dashboard/sessions/${created.session_id}/cancel`;
    const refused = await change(t, viewer, cancel);
    assert.equal(refused.status, 403);
    assert.match(refused.text, /Viewers may read but not change anything/);
    assert.equal(
      (await t.request('GET', `/v1/sessions/${created.session_id}`, { key: t.merchant.secretKey })).body
        .status,
      'pending',
    );
    const done = await change(t, developer, cancel);
    assert.equal(done.status, 303);
    assert.equal(done.location, `/dashboard/sessions/${created.session_id}?done=cancelled`);
    assert.equal(
      (await t.request('GET', `/v1/sessions/${created.session_id}`, { key: t.merchant.secretKey })).body
        .status,
      'cancelled',
    );
    // Cancelled already: the API's 409, in words.
    assert.equal((await change(t, developer, cancel)).status, 409);

    const invite = { email: 'new.person@shop.example', role: 'viewer' };
    assert.equal((await change(t, viewer, '/dashboard/team/invite', invite)).status, 403);
    assert.equal((await change(t, developer, '/dashboard/team/invite', invite)).status, 403);
    const invited = await change(t, owner, '/dashboard/team/invite', invite);
    assert.equal(invited.status, 303);
    await eventually(async () => mailsTo('new.person@shop.example').length === 1);
    assert.match(mailsTo('new.person@shop.example')[0]?.text ?? '', /as viewer/);
    assert.match(mailsTo('new.person@shop.example')[0]?.text ?? '', /If you did not expect this invitation/);
    assert.equal((await change(t, owner, '/dashboard/team/invite', invite)).status, 409);
    assert.equal(
      (await change(t, owner, '/dashboard/team/invite', { email: 'not an address', role: 'viewer' })).status,
      400,
    );
    assert.equal(
      (await change(t, owner, '/dashboard/team/invite', { email: 'a@shop.example', role: 'admin' })).status,
      400,
    );
  });

  test("another merchant's session, event and teammate are 404, read or changed", async () => {
    const other = await t.createMerchant({ name: 'Other Shop' });
    const theirs = await equalGroup({ request: t.request, merchant: other }, ['Ann', 'Bob']);
    await payOk(t, theirs.shares[0].shareId);
    const events = await t.request('GET', `/v1/events?session_id=${theirs.created.session_id}`, {
      key: other.secretKey,
    });
    const eventId = events.body.data[0].id as string;
    const theirUser = await dashboardUser(t, 'viewer', other);
    const s = await signIn(t, await dashboardUser(t, 'owner'));
    const page = await dashboardRequest(t, 'GET', `/dashboard/sessions/${theirs.created.session_id}`, {
      cookie: s.cookie,
    });
    assert.equal(page.status, 404);
    assert.equal((await change(t, s, `/dashboard/sessions/${theirs.created.session_id}/cancel`)).status, 404);
    assert.equal((await change(t, s, `/dashboard/sessions/${theirs.created.session_id}/remind`)).status, 404);
    assert.equal((await change(t, s, `/dashboard/events/${eventId}/redeliver`)).status, 404);
    assert.equal((await change(t, s, `/dashboard/team/${theirUser.id}/remove`)).status, 404);
    const list = await dashboardRequest(t, 'GET', `/dashboard/sessions?q=${theirs.created.session_id}`, {
      cookie: s.cookie,
    });
    assert.match(list.text, /No sessions match/);
    const still = await t.request('GET', `/v1/sessions/${theirs.created.session_id}`, {
      key: other.secretKey,
    });
    assert.equal(still.body.status, 'pending');
  });

  test('an owner removes a teammate, whose session ends; the last owner stays', async () => {
    const other = await t.createMerchant({ name: 'Small Shop' });
    const ownerUser = await dashboardUser(t, 'owner', other);
    const owner = await signIn(t, ownerUser);
    const devUser = await dashboardUser(t, 'developer', other);
    const dev = await signIn(t, devUser);
    assert.equal((await change(t, owner, `/dashboard/team/${devUser.id}/remove`)).status, 303);
    assert.equal(
      (await dashboardRequest(t, 'GET', '/dashboard/sessions', { cookie: dev.cookie })).status,
      303,
    );
    const self = await change(t, owner, `/dashboard/team/${ownerUser.id}/remove`);
    assert.equal(self.status, 409);
    assert.match(self.text, /last owner/);
  });

  test('sign-out ends the session: the old cookie opens nothing', async () => {
    const s = await signIn(t, await dashboardUser(t, 'viewer'));
    const out = await change(t, s, '/dashboard/sign-out');
    assert.equal(out.status, 303);
    assert.match(out.headers.get('set-cookie') ?? '', /^gc_dashboard=; Path=\/; Max-Age=0/);
    const after = await dashboardRequest(t, 'GET', '/dashboard/sessions', { cookie: s.cookie });
    assert.equal(after.status, 303);
  });
});

describe('dashboard: the cookie off loopback (https pay URL)', () => {
  let t: TestApp;
  before(async () => {
    t = await startPagesApp({ env: { PUBLIC_PAY_URL: 'https://pay.example.test' } });
  });
  after(() => t.close());

  test('is Secure with the __Host- prefix', async () => {
    const s = await signIn(t, await dashboardUser(t, 'owner'));
    assert.match(
      s.setCookie,
      /^__Host-gc_dashboard=dss_[A-Za-z0-9]+; Path=\/; HttpOnly; SameSite=Strict; Secure$/,
    );
  });
});
