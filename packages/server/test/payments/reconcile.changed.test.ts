// Reconcile of the changed sessions (docs/decisions.md#ledger-and-reconciliation), the CLI's default: each
// run reads the sessions changed since the last one, at most --limit of those, plus the last 10 minutes;
// it still finds a mismatch in a session that changed, names it again on every run until it is clean, and
// reads no more than it must however many sessions the database holds.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Mismatch } from '../../src/domain/reconciliation.ts';
import { reconcile } from '../../src/flows/reconcile.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { cli } from '../helpers/cli.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { equalGroup, type Group, payOk, type Share } from '../helpers/payments.ts';
import { SESSION_ENV } from '../helpers/sessions.ts';

/** How long a run reads again what the last one read (RECHECK_MS in flows/reconcile.ts). */
const RECHECK_MS = 10 * 60_000;

/** A clock the test moves: the app stamps its writes with it, and reconcile reads it. */
function testClock() {
  let at = Date.now();
  return {
    now: () => at,
    pass(ms: number) {
      at += ms;
    },
  };
}

async function withApp(
  dialect: (typeof DIALECTS)[number],
  use: (t: TestApp, clock: ReturnType<typeof testClock>) => Promise<void>,
) {
  const clock = testClock();
  const t = await startTestApp(dialect, { env: SESSION_ENV, clock });
  try {
    await use(t, clock);
  } finally {
    await t.close();
  }
}

const kinds = (mismatches: Mismatch[]) => [...new Set(mismatches.map((m) => m.kind))].sort();
const shareOf = (g: Group, i: number) => g.shares[i] as Share;
const changedOnly = (limit = 1000) => ({ changed: { limit } });

for (const dialect of DIALECTS) {
  describe(`reconcile of the changed sessions on ${dialect.name}`, { skip: dialect.skip }, () => {
    test('finds a mismatch planted in a session that changed since the last run, and reads no other', async () => {
      await withApp(dialect, async (t, clock) => {
        const groups: Group[] = [];
        for (let i = 0; i < 4; i++) groups.push(await equalGroup(t, ['Ada', 'Ben']));
        clock.pass(RECHECK_MS + 60_000);
        const first = await reconcile(t.deps, changedOnly());
        assert.deepEqual([first.ok, first.scope, first.since, first.more], [true, 'changed', null, false]);
        assert.equal(first.checked.sessions, 4);
        // Nothing changed since: nothing to read.
        clock.pass(1000);
        const idle = await reconcile(t.deps, changedOnly());
        assert.equal(idle.checked.sessions, 0);
        assert.equal(idle.ok, true);

        // One share of the third group is paid (the session changes), then one of its ledger lines is
        // deleted by hand: the run reads that session alone and names what is wrong in it.
        const g = groups[2] as Group;
        const sid = g.created.session_id;
        clock.pass(1000);
        await payOk(t, shareOf(g, 0).shareId);
        const line = await t.deps.db.kysely
          .selectFrom('ledger_lines')
          .selectAll()
          .where('session_id', '=', sid)
          .where('account', '=', 'session_funds')
          .executeTakeFirstOrThrow();
        await t.deps.db.kysely.deleteFrom('ledger_lines').where('id', '=', line.id).execute();
        clock.pass(RECHECK_MS + 60_000);
        const found = await reconcile(t.deps, changedOnly());
        assert.equal(found.ok, false);
        assert.equal(found.checked.sessions, 1);
        assert.deepEqual(kinds(found.mismatches), ['entry_unbalanced', 'ledger_session_funds']);
        for (const m of found.mismatches) assert.equal(m.session_id, sid);
        const entry = found.mismatches.find((m) => m.kind === 'entry_unbalanced') as Mismatch;
        assert.match(
          entry.detail,
          new RegExp(`${line.entry_id} of session ${sid} adds up to -${line.amount_cents}`),
        );

        // Nothing changed since, but the mismatch is still open: the next run names it again.
        clock.pass(1000);
        const again = await reconcile(t.deps, changedOnly());
        assert.equal(again.checked.sessions, 1);
        assert.deepEqual(kinds(again.mismatches), ['entry_unbalanced', 'ledger_session_funds']);

        // Put right (the line restored): the run after finds it clean, and the one after reads nothing.
        await t.deps.db.kysely.insertInto('ledger_lines').values(line).execute();
        clock.pass(1000);
        const mended = await reconcile(t.deps, changedOnly());
        assert.deepEqual([mended.ok, mended.checked.sessions], [true, 1]);
        clock.pass(1000);
        assert.equal((await reconcile(t.deps, changedOnly())).checked.sessions, 0);
        // The whole database, for comparison: every session.
        const full = await reconcile(t.deps);
        assert.deepEqual([full.ok, full.scope, full.checked.sessions], [true, 'full', 4]);
      });
    });

    test('its work is bounded: at most the limit a run, the next goes on from there, whatever the table holds', async () => {
      await withApp(dialect, async (t, clock) => {
        for (let i = 0; i < 5; i++) await equalGroup(t, ['Ada', 'Ben']);
        clock.pass(RECHECK_MS + 60_000);
        const runs = [];
        for (let i = 0; i < 4; i++) {
          clock.pass(1000);
          const report = await reconcile(t.deps, changedOnly(2));
          assert.equal(report.ok, true);
          runs.push([report.checked.sessions, report.more]);
        }
        assert.deepEqual(runs, [
          [2, true],
          [2, true],
          [1, false],
          [0, false],
        ]);

        // A run with nothing changed sends as many statements with 5 sessions in the database as with 25.
        const statements = async () => {
          clock.pass(1000);
          const before = t.deps.db.queryCount();
          const report = await reconcile(t.deps, changedOnly(2));
          assert.equal(report.checked.sessions, 0);
          return t.deps.db.queryCount() - before;
        };
        const few = await statements();
        for (let i = 0; i < 20; i++) await equalGroup(t, ['Ada', 'Ben']);
        clock.pass(RECHECK_MS + 60_000);
        for (let i = 0; i < 20; i++) if (!(await reconcile(t.deps, changedOnly(2))).more) break;
        assert.equal(await statements(), few);

        // Sessions that changed in the last RECHECK_MS are read whatever the limit, and again next run: a
        // transaction may commit after a run has passed its stamp.
        for (let i = 0; i < 3; i++) await equalGroup(t, ['Ada', 'Ben']);
        clock.pass(1000);
        assert.equal((await reconcile(t.deps, changedOnly(1))).checked.sessions, 3);
        clock.pass(1000);
        assert.equal((await reconcile(t.deps, changedOnly(1))).checked.sessions, 3);
        // Once older than that, the limit holds again.
        clock.pass(RECHECK_MS);
        const later = [];
        for (let i = 0; i < 4; i++) {
          const report = await reconcile(t.deps, changedOnly(1));
          later.push([report.checked.sessions, report.more]);
        }
        assert.deepEqual(later, [
          [1, true],
          [1, true],
          [1, false],
          [0, false],
        ]);
      });
    });

    test('group-checkout reconcile: every session by default, --changed with --limit, and their JSON', async () => {
      await withApp(dialect, async (t) => {
        await equalGroup(t, ['Ada', 'Ben']);
        const env = { DATABASE_URL: t.deps.config.databaseUrl };
        const full = await cli(['reconcile', '--json'], env);
        assert.equal(full.code, 0, full.stderr);
        const whole = JSON.parse(full.stdout);
        assert.deepEqual(Object.keys(whole), ['ok', 'checked', 'mismatches'], 'the documented shape');
        assert.deepEqual([whole.ok, whole.checked.sessions], [true, 1]);
        const changed = await cli(['reconcile', '--json', '--changed', '--limit', '5'], env);
        assert.equal(changed.code, 0, changed.stderr);
        const answer = JSON.parse(changed.stdout);
        assert.deepEqual(Object.keys(answer), ['ok', 'scope', 'since', 'more', 'checked', 'mismatches']);
        assert.deepEqual(
          [answer.ok, answer.scope, answer.since, answer.more],
          [true, 'changed', null, false],
        );
        assert.equal(answer.checked.sessions, 1);
        for (const bad of [
          ['--changed', '--limit', '0'],
          ['--changed', '--limit', 'many'],
          ['--limit', '5'],
        ]) {
          const refused = await cli(['reconcile', ...bad], env);
          assert.equal(refused.code, 2, `${bad.join(' ')}: ${refused.stdout}`);
          assert.match(refused.stderr, /--limit/);
        }
      });
    });
  });
}
