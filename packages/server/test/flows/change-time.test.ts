// A change to a session is dated once the session's lock is held (flows/record.ts lockForChange): a change
// that waited on another for the lock is never dated before it, so the timestamps of a session's events
// follow the order the changes committed in (docs/api.md#event-payload). PostgreSQL, where a second
// transaction really waits on the row lock of the first.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { lockForChange } from '../../src/flows/record.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { manualClock } from '../helpers/clock.ts';
import { postgresCase } from '../helpers/databases.ts';
import { createSession, SESSION_ENV } from '../helpers/sessions.ts';

describe('the time of a change to a session', { skip: postgresCase.skip }, () => {
  let t: TestApp;
  const clock = manualClock();
  before(async () => {
    t = await startTestApp(postgresCase, { clock, env: SESSION_ENV });
  });
  after(() => t?.close());

  test('is read after the lock is held, not when the change began waiting for it', async () => {
    const { session_id: sessionId } = await createSession(t, { via: 'secret' });
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let locked = () => {};
    const first = new Promise<void>((resolve) => {
      locked = resolve;
    });
    // The first change holds the session's lock until the test lets it go.
    const holder = t.deps.db.kysely.transaction().execute(async (trx) => {
      await lockForChange(t.deps, trx, sessionId);
      locked();
      await held;
    });
    await first;
    const start = clock.now();
    const waiter = t.deps.db.kysely.transaction().execute((trx) => lockForChange(t.deps, trx, sessionId));
    // The second waits on the lock while time passes; then the first commits.
    await new Promise((resolve) => setTimeout(resolve, 100));
    clock.advance(5_000);
    release();
    await holder;
    const { session, now } = await waiter;
    assert.equal(session?.id, sessionId);
    assert.equal(now, start + 5_000, 'dated when it got the lock');
  });
});
