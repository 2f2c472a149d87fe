// What the dashboard answers when a flow refuses a change (docs/dashboard.md#pages): the API's status for
// the same refusal (one table, STATUS_OF in errors.ts), with the refusal's words on a page; never a 500.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import { HOUR_MS, manualClock } from '../helpers/clock.ts';
import {
  change,
  dashboardRequest,
  dashboardUser,
  payOrigin,
  type SignedIn,
  signIn,
} from '../helpers/dashboard.ts';
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

describe('dashboard: every change is a form', () => {
  let t: TestApp;
  before(async () => {
    t = await startPagesApp();
  });
  after(() => t?.close());

  /** A POST with this body and Content-Type, from our own origin, with the session's cookie if any. */
  const post = async (path: string, contentType: string | null, body: string, s?: SignedIn) => {
    const headers: Record<string, string> = { origin: payOrigin(t) };
    if (contentType !== null) headers['content-type'] = contentType;
    if (s) headers.cookie = s.cookie;
    const res = await fetch(`${t.baseUrl}${path}`, { method: 'POST', headers, body, redirect: 'manual' });
    return { status: res.status, text: await res.text() };
  };

  const me = async () => (await t.request('GET', '/v1/merchants/me', { key: t.merchant.secretKey })).body;

  test('a body that is not a form is 415 in words, signed in or not, and changes nothing', async () => {
    const logged = t.logLines.length;
    const signInJson = await post('/dashboard/sign-in', 'application/json', '{"token": ');
    assert.equal(signInJson.status, 415, signInJson.text);
    assert.match(signInJson.text, /application\/x-www-form-urlencoded/);

    const s = await signIn(t, await dashboardUser(t, 'owner'));
    const before = await me();
    const team = async () =>
      (await dashboardRequest(t, 'GET', '/dashboard/settings', { cookie: s.cookie })).text.match(
        /a@b\.example/g,
      );
    const cases: [string, string, string][] = [
      ['/dashboard/settings/name', 'application/json', JSON.stringify({ _csrf: s.csrf, name: 12345 })],
      [
        '/dashboard/team/invite',
        'application/json',
        JSON.stringify({ _csrf: s.csrf, email: ['a@b.example'], role: 'viewer' }),
      ],
      [
        '/dashboard/developers/origins/remove',
        'application/json',
        JSON.stringify({ _csrf: s.csrf, origin: 7 }),
      ],
      ['/dashboard/settings/name', 'text/plain', `_csrf=${s.csrf}&name=Plain`],
      [
        '/dashboard/settings/name',
        'multipart/form-data; boundary=x',
        `--x\r\nContent-Disposition: form-data; name="name"\r\n\r\nMulti\r\n--x--\r\n`,
      ],
    ];
    // No Content-Type at all (bytes, so that fetch names none).
    const bare = await fetch(`${t.baseUrl}/dashboard/settings/name`, {
      method: 'POST',
      headers: { origin: payOrigin(t), cookie: s.cookie },
      body: new TextEncoder().encode(`_csrf=${s.csrf}&name=Bare`),
    });
    assert.equal(bare.status, 415, await bare.text());
    for (const [path, type, body] of cases) {
      const res = await post(path, type, body, s);
      assert.equal(res.status, 415, `${path} ${type}: ${res.text}`);
      assert.match(res.text, /form/);
      assert.match(res.text, /Nothing was changed/);
    }
    const after = await me();
    assert.equal(after.name, before.name);
    assert.deepEqual(after.allowed_origins, before.allowed_origins);
    assert.equal(await team(), null, 'nobody invited');
    const errors = t.logLines.slice(logged).filter((line) => /"level":50/.test(line));
    assert.deepEqual(errors, [], 'nothing logged as an error of ours');
  });

  test('a field sent twice or not at all is 400 in words, and changes nothing', async () => {
    const s = await signIn(t, await dashboardUser(t, 'owner'));
    const name = (await me()).name;
    const form = 'application/x-www-form-urlencoded';
    const twice = await post('/dashboard/settings/name', form, `_csrf=${s.csrf}&name=A&name=B`, s);
    assert.equal(twice.status, 400, twice.text);
    assert.match(twice.text, /name.* more than once|twice/);
    const missing = await post('/dashboard/team/invite', form, `_csrf=${s.csrf}&role=viewer`, s);
    assert.equal(missing.status, 400, missing.text);
    assert.match(missing.text, /email/);
    const noToken = await post('/dashboard/sign-in', form, '');
    assert.equal(noToken.status, 400, noToken.text);
    const csrfTwice = await post(
      '/dashboard/settings/name',
      form,
      `_csrf=${s.csrf}&_csrf=${s.csrf}&name=C`,
      s,
    );
    assert.equal(csrfTwice.status, 403, 'a token sent twice is not the token');
    assert.equal((await me()).name, name);
  });
});
