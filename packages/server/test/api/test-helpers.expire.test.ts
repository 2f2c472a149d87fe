import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { assertError } from '../helpers/errors.ts';
import { createSession, eventRows, SESSION_ENV } from '../helpers/sessions.ts';

for (const dialect of DIALECTS) {
  describe(`POST /v1/test_helpers/sessions/{id}/expire on ${dialect.name}`, { skip: dialect.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(dialect, { env: SESSION_ENV });
    });
    after(() => t?.close());

    const expire = (id: string, key = t.merchant.secretKey) =>
      t.request('POST', `/v1/test_helpers/sessions/${id}/expire`, { key });

    test('expires a pending session now, with one group.expired event', async () => {
      const created = await createSession(t);
      const res = await expire(created.session_id);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(
        { ...res.body, request_id: 'x' },
        { request_id: 'x', session_id: created.session_id, status: 'expired', refunds: [] },
      );
      const shown = await t.request('GET', `/v1/sessions/${created.session_id}`, {
        key: t.merchant.secretKey,
      });
      assert.equal(shown.body.status, 'expired');
      // Expired now, so it says so: expires_at is the moment of expiry, not the 48 hours it had left.
      const expiredAt = Date.parse(shown.body.expires_at);
      assert.ok(expiredAt <= Date.now(), `expires_at ${shown.body.expires_at} is not in the past`);
      assert.ok(
        expiredAt > Date.parse(created.expires_at) - 48 * 60 * 60 * 1000,
        'and not before the session began',
      );
      const events = await eventRows(t, created.session_id);
      assert.deepEqual(
        events.map((e) => e.type),
        ['group.created', 'group.expired'],
      );
      assert.equal(events[1]?.payload.data.status, 'expired');
    });

    test('409 when the session is no longer pending', async () => {
      const expired = await createSession(t);
      assert.equal((await expire(expired.session_id)).status, 200);
      const again = await expire(expired.session_id);
      assertError(again, 409, 'session_not_pending');
      assert.equal(
        again.body.error,
        'The session is expired; only a pending session can be changed or paid.',
      );

      const cancelled = await createSession(t);
      await t.request('POST', `/v1/sessions/${cancelled.session_id}/cancel`, { key: t.merchant.secretKey });
      const res = await expire(cancelled.session_id);
      assertError(res, 409, 'session_not_pending');
      assert.deepEqual(
        (await eventRows(t, cancelled.session_id)).map((e) => e.type),
        ['group.created', 'group.cancelled'],
      );
    });

    test('404 for an unknown or another merchant’s session; 403 for a publishable key', async () => {
      const other = await t.createMerchant();
      const theirs = await createSession(t, { merchant: other });
      for (const id of ['gs_unknown000000000000', theirs.session_id]) {
        const res = await expire(id);
        assertError(res, 404, 'session_not_found');
      }
      const mine = await createSession(t);
      const res = await expire(mine.session_id, t.merchant.publishableKey);
      assertError(res, 403, 'secret_key_required');
    });
  });

  describe(`POST /v1/test_helpers/sessions/{id}/expire on ${dialect.name} in production`, {
    skip: dialect.skip,
  }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(dialect, { env: { ...SESSION_ENV, SERVICE_ENV: 'production' } });
    });
    after(() => t?.close());

    test('the route does not exist: 404, and the session stays pending', async () => {
      assert.match(t.merchant.secretKey, /^svc_sk_live_/);
      const created = await createSession(t, { via: 'secret' });
      const res = await t.request('POST', `/v1/test_helpers/sessions/${created.session_id}/expire`, {
        key: t.merchant.secretKey,
      });
      assertError(res, 404, 'route_not_found');
      const shown = await t.request('GET', `/v1/sessions/${created.session_id}`, {
        key: t.merchant.secretKey,
      });
      assert.equal(shown.body.status, 'pending');
      assert.deepEqual(
        (await eventRows(t, created.session_id)).map((e) => e.type),
        ['group.created'],
      );
    });
  });
}
