import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { assertError } from '../helpers/errors.ts';
import { createSession, eventRows, organizerToken, SESSION_ENV } from '../helpers/sessions.ts';

for (const dialect of DIALECTS) {
  describe(`POST /v1/sessions/{id}/cancel on ${dialect.name}`, { skip: dialect.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(dialect, { env: SESSION_ENV });
    });
    after(() => t?.close());

    const cancel = (id: string, key = t.merchant.secretKey) =>
      t.request('POST', `/v1/sessions/${id}/cancel`, { key });

    test('cancels a pending session and records one group.cancelled event', async () => {
      const created = await createSession(t);
      const res = await cancel(created.session_id);
      assert.equal(res.status, 200, res.text);
      assert.match(res.body.request_id, /^req_/);
      assert.deepEqual(
        { ...res.body, request_id: 'x' },
        { request_id: 'x', session_id: created.session_id, status: 'cancelled', refunds: [] },
      );

      const shown = await t.request('GET', `/v1/sessions/${created.session_id}`, {
        key: t.merchant.secretKey,
      });
      assert.equal(shown.body.status, 'cancelled');

      const events = await eventRows(t, created.session_id);
      assert.deepEqual(
        events.map((e) => e.type),
        ['group.created', 'group.cancelled'],
      );
      const cancelled = events[1]!;
      assert.equal(cancelled.payload.type, 'group.cancelled');
      assert.equal(cancelled.payload.data.status, 'cancelled');
      assert.equal(cancelled.payload.data.order_ref, 'ORD-1001');
      assert.equal(cancelled.payload.data.pending_amount, 10_000);
    });

    test('a client that sends an empty JSON body or {} cancels just the same', async () => {
      for (const rawBody of ['', '{}']) {
        const created = await createSession(t);
        const res = await t.request('POST', `/v1/sessions/${created.session_id}/cancel`, {
          key: t.merchant.secretKey,
          rawBody,
        });
        assert.equal(res.status, 200, `${JSON.stringify(rawBody)}: ${res.text}`);
        assert.equal(res.body.status, 'cancelled');
      }
    });

    test('a second cancel is 409 and records nothing more', async () => {
      const created = await createSession(t);
      assert.equal((await cancel(created.session_id)).status, 200);
      const again = await cancel(created.session_id);
      assertError(again, 409, 'session_not_pending');
      assert.equal(
        again.body.error,
        'The session is cancelled; only a pending session can be changed or paid.',
      );
      const events = await eventRows(t, created.session_id);
      assert.equal(events.filter((e) => e.type === 'group.cancelled').length, 1);
    });

    test('cancels racing each other: one 200, the rest 409, one event', async () => {
      const created = await createSession(t);
      const results = await Promise.all(Array.from({ length: 8 }, () => cancel(created.session_id)));
      assert.deepEqual(results.map((r) => r.status).sort(), [200, 409, 409, 409, 409, 409, 409, 409]);
      // The losers are told the status the winner left, never a bare "not open".
      for (const lost of results.filter((r) => r.status !== 200)) {
        assertError(lost, 409, 'session_not_pending');
        assert.equal(
          lost.body.error,
          'The session is cancelled; only a pending session can be changed or paid.',
        );
      }
      const events = await eventRows(t, created.session_id);
      assert.equal(events.filter((e) => e.type === 'group.cancelled').length, 1);
    });

    test('an expired session cannot be cancelled', async () => {
      const created = await createSession(t);
      const expire = await t.request('POST', `/v1/test_helpers/sessions/${created.session_id}/expire`, {
        key: t.merchant.secretKey,
      });
      assert.equal(expire.status, 200, expire.text);
      const res = await cancel(created.session_id);
      assertError(res, 409, 'session_not_pending');
      assert.equal(res.body.error, 'The session is expired; only a pending session can be changed or paid.');
    });

    test('after a cancel the pay page shows it cancelled and takes no changes', async () => {
      const created = await createSession(t);
      await cancel(created.session_id);
      const token = organizerToken(created);
      const page = await t.request('GET', `/api/v1/session?access=${token}`);
      assert.equal(page.body.status, 'cancelled');
      const put = await t.request('PUT', `/api/v1/session/group?access=${token}`, {
        body: { mode: 'equal', members: [{ name: 'Ada' }, { name: 'Ben' }] },
      });
      assertError(put, 409, 'session_not_pending');
    });

    test('an unknown session and another merchant’s session are 404', async () => {
      const other = await t.createMerchant();
      const theirs = await createSession(t, { merchant: other });
      for (const id of ['gs_unknown000000000000', theirs.session_id]) {
        const res = await cancel(id);
        assertError(res, 404, 'session_not_found');
      }
      const stillThere = await t.request('GET', `/v1/sessions/${theirs.session_id}`, {
        key: other.secretKey,
      });
      assert.equal(stillThere.body.status, 'pending');
      assert.deepEqual(
        (await eventRows(t, theirs.session_id)).map((e) => e.type),
        ['group.created'],
      );
    });

    test('a publishable key may not cancel', async () => {
      const created = await createSession(t);
      const res = await cancel(created.session_id, t.merchant.publishableKey);
      assertError(res, 403, 'secret_key_required');
      const shown = await t.request('GET', `/v1/sessions/${created.session_id}`, {
        key: t.merchant.secretKey,
      });
      assert.equal(shown.body.status, 'pending');
    });
  });
}
