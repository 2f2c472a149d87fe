// Server leases (docs/operations.md#one-server-per-sqlite-file): one row per lease, naming the process that
// holds it and when it last said it was alive.
import type { Kysely, Selectable } from 'kysely';
import type { Database, ServerLeasesTable } from './schema.ts';

export type ServerLeaseRow = Selectable<ServerLeasesTable>;

export interface LeaseClaim {
  name: string;
  holder: string;
  host: string;
  pid: number;
  now: number;
}

/**
 * Takes the lease for `claim` when nobody holds it or `canTake` says its holder is gone; answers the
 * holder's row when it is kept, undefined when the lease is now the claim's. One write transaction.
 */
export async function takeServerLease(
  db: Kysely<Database>,
  claim: LeaseClaim,
  canTake: (held: ServerLeaseRow) => boolean,
): Promise<ServerLeaseRow | undefined> {
  const row = { name: claim.name, holder: claim.holder, host: claim.host, pid: claim.pid, heartbeat_at: claim.now };
  return db.transaction().execute(async (trx) => {
    // A write first: the transaction holds SQLite's write lock before it reads, so two processes starting
    // together cannot both find the lease free.
    await trx.updateTable('server_leases').set({ name: claim.name }).where('name', '=', claim.name).execute();
    const held = await trx.selectFrom('server_leases').selectAll().where('name', '=', claim.name).executeTakeFirst();
    if (!held) {
      await trx.insertInto('server_leases').values(row).execute();
      return undefined;
    }
    if (held.holder !== claim.holder && !canTake(held)) return held;
    await trx.updateTable('server_leases').set(row).where('name', '=', claim.name).execute();
    return undefined;
  });
}

/** Says the holder is alive; false when the lease is no longer the holder's. */
export async function beatServerLease(
  db: Kysely<Database>,
  lease: { name: string; holder: string; now: number },
): Promise<boolean> {
  const result = await db
    .updateTable('server_leases')
    .set({ heartbeat_at: lease.now })
    .where('name', '=', lease.name)
    .where('holder', '=', lease.holder)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Gives the lease back, if it is still the holder's. */
export async function releaseServerLease(db: Kysely<Database>, lease: { name: string; holder: string }) {
  await db
    .deleteFrom('server_leases')
    .where('name', '=', lease.name)
    .where('holder', '=', lease.holder)
    .execute();
}
