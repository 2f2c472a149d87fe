// The expiry sweeper: moves pending sessions past expires_at to expired. Each session is closed by
// closeSession's conditional update, so when several processes sweep at once exactly one of them closes
// a given session and writes its group.expired event; the others are told it was not theirs and move on.
import type { Deps } from '../deps.ts';
import { closeSession, listDueSessionIds } from '../flows/sessions.ts';

const BATCH = 100;

/** One sweep; answers how many sessions this process expired. */
export async function expireDueSessions(deps: Deps, signal?: AbortSignal): Promise<number> {
  let expired = 0;
  for (;;) {
    const due = await listDueSessionIds(deps, BATCH);
    let closedThisRound = 0;
    for (const sessionId of due) {
      if (signal?.aborted) return expired;
      try {
        // undefined: another process (or a cancel) got there first, which is the claim working.
        if (!(await closeSession(deps, sessionId, 'expired'))) continue;
        expired++;
        closedThisRound++;
      } catch (error) {
        // One session that cannot be closed must not hold up every session due after it: log it, go on,
        // and try it again on the next sweep.
        deps.logger.error({ err: error, session_id: sessionId }, 'expiring a session failed');
      }
    }
    if (due.length < BATCH || closedThisRound === 0) return expired;
  }
}
