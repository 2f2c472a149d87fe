// What every command of the CLI is made of, and what they share: the command's shape, its errors, how it
// prints its answer and how it opens the database.
import { parseArgs } from 'node:util';
import type { Config, ServiceEnv } from '../config.ts';
import { originOfAddress } from '../domain/origins.ts';
import { checkStoredSecrets, secretBoxFor } from '../flows/secrets.ts';
import { type Db, openDb } from '../store/db.ts';
import { migrateToLatest } from '../store/migrations/index.ts';

interface Named {
  /** The words that name it: `merchant keys roll`. */
  name: string;
  /** Its options, as the help text shows them after the name. */
  usage: string;
}

/**
 * One command of the table in cli/index.ts. The service's configuration (DATABASE_URL, SECRETS_KEY…) is
 * loaded before the command reads its arguments, unless it says `config: false`: a client of the API,
 * like a merchant's server, needs a key and an address, no database.
 */
export type Command =
  | (Named & { config?: true; run(args: string[], config: Config): Promise<void> })
  | (Named & { config: false; run(args: string[]): Promise<void> });

/** The operator's mistake: one line on stderr, exit code 2. */
export class UsageError extends Error {}

/** Exit code 1 without a message on stderr: stdout already says what went wrong (reconcile's mismatches). */
export class SaidOnStdout extends Error {}

/** The command's answer on stdout: one JSON object with --json, else lines for a person. */
export function print(json: boolean, object: Record<string, unknown>, lines: string[]) {
  process.stdout.write(json ? `${JSON.stringify(object)}\n` : `${lines.join('\n')}\n`);
}

/** The arguments of a command whose one flag is --json: whether it was given. */
export function jsonFlag(args: string[]): boolean {
  const { values } = parseArgs({
    args,
    options: { json: { type: 'boolean', default: false } },
    strict: true,
  });
  return values.json ?? false;
}

/** Opens and migrates the database for one command, checks that SECRETS_KEY opens its secrets, and closes
 * it after. Nothing is logged: stdout is the command's answer (one JSON object with --json), stderr its
 * one-line error. */
export async function withDb<T>(config: Config, use: (db: Db) => Promise<T>): Promise<T> {
  const db = openDb(config.databaseUrl, { secrets: secretBoxFor(config) });
  try {
    await migrateToLatest(db);
    await checkStoredSecrets(db);
    return await use(db);
  } finally {
    await db.close();
  }
}

/** An --allowed-origin as typed (a page's address will do), as its canonical origin; a usage error if none. */
export function originArgument(raw: string, env: ServiceEnv): string {
  const parsed = originOfAddress(raw, env);
  if (!parsed.ok) {
    throw new UsageError(
      `--allowed-origin must be a web origin such as https://shop.example${env === 'sandbox' ? ' (or http://localhost:PORT)' : ''}: ${parsed.reason}; got "${raw.slice(0, 80)}"`,
    );
  }
  return parsed.origin;
}
