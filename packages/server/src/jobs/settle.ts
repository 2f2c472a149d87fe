// The settling worker (docs/decisions.md#payments): every SETTLE_INTERVAL_MS it works through the
// sessions whose money work is due — captures of a complete on_funded group, the transfer of a funded
// session, refunds and releases of a closed one, retries of those that failed, and the recovery of
// processor calls a crash left unanswered. Every piece is claimed by a unique key, so any number of
// processes may run it side by side.
import type { Deps } from '../deps.ts';
import { listSessionsDueForSettling, settleSession } from '../flows/settle.ts';

const BATCH = 50;

/** One round; answers how many sessions it looked at. */
export async function settleDueSessions(deps: Deps, signal?: AbortSignal): Promise<number> {
  const due = await listSessionsDueForSettling(deps, BATCH);
  for (const sessionId of due) {
    if (signal?.aborted) break;
    try {
      await settleSession(deps, sessionId);
    } catch (error) {
      // One session that cannot be settled must not hold up the others: log it, go on, retry next round.
      deps.logger.error({ err: error, session_id: sessionId }, 'settling a session failed');
    }
  }
  return due.length;
}
