// What one create and one pay cost in statements, counted through the app's Db handle on each database:
// a fixed number, so a change that adds a statement to either hot path fails here and must say why
// (docs/benchmarks.md). A count, not a timing: the same on a loaded machine as on a quiet one.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { equalGroup, merchantSession, payOk } from '../helpers/payments.ts';
import { createSession } from '../helpers/sessions.ts';

/**
 * Statements per hot path on each database (docs/benchmarks.md#statements-per-request). SQLite's read
 * caches serve the API key and the merchant's name, which other sessions' writes no longer clear;
 * PostgreSQL reads the key every time, and a create there locks its merchant's row first (processes
 * creating for one merchant take turns on created_at). A create: the key, the merchant's row updated to
 * answer the created_at, locking it (PostgreSQL), or the newest created_at (SQLite); the session, the organizer, the event (with
 * its NOTIFY on PostgreSQL, one statement). A pay: the share joined to its merchant's name; the claim
 * (lock, member, try number, attempt, paying, recovery time); the sandbox's record (insert … on
 * conflict do nothing, no transaction: its key is read only when it had a record); the record (lock,
 * attempt, member's move answering the member, ledger entry, group sums, live attempts, the event,
 * which reads the session's last event time itself and on PostgreSQL sends NOTIFY, settle time). The last
 * share of a group records the same way but reads the whole group (members and attempts) to fund it, then
 * settles at once: the transfer claimed (the group read again under the lock), made and recorded (read
 * again); each round of that settling starts from the state the record before it left, not a read of its
 * own (41 statements before it did).
 */
const EXPECTED: Record<string, { create: number; pay: number; lastShare: number }> = {
  sqlite: { create: 4, pay: 16, lastShare: 35 },
  postgres: { create: 5, pay: 16, lastShare: 35 },
};

for (const dialect of DIALECTS) {
  describe(`statements per hot path on ${dialect.name}`, { skip: dialect.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(dialect);
    });
    after(() => t?.close());

    async function counted(run: () => Promise<unknown>): Promise<number> {
      const before = t.deps.db.queryCount();
      await run();
      return t.deps.db.queryCount() - before;
    }

    test('one POST /v1/sessions with the secret key', async () => {
      await createSession(t); // the key is read (and on SQLite cached) once before counting
      const n = await counted(() => createSession(t));
      assert.equal(n, EXPECTED[dialect.name]?.create, `statements for one create on ${dialect.name}`);
    });

    test('one POST /shares/{id}/pay that is charged', async () => {
      const group = await equalGroup(t, ['Ada', 'Ben', 'Cy']);
      await payOk(t, group.shares[0].shareId);
      const n = await counted(() => payOk(t, group.shares[1].shareId));
      assert.equal(n, EXPECTED[dialect.name]?.pay, `statements for one pay on ${dialect.name}`);
    });

    test('the POST /shares/{id}/pay of the last share, which funds the session and transfers', async () => {
      const group = await equalGroup(t, ['Ada', 'Ben', 'Cy']);
      await payOk(t, group.shares[0].shareId);
      await payOk(t, group.shares[1].shareId);
      const n = await counted(() => payOk(t, group.shares[2].shareId));
      const view = await merchantSession(t, group.created.session_id);
      assert.equal(view.status, 'funded');
      assert.match(String(view.transfer), /^tr_/, 'the transfer was made within the request');
      assert.equal(n, EXPECTED[dialect.name]?.lastShare, `statements for the last share on ${dialect.name}`);
    });
  });
}
