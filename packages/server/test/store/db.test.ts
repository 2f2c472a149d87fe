// PostgreSQL may drop pooled connections at any time (restart, failover, a proxy's idle timeout): the
// server must log it and carry on, not die of an unhandled 'error' event.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { postgresCase } from '../helpers/databases.ts';
import { eventually } from '../helpers/payments.ts';
import { createSession, SESSION_ENV } from '../helpers/sessions.ts';

describe('PostgreSQL connections terminated under a running server', { skip: postgresCase.skip }, () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(postgresCase, { env: SESSION_ENV });
  });
  after(() => t?.close());

  test('the server logs it and answers the next request', async () => {
    const created = await createSession(t);
    const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await admin.connect();
    try {
      const database = new URL(t.deps.config.databaseUrl).pathname.slice(1);
      const result = await admin.query(
        'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
        [database],
      );
      assert.ok(result.rowCount && result.rowCount > 0, 'the pool had connections to terminate');
    } finally {
      await admin.end();
    }
    // The pool hears of it when each idle socket reads PostgreSQL's goodbye: on a busy machine that
    // may take longer than any fixed pause, so wait for the log line itself.
    await eventually(
      async () => t.logLines.some((line) => line.includes('database connection lost')),
      10_000,
      'the lost connection to be logged',
    );
    const res = await t.request('GET', `/v1/sessions/${created.session_id}`, { key: t.merchant.secretKey });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.session_id, created.session_id);
  });
});
