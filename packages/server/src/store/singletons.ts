// One-time set-ups that several processes may race to do (the sandbox's demo merchant): the first
// transaction to write the set-up's row does it; a concurrent one waits for it (the row's key is unique)
// and then finds the row there.
import { sql, type Transaction } from 'kysely';
import type { Database } from './schema.ts';

/** Writes the row of the set-up `name` in `trx`; false when another transaction wrote it first. */
export async function claimSingleton(
  trx: Transaction<Database>,
  name: string,
  now: number,
): Promise<boolean> {
  const { rows } = await sql<{ name: string }>`
    insert into singletons (name, created_at) values (${name}, ${now})
    on conflict (name) do nothing
    returning name`.execute(trx);
  return rows.length === 1;
}
