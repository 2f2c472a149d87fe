// The keys stored secrets are sealed with (docs/operations.md#secrets-at-rest): checked against the
// database at every start, and rotated by `group-checkout secrets rotate`.
import { type Config, ConfigError } from '../config.ts';
import type { Db } from '../store/db.ts';
import {
  countSecretsByKey,
  listSecretsNotSealedWith,
  replaceStoredSecret,
  SECRET_COLUMNS,
  SecretBox,
  secretContext,
} from '../store/secrets.ts';

/** The keys of SECRETS_KEY and SECRETS_KEY_PREVIOUS, as the store seals and opens with them. */
export const secretBoxFor = (config: Pick<Config, 'secretsKey' | 'secretsKeyPrevious'>): SecretBox =>
  new SecretBox({ current: config.secretsKey, previous: config.secretsKeyPrevious });

export interface SecretsSurvey {
  /** Secrets stored as plaintext: written before a key was set. */
  plaintext: number;
  /** Secrets sealed with SECRETS_KEY_PREVIOUS, waiting for `secrets rotate`. */
  underPrevious: number;
}

/**
 * Refuses to start (ConfigError, one line) when a stored secret is sealed with a key that is neither
 * SECRETS_KEY nor SECRETS_KEY_PREVIOUS: a wrong key would otherwise start and fail on every request.
 * Answers what a rotation would still have to reseal.
 */
export async function checkStoredSecrets(db: Db): Promise<SecretsSurvey> {
  const counts = await countSecretsByKey(db.kysely);
  const unknown = counts.filter((c) => c.keyId !== null && !db.secrets.knows(c.keyId));
  if (unknown.length > 0) {
    const total = unknown.reduce((n, c) => n + c.count, 0);
    const keys = unknown.map((c) => c.keyId).join(', ');
    throw new ConfigError(
      db.secrets.currentKeyId === undefined
        ? `SECRETS_KEY is not set, but ${total} stored secrets are sealed with key ${keys}: set that key as SECRETS_KEY`
        : `SECRETS_KEY does not open the stored secrets: ${total} are sealed with key ${keys}, which is neither SECRETS_KEY (key ${db.secrets.currentKeyId}) nor SECRETS_KEY_PREVIOUS`,
    );
  }
  const count = (match: (keyId: string | null) => boolean) =>
    counts.filter((c) => match(c.keyId)).reduce((n, c) => n + c.count, 0);
  return {
    plaintext: db.secrets.currentKeyId === undefined ? 0 : count((keyId) => keyId === null),
    underPrevious: count((keyId) => keyId !== null && keyId !== db.secrets.currentKeyId),
  };
}

const PAGE = 200;

/**
 * Reseals every stored secret that is not sealed with SECRETS_KEY (plaintext ones included), row by
 * row, each a compare-and-set so that a secret rolled meanwhile is not overwritten. Answers how many
 * were resealed and how many still are not under the current key (0 unless something wrote meanwhile
 * with another key: run it again).
 */
export async function rotateSecrets(db: Db): Promise<{ resealed: number; remaining: number; keyId: string }> {
  const keyId = db.secrets.currentKeyId;
  if (keyId === undefined) throw new ConfigError('secrets rotate needs SECRETS_KEY: the key to seal with');
  await checkStoredSecrets(db);
  let resealed = 0;
  for (const where of SECRET_COLUMNS) {
    let after = '';
    for (;;) {
      const page = await listSecretsNotSealedWith(db.kysely, where, keyId, after, PAGE);
      for (const { id, value } of page) {
        const context = secretContext(where, id);
        const fresh = db.secrets.seal(db.secrets.open(value, context), context);
        if (await replaceStoredSecret(db.kysely, where, id, value, fresh)) resealed++;
      }
      if (page.length < PAGE) break;
      after = (page.at(-1) as { id: string }).id;
    }
  }
  const left = await checkStoredSecrets(db);
  return { resealed, remaining: left.plaintext + left.underPrevious, keyId };
}
