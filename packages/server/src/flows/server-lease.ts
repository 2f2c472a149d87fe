// One server per SQLite file (docs/operations.md#one-server-per-sqlite-file). The workers of a server
// (webhook dispatch, settling, expiry) are made to run beside others on PostgreSQL only; on SQLite a
// second server on the same file would deliver webhooks twice. So a server on SQLite holds a lease in its
// database while it runs, and a second one is refused at start with a sentence that says why. A lease
// whose holder stopped (it gives it back), died (its process is gone from this host), or went silent for
// LEASE_EXPIRES_MS is taken over. The CLI's other commands take no lease: they may run beside the server.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigError } from '../config.ts';
import type { Deps } from '../deps.ts';
import {
  beatServerLease,
  releaseServerLease,
  type ServerLeaseRow,
  takeServerLease,
} from '../store/server-lease.ts';

const LEASE = 'sqlite-server';
/** How often the holder says it is alive. */
const HEARTBEAT_MS = 5_000;
/** A holder silent this long is taken for gone (a process on another host sharing the file, frozen). */
const LEASE_EXPIRES_MS = 30_000;
/** How long a start waits for a holder that is still there: a server being restarted is still stopping. */
const START_WAIT_MS = 10_000;

export interface ServerLease {
  release(): Promise<void>;
}

/** Whether process `pid` runs on this host (EPERM: it runs, under another user). */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the server lease of a SQLite database, waiting up to START_WAIT_MS for a holder that is still
 * there; throws ConfigError naming the holder when it stays. `onLost` is called if the lease is ever
 * found taken over (this process was silent too long): the server must stop. Nothing on PostgreSQL.
 */
export async function holdServerLease(deps: Deps, onLost: () => void): Promise<ServerLease | undefined> {
  if (deps.db.dialect !== 'sqlite') return undefined;
  const claim = { name: LEASE, holder: randomUUID(), host: hostname(), pid: process.pid };
  const canTake = (held: ServerLeaseRow, now: number) =>
    Number(held.heartbeat_at) <= now - LEASE_EXPIRES_MS ||
    (held.host === claim.host && (held.pid === claim.pid || !isRunning(held.pid)));
  const giveUpAt = performance.now() + START_WAIT_MS;
  for (;;) {
    const now = deps.clock.now();
    const held = await takeServerLease(deps.db.kysely, { ...claim, now }, (row) => canTake(row, now));
    if (!held) break;
    if (performance.now() >= giveUpAt) {
      const seen = Math.max(0, Math.round((now - Number(held.heartbeat_at)) / 1000));
      throw new ConfigError(
        `the SQLite database ${deps.config.databaseUrl} is in use by another server (process ${held.pid} on ${held.host}, alive ${seen} s ago). One server process runs on a SQLite file: stop that one first, or run several servers on PostgreSQL (see docs/operations.md).`,
      );
    }
    await sleep(250);
  }
  let beating: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    beating = beatServerLease(deps.db.kysely, { name: LEASE, holder: claim.holder, now: deps.clock.now() })
      .then((ours) => {
        if (ours) return;
        deps.logger.error('another server took this SQLite database over while this one was silent: stopping');
        clearInterval(timer);
        onLost();
      })
      .catch((error: unknown) => deps.logger.warn({ err: error }, 'server lease heartbeat failed'));
  }, HEARTBEAT_MS);
  timer.unref();
  return {
    async release() {
      clearInterval(timer);
      await beating;
      await releaseServerLease(deps.db.kysely, { name: LEASE, holder: claim.holder });
    },
  };
}
