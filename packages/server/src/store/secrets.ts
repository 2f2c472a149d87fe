// Secrets at rest (docs/operations.md#secrets-at-rest): the merchant's cart signing secret and session
// webhook secret, and each webhook endpoint's secret, are sealed with AES-256-GCM when a key is set
// (SECRETS_KEY, required in production) and stored as `enc:v1:<key id>:<iv>:<ciphertext and tag>`. The
// store seals as it writes a row and opens as it maps one (toMerchant, toEndpoint): every layer above
// sees plaintext. Without a key, secrets are stored as they are; a plaintext value is always read as
// it is, so a database from before encryption keeps working until `group-checkout secrets rotate`.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { Executor } from './schema.ts';

const VERSION = 'enc:v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_ID_LENGTH = 12;

/**
 * A key's id: the first 12 hex characters of a SHA-256 of it. Names the key without revealing it.
 * @internal Exported for its tests.
 */
export function secretsKeyId(key: Buffer): string {
  return createHash('sha256')
    .update('group-checkout secrets key\n')
    .update(key)
    .digest('hex')
    .slice(0, KEY_ID_LENGTH);
}

/**
 * The key id of a stored value, or undefined for a value stored as plaintext.
 * @internal Exported for its tests.
 */
export function sealedKeyId(stored: string): string | undefined {
  return stored.startsWith(VERSION)
    ? stored.slice(VERSION.length, VERSION.length + KEY_ID_LENGTH)
    : undefined;
}

export interface SecretKeys {
  /** Seals every value written, and opens values sealed with it. */
  current?: Buffer | undefined;
  /** Only opens: the key before the last rotation, until `secrets rotate` has resealed everything. */
  previous?: Buffer | undefined;
}

export class SecretBox {
  readonly currentKeyId: string | undefined;
  readonly #current: Buffer | undefined;
  readonly #keys = new Map<string, Buffer>();

  constructor(keys: SecretKeys = {}) {
    for (const key of [keys.previous, keys.current]) {
      if (key && key.length !== 32) throw new Error('a secrets key must be 32 bytes');
      if (key) this.#keys.set(secretsKeyId(key), key);
    }
    this.#current = keys.current;
    this.currentKeyId = keys.current && secretsKeyId(keys.current);
  }

  /** Whether values sealed with this key id can be opened. */
  knows(keyId: string): boolean {
    return this.#keys.has(keyId);
  }

  /**
   * The value as it is to be stored: sealed with the current key, or as it is without one. `context`
   * (table, column and row id) is bound to the ciphertext, so a sealed value copied into another row
   * or column does not open there.
   */
  seal(plaintext: string, context: string): string {
    const key = this.#current;
    if (!key || !this.currentKeyId) return plaintext;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(context));
    const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${VERSION}${this.currentKeyId}:${iv.toString('base64')}:${sealed.toString('base64')}`;
  }

  /** The plaintext of a stored value. Throws when it was sealed with a key this box does not hold, or altered. */
  open(stored: string, context: string): string {
    const keyId = sealedKeyId(stored);
    if (keyId === undefined) return stored;
    const key = this.#keys.get(keyId);
    if (!key) {
      throw new Error(
        `a stored secret (${context}) is sealed with key ${keyId}, which is neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS`,
      );
    }
    const [iv = '', body = ''] = stored.slice(VERSION.length + KEY_ID_LENGTH + 1).split(':');
    const sealed = Buffer.from(body, 'base64');
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64'));
      decipher.setAAD(Buffer.from(context));
      decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
      return Buffer.concat([
        decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES)),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      throw new Error(
        `a stored secret (${context}) does not open with key ${keyId}: it was altered or moved`,
      );
    }
  }

  /** Whether a stored value is as `seal` would write it now (sealed with the current key, or plaintext without one). */
  isCurrent(stored: string): boolean {
    return sealedKeyId(stored) === this.currentKeyId;
  }
}

/** Plaintext storage: what a Db uses when no key is configured. */
export const NO_KEYS = new SecretBox();

/** Every column that holds a secret, with the table's id column. */
export const SECRET_COLUMNS = [
  { table: 'merchants', column: 'signing_secret' },
  { table: 'merchants', column: 'session_webhook_secret' },
  { table: 'merchants', column: 'previous_signing_secret' },
  { table: 'merchants', column: 'previous_session_webhook_secret' },
  { table: 'webhook_endpoints', column: 'secret' },
  { table: 'webhook_endpoints', column: 'previous_secret' },
] as const;

export type SecretColumn = (typeof SECRET_COLUMNS)[number];

/** What `seal` and `open` bind a column's values to. */
export const secretContext = (where: SecretColumn, id: string): string =>
  `${where.table}.${where.column}:${id}`;

/** How many stored secrets each key sealed (`keyId` null: stored as plaintext), over every secret column. */
export async function countSecretsByKey(db: Executor): Promise<{ keyId: string | null; count: number }[]> {
  const counts = new Map<string | null, number>();
  for (const { table, column } of SECRET_COLUMNS) {
    const { rows } = await sql<{ key_id: string | null; n: number | string }>`
      select case when ${sql.ref(column)} like ${`${VERSION}%`}
               then substr(${sql.ref(column)}, ${sql.lit(VERSION.length + 1)}, ${sql.lit(KEY_ID_LENGTH)}) end as key_id,
             count(*) as n
      from ${sql.table(table)} where ${sql.ref(column)} is not null group by 1`.execute(db);
    for (const row of rows) counts.set(row.key_id, (counts.get(row.key_id) ?? 0) + Number(row.n));
  }
  return [...counts].map(([keyId, count]) => ({ keyId, count }));
}

/** Up to `limit` rows of a secret column not sealed with `keyId`, by id, after `afterId`. */
export async function listSecretsNotSealedWith(
  db: Executor,
  where: SecretColumn,
  keyId: string,
  afterId: string,
  limit: number,
): Promise<{ id: string; value: string }[]> {
  const { rows } = await sql<{ id: string; value: string }>`
    select id, ${sql.ref(where.column)} as value from ${sql.table(where.table)}
    where ${sql.ref(where.column)} is not null and ${sql.ref(where.column)} not like ${`${VERSION}${keyId}:%`}
      and id > ${afterId}
    order by id limit ${limit}`.execute(db);
  return rows;
}

/** Replaces a stored secret if it is still `from` (a roll in between wins); answers whether it did. */
export async function replaceStoredSecret(
  db: Executor,
  where: SecretColumn,
  id: string,
  from: string,
  to: string,
): Promise<boolean> {
  const result = await sql`
    update ${sql.table(where.table)} set ${sql.ref(where.column)} = ${to}
    where id = ${id} and ${sql.ref(where.column)} = ${from}`.execute(db);
  return Number(result.numAffectedRows ?? 0) === 1;
}
