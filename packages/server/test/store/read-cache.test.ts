// The read cache behind GET /v1/sessions/{id} on SQLite: a write of this process shows at once, a
// write of another process within the 100 ms data_version period, and PostgreSQL never caches.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { openDb } from '../../src/store/db.ts';
import { closePendingSession, findSessionWithMembers } from '../../src/store/sessions.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { postgresCase, sqliteCase } from '../helpers/databases.ts';
import { createSession } from '../helpers/sessions.ts';

describe('session read cache on sqlite', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(sqliteCase);
  });
  after(() => t?.close());

  const status = async (sessionId: string) =>
    (await t.request('GET', `/v1/sessions/${sessionId}`, { key: t.merchant.secretKey })).body.status;

  test('a cancel through the API shows on the next read', async () => {
    const body = await createSession(t);
    assert.equal(await status(body.session_id), 'pending');
    assert.equal(await status(body.session_id), 'pending');
    const cancel = await t.request('POST', `/v1/sessions/${body.session_id}/cancel`, {
      key: t.merchant.secretKey,
    });
    assert.equal(cancel.status, 200);
    assert.equal(await status(body.session_id), 'cancelled');
  });

  test('a change written by another process shows within 100 ms', async () => {
    const body = await createSession(t);
    assert.equal(await status(body.session_id), 'pending');
    const other = openDb(t.deps.config.databaseUrl);
    try {
      assert.ok(await closePendingSession(other.kysely, body.session_id, 'expired', Date.now()));
    } finally {
      await other.close();
    }
    await sleep(150);
    assert.equal(await status(body.session_id), 'expired');
  });
});

describe('session reads on postgres are never cached', { skip: postgresCase.skip }, () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(postgresCase);
  });
  after(() => t?.close());

  test('a change written on another connection shows on the very next read', async () => {
    const body = await createSession(t);
    const read = () => findSessionWithMembers(t.deps.db, t.merchant.merchant.id, body.session_id);
    assert.equal((await read())?.session.status, 'pending');
    const other = openDb(t.deps.config.databaseUrl);
    try {
      assert.ok(await closePendingSession(other.kysely, body.session_id, 'expired', Date.now()));
    } finally {
      await other.close();
    }
    assert.equal((await read())?.session.status, 'expired');
  });
});
