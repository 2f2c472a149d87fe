// What reconcile of the changed sessions keeps between runs (docs/decisions.md#ledger-and-reconciliation):
// how far it has read sessions in the order they last changed (updated_at, then id), and the sessions
// whose mismatches are still open.
import type { Executor } from './schema.ts';

/** A place in the order sessions last changed: (updated_at, id). */
export interface ChangeMark {
  changedAt: number;
  sessionId: string;
}

const MARK = 'sessions';

/** How far the last run read; undefined before the first one. */
export async function findChangeMark(db: Executor): Promise<ChangeMark | undefined> {
  const row = await db
    .selectFrom('reconcile_marks')
    .select(['changed_at', 'session_id'])
    .where('name', '=', MARK)
    .executeTakeFirst();
  return row && { changedAt: Number(row.changed_at), sessionId: row.session_id };
}

/** Moves the mark to `to`, never back: of two runs at once, the one that read further wins. */
export async function advanceChangeMark(db: Executor, to: ChangeMark, now: number): Promise<void> {
  await db
    .insertInto('reconcile_marks')
    .values({ name: MARK, changed_at: to.changedAt, session_id: to.sessionId, ran_at: now })
    .onConflict((oc) =>
      oc
        .column('name')
        .doUpdateSet((eb) => ({
          changed_at: eb.ref('excluded.changed_at'),
          session_id: eb.ref('excluded.session_id'),
          ran_at: eb.ref('excluded.ran_at'),
        }))
        .where((eb) =>
          eb(
            eb.refTuple('reconcile_marks.changed_at', 'reconcile_marks.session_id'),
            '<',
            eb.refTuple('excluded.changed_at', 'excluded.session_id'),
          ),
        ),
    )
    .execute();
}

/**
 * Sessions that changed after `after` (and, with `until`, before that time), in the order they changed,
 * at most `limit` (index sessions_changed).
 */
export async function listSessionsChangedAfter(
  db: Executor,
  after: ChangeMark,
  limit: number,
  until?: number,
): Promise<ChangeMark[]> {
  let query = db
    .selectFrom('sessions')
    .select(['id', 'updated_at'])
    .where((eb) => eb(eb.refTuple('updated_at', 'id'), '>', eb.tuple(after.changedAt, after.sessionId)));
  if (until !== undefined) query = query.where('updated_at', '<', until);
  const rows = await query.orderBy('updated_at').orderBy('id').limit(limit).execute();
  return rows.map((r) => ({ changedAt: Number(r.updated_at), sessionId: r.id }));
}

/** Sessions with a mismatch still open, oldest finding first. */
export async function listOpenFindings(db: Executor): Promise<string[]> {
  const rows = await db.selectFrom('reconcile_findings').select('session_id').orderBy('found_at').execute();
  return rows.map((r) => r.session_id);
}

/** Notes that `sessionId` has a mismatch (its first finding's time is kept). */
export async function keepFinding(db: Executor, sessionId: string, now: number): Promise<void> {
  await db
    .insertInto('reconcile_findings')
    .values({ session_id: sessionId, found_at: now })
    .onConflict((oc) => oc.column('session_id').doNothing())
    .execute();
}

/** `sessionId` was found clean. */
export async function dropFinding(db: Executor, sessionId: string): Promise<void> {
  await db.deleteFrom('reconcile_findings').where('session_id', '=', sessionId).execute();
}
