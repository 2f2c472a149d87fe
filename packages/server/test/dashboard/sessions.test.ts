// The dashboard's sessions list and a session's page over HTTP (docs/dashboard.md#pages), on SQLite and
// PostgreSQL, with sessions made through the API in every status (funded by paying every share, cancelled,
// expired by the sandbox helper, pending): newest first, 25 a page with an "Older sessions" link that pages
// to the end; the status filter; search by order_ref or session id, exact; another merchant's sessions are
// neither listed nor found, and their page is 404.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import { manualClock } from '../helpers/clock.ts';
import { change, dashboardRequest, dashboardUser, type SignedIn, signIn } from '../helpers/dashboard.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { startPagesApp } from '../helpers/pages.ts';
import { equalGroup, payOk } from '../helpers/payments.ts';
import { createSession, organizerToken, sampleCart } from '../helpers/sessions.ts';

/** The list's rows: [session id, order_ref, status]. */
const rowsOf = (page: string) =>
  [
    ...page.matchAll(
      /<tr><td><a class="mono" href="[^"]+">([^<]+)<\/a><\/td><td>([^<]*)<\/td><td><span class="status [a-z]+">([a-z]+)<\/span>/g,
    ),
  ].map((m) => [m[1], m[2], m[3]]);

const nextOf = (page: string) =>
  /href="([^"]+)" rel="next">Older sessions/.exec(page)?.[1]?.replace(/&amp;/g, '&');

for (const dialect of DIALECTS) {
  describe(`dashboard: sessions list on ${dialect.name}`, { skip: dialect.skip }, () => {
    let t: TestApp;
    let s: SignedIn;
    const clock = manualClock(Date.parse('2026-11-12T09:00:00.000Z'));
    /** Every session made, oldest first: [id, order_ref, status]. */
    const made: [string, string, string][] = [];

    before(async () => {
      t = await startPagesApp({ clock }, dialect);
      const make = async (orderRef: string) => {
        clock.advance(1000);
        const created = await createSession(t, { cart: sampleCart({ metadata: { order_ref: orderRef } }) });
        return created.session_id as string;
      };
      clock.advance(1000);
      const funded = await equalGroup(t, ['Ann', 'Bob'], { via: 'secret' });
      for (const share of funded.shares) await payOk(t, share.shareId);
      made.push([funded.created.session_id, 'ORD-1001', 'funded']);
      const cancelled = await make('ORD-CANCELLED');
      const cancel = await t.request('POST', `/v1/sessions/${cancelled}/cancel`, {
        key: t.merchant.secretKey,
      });
      assert.equal(cancel.status, 200, cancel.text);
      made.push([cancelled, 'ORD-CANCELLED', 'cancelled']);
      const expired = await make('ORD-EXPIRED');
      const expire = await t.request('POST', `/v1/test_helpers/sessions/${expired}/expire`, {
        key: t.merchant.secretKey,
      });
      assert.equal(expire.status, 200, expire.text);
      made.push([expired, 'ORD-EXPIRED', 'expired']);
      for (let i = 0; i < 27; i++) made.push([await make(`ORD-${i}`), `ORD-${i}`, 'pending']);
      // Another merchant's, with an order_ref of ours.
      const other = await t.createMerchant({ name: 'Other' });
      await createSession(
        { request: t.request, merchant: other },
        { cart: sampleCart({ metadata: { order_ref: 'ORD-3' } }) },
      );
      s = await signIn(t, await dashboardUser(t, 'viewer'));
    });
    after(() => t?.close());

    const list = async (query = '') => {
      const res = await dashboardRequest(t, 'GET', `/dashboard/sessions${query}`, { cookie: s.cookie });
      assert.equal(res.status, 200, res.text);
      return res.text;
    };

    test('newest first, 25 a page; "Older sessions" pages to the end, every session once', async () => {
      const first = await list();
      const newestFirst = [...made].reverse();
      assert.deepEqual(rowsOf(first), newestFirst.slice(0, 25));
      const second = await dashboardRequest(t, 'GET', nextOf(first) as string, { cookie: s.cookie });
      assert.deepEqual(rowsOf(second.text), newestFirst.slice(25));
      assert.equal(nextOf(second.text), undefined, 'no page after the last');
      // A cursor that is not one this list gave is refused in words, not shown as the first page.
      const cursor = new URL(nextOf(first) as string, t.baseUrl).searchParams.get('cursor') as string;
      for (const query of ['?cursor=garbage', '?cursor=1.2.3', `?cursor=${cursor}&cursor=${cursor}`]) {
        const res = await dashboardRequest(t, 'GET', `/dashboard/sessions${query}`, { cookie: s.cookie });
        assert.equal(res.status, 400, query);
        assert.match(res.text, /Older sessions|more than once/, query);
        assert.deepEqual(rowsOf(res.text), [], query);
      }
      assert.deepEqual(rowsOf(await list('?cursor=')), newestFirst.slice(0, 25), 'empty: the first page');
    });

    test('the status filter shows that status only', async () => {
      for (const status of ['funded', 'cancelled', 'expired'] as const)
        assert.deepEqual(
          rowsOf(await list(`?status=${status}`)),
          made.filter((m) => m[2] === status),
          status,
        );
      const pending = await list('?status=pending');
      assert.equal(rowsOf(pending).length, 25);
      assert.ok(rowsOf(pending).every((r) => r[2] === 'pending'));
      // "Any status" (the form's empty value) is no filter; an unknown status is refused, not ignored.
      assert.equal(rowsOf(await list('?status=')).length, 25);
      for (const query of ['?status=lost', '?status=pending&status=funded']) {
        const res = await dashboardRequest(t, 'GET', `/dashboard/sessions${query}`, { cookie: s.cookie });
        assert.equal(res.status, 400, query);
        assert.match(res.text, /There is no session status/);
        assert.deepEqual(rowsOf(res.text), []);
      }
    });

    test("search finds one session by order_ref or id, exactly; another merchant's is not found", async () => {
      assert.deepEqual(rowsOf(await list('?q=ORD-3')), [made.find((m) => m[1] === 'ORD-3')]);
      assert.deepEqual(rowsOf(await list(`?q=${made[0]?.[0]}`)), [made[0]]);
      assert.deepEqual(rowsOf(await list('?q=ORD')), [], 'exact, not a prefix');
      assert.match(await list('?q=ORD-EXPIRED&status=pending'), /No sessions match/);
      const theirs = await t.createMerchant({ name: 'Third' });
      const created = await createSession({ request: t.request, merchant: theirs });
      assert.match(await list(`?q=${created.session_id}`), /No sessions match/);
      const page = await dashboardRequest(t, 'GET', `/dashboard/sessions/${created.session_id}`, {
        cookie: s.cookie,
      });
      assert.equal(page.status, 404);
      const ours = await dashboardRequest(t, 'GET', `/dashboard/sessions/${made[0]?.[0]}`, {
        cookie: s.cookie,
      });
      assert.equal(ours.status, 200);
      assert.match(ours.text, /Ann/);
    });
  });
}

describe('dashboard: remind pending members', () => {
  let t: TestApp;
  before(async () => {
    t = await startPagesApp();
  });
  after(() => t.close());

  test('the notice says how many reminders went, and says so when none did', async () => {
    const created = await createSession(t, {
      via: 'secret',
      customer: { name: 'Ada', email: 'ada@example.com' },
    });
    const put = await t.request('PUT', `/api/v1/session/group?access=${organizerToken(created)}`, {
      body: {
        mode: 'equal',
        members: [{ name: 'Ada' }, { name: 'Ben', email: 'ben@example.com' }, { name: 'Cy' }],
      },
    });
    assert.equal(put.status, 200, put.text);
    const s = await signIn(t, await dashboardUser(t, 'developer'));
    const remind = async () => {
      const res = await change(t, s, `/dashboard/sessions/${created.session_id}/remind`);
      assert.equal(res.status, 303, res.text);
      const page = await dashboardRequest(t, 'GET', res.location as string, { cookie: s.cookie });
      assert.equal(page.status, 200);
      return /<[^>]*class="notice"[^>]*>([^<]*)</.exec(page.text)?.[1] ?? page.text;
    };
    // Ada (the organizer, her own share open) and Ben have addresses; Cy has none.
    assert.match(await remind(), /^2 reminders sent\. 1 pending member was not mailed/);
    // Within the hour nobody is reminded again: the page must not say otherwise.
    assert.match(await remind(), /^No reminder was sent\. 3 pending members were not mailed/);
  });
});
