// Merchants and their API keys. Keys are stored as SHA-256 hashes; a secret key is shown once.
import { type Selectable, sql, type Transaction } from 'kysely';
import type { PreviousSecret } from '../domain/rotation.ts';
import { ids, KEY_PREFIX_LENGTH, type KeyEnvironment, sha256 } from '../ids.ts';
import type { Db } from './db.ts';
import { prepared } from './prepared.ts';
import type { Database, Executor, MerchantsTable } from './schema.ts';
import { type SecretBox, type SecretColumn, secretContext } from './secrets.ts';

export interface Merchant {
  id: string;
  name: string;
  environment: KeyEnvironment;
  headlessApiEnabled: boolean;
  payoutMode: 'checkout' | 'preferred';
  payoutCurrency: string | null;
  merchantFeePpm: number;
  consumerFeePpm: number;
  fxFeePpm: number;
  signingSecret: string;
  sessionWebhookSecret: string;
  /** The signing secret before the last roll, while it still verifies carts (domain/rotation.ts). */
  previousSigningSecret: PreviousSecret | null;
  /** The session webhook secret before the last roll: deliveries are signed with both until it ends. */
  previousSessionWebhookSecret: PreviousSecret | null;
  allowedOrigins: string[];
  processorAccountId: string | null;
  createdAt: number;
}

const SIGNING_SECRET = { table: 'merchants', column: 'signing_secret' } as const;
const SESSION_WEBHOOK_SECRET = { table: 'merchants', column: 'session_webhook_secret' } as const;
const PREVIOUS_SIGNING_SECRET = { table: 'merchants', column: 'previous_signing_secret' } as const;
const PREVIOUS_SESSION_WEBHOOK_SECRET = {
  table: 'merchants',
  column: 'previous_session_webhook_secret',
} as const;

function toPrevious(
  secrets: SecretBox,
  where: SecretColumn,
  merchantId: string,
  stored: string | null,
  expiresAt: number | null,
): PreviousSecret | null {
  if (stored === null || expiresAt === null) return null;
  return { secret: secrets.open(stored, secretContext(where, merchantId)), expiresAt };
}

/** The one place a merchant row becomes a Merchant: its secrets are opened here (store/secrets.ts). */
function toMerchant(row: Selectable<MerchantsTable>, secrets: SecretBox): Merchant {
  return {
    id: row.id,
    name: row.name,
    environment: row.environment,
    headlessApiEnabled: row.headless_api_enabled === 1,
    payoutMode: row.payout_mode,
    payoutCurrency: row.payout_currency,
    merchantFeePpm: row.merchant_fee_ppm,
    consumerFeePpm: row.consumer_fee_ppm,
    fxFeePpm: row.fx_fee_ppm,
    signingSecret: secrets.open(row.signing_secret, secretContext(SIGNING_SECRET, row.id)),
    sessionWebhookSecret: secrets.open(
      row.session_webhook_secret,
      secretContext(SESSION_WEBHOOK_SECRET, row.id),
    ),
    previousSigningSecret: toPrevious(
      secrets,
      PREVIOUS_SIGNING_SECRET,
      row.id,
      row.previous_signing_secret,
      row.previous_signing_secret_expires_at,
    ),
    previousSessionWebhookSecret: toPrevious(
      secrets,
      PREVIOUS_SESSION_WEBHOOK_SECRET,
      row.id,
      row.previous_session_webhook_secret,
      row.previous_session_webhook_secret_expires_at,
    ),
    allowedOrigins: JSON.parse(row.allowed_origins) as string[],
    processorAccountId: row.processor_account_id,
    createdAt: row.created_at,
  };
}

export type KeyKind = 'publishable' | 'secret';

/** An API key as stored: its prefix (shown to operators, the unit of failed-auth limits) and its hash. */
function keyRow(merchantId: string, key: string, kind: KeyKind, env: KeyEnvironment, now: number) {
  return {
    id: ids.apiKey(),
    merchant_id: merchantId,
    kind,
    environment: env,
    prefix: key.slice(0, KEY_PREFIX_LENGTH),
    key_hash: sha256(key),
    shown: kind === 'publishable' ? key : null,
    created_at: now,
    revoked_at: null,
    expires_at: null,
  };
}

/** Inserts the merchant and its keys (given in full: the defaults are the caller's, flows/merchants.ts). */
export async function insertMerchant(
  trx: Transaction<Database>,
  secrets: SecretBox,
  merchant: Merchant,
  keys: { key: string; kind: KeyKind }[],
): Promise<void> {
  await trx
    .insertInto('merchants')
    .values({
      id: merchant.id,
      name: merchant.name,
      environment: merchant.environment,
      headless_api_enabled: merchant.headlessApiEnabled ? 1 : 0,
      payout_mode: merchant.payoutMode,
      payout_currency: merchant.payoutCurrency,
      merchant_fee_ppm: merchant.merchantFeePpm,
      consumer_fee_ppm: merchant.consumerFeePpm,
      fx_fee_ppm: merchant.fxFeePpm,
      signing_secret: secrets.seal(merchant.signingSecret, secretContext(SIGNING_SECRET, merchant.id)),
      session_webhook_secret: secrets.seal(
        merchant.sessionWebhookSecret,
        secretContext(SESSION_WEBHOOK_SECRET, merchant.id),
      ),
      ...previousColumns(secrets, merchant.id, 'signing', merchant.previousSigningSecret),
      ...previousColumns(secrets, merchant.id, 'session_webhook', merchant.previousSessionWebhookSecret),
      allowed_origins: JSON.stringify(merchant.allowedOrigins),
      processor_account_id: merchant.processorAccountId,
      created_at: merchant.createdAt,
    })
    .execute();
  await trx
    .insertInto('api_keys')
    .values(
      keys.map(({ key, kind }) => keyRow(merchant.id, key, kind, merchant.environment, merchant.createdAt)),
    )
    .execute();
}

export type MerchantSecret = 'signing' | 'session_webhook';

const COLUMNS = {
  signing: { current: SIGNING_SECRET, previous: PREVIOUS_SIGNING_SECRET },
  session_webhook: { current: SESSION_WEBHOOK_SECRET, previous: PREVIOUS_SESSION_WEBHOOK_SECRET },
} as const;

/** The previous-secret columns of `which`: the secret sealed and when it ends, or both null. */
function previousColumns(
  secrets: SecretBox,
  merchantId: string,
  which: MerchantSecret,
  previous: PreviousSecret | null,
): Partial<Record<'previous_signing_secret' | 'previous_session_webhook_secret', string | null>> &
  Partial<
    Record<'previous_signing_secret_expires_at' | 'previous_session_webhook_secret_expires_at', number | null>
  > {
  const where = COLUMNS[which].previous;
  return {
    [where.column]: previous && secrets.seal(previous.secret, secretContext(where, merchantId)),
    [`${where.column}_expires_at`]: previous?.expiresAt ?? null,
  };
}

/** Replaces the merchant's signing or session webhook secret, and the previous one with its end. */
export async function replaceMerchantSecret(
  trx: Transaction<Database>,
  secrets: SecretBox,
  merchantId: string,
  which: MerchantSecret,
  secret: string,
  previous: PreviousSecret | null,
): Promise<void> {
  const where = COLUMNS[which].current;
  await trx
    .updateTable('merchants')
    .set({
      [where.column]: secrets.seal(secret, secretContext(where, merchantId)),
      ...previousColumns(secrets, merchantId, which, previous),
    })
    .where('id', '=', merchantId)
    .execute();
}

/** Every merchant's id (the housekeeping sweep goes merchant by merchant). */
export async function listMerchantIds(db: Executor): Promise<string[]> {
  const rows = await db.selectFrom('merchants').select('id').orderBy('id').execute();
  return rows.map((r) => r.id);
}

/** Sets the merchant's account at the payment processor; false for no such merchant. */
export async function updateProcessorAccount(
  db: Executor,
  merchantId: string,
  processorAccountId: string,
): Promise<boolean> {
  const result = await db
    .updateTable('merchants')
    .set({ processor_account_id: processorAccountId })
    .where('id', '=', merchantId)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Sets the merchant's processor account only when it has none yet: an account made by onboarding never
 * replaces one an operator set meanwhile. Answers whether it was set.
 */
export async function setProcessorAccountIfNone(
  db: Executor,
  merchantId: string,
  processorAccountId: string,
): Promise<boolean> {
  const result = await db
    .updateTable('merchants')
    .set({ processor_account_id: processorAccountId })
    .where('id', '=', merchantId)
    .where('processor_account_id', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Replaces the merchant's registered origins (canonical, docs/api.md#origins). */
export async function updateAllowedOrigins(
  trx: Transaction<Database>,
  merchantId: string,
  origins: readonly string[],
): Promise<void> {
  await trx
    .updateTable('merchants')
    .set({ allowed_origins: JSON.stringify(origins) })
    .where('id', '=', merchantId)
    .execute();
}

export async function findMerchantById(
  db: Executor,
  secrets: SecretBox,
  merchantId: string,
): Promise<Merchant | undefined> {
  const row = await byId.first(db, { merchantId });
  return row && toMerchant(row, secrets);
}

const byId = prepared((db, p: { merchantId: string }) =>
  db.selectFrom('merchants').selectAll().where('id', '=', p.merchantId),
);

/**
 * The merchant's name (what the pay pages and answers show); on SQLite from a read cache kept until the
 * merchants table is written (read-cache.ts). Empty for an unknown merchant.
 */
export async function findMerchantName(db: Db, merchantId: string): Promise<string> {
  const cache = db.readCache<{ name: string }>('merchant-names', { tables: ['merchants'] });
  const load = async () => {
    const row = await nameQuery.first(db.kysely, { merchantId });
    return row && { name: row.name };
  };
  return (cache ? await cache.get(merchantId, load) : await load())?.name ?? '';
}

const nameQuery = prepared((db, p: { merchantId: string }) =>
  db.selectFrom('merchants').select('name').where('id', '=', p.merchantId),
);

/** A share as the pay route reads it before its claim: the member's ids and its merchant's name. */
export interface ShareToPay {
  id: string;
  sessionId: string;
  shareId: string;
  merchantName: string;
}

/**
 * The share `shareId` with the name of its merchant, in one statement (no cache: the name joined to the
 * member's row costs nothing more on either database, where a read of its own is a round trip on
 * PostgreSQL). The claim reads the member again under the session's lock; this read only finds it.
 */
export async function findShareToPay(db: Executor, shareId: string): Promise<ShareToPay | undefined> {
  const row = await shareToPayQuery.first(db, { shareId });
  return row && { id: row.id, sessionId: row.session_id, shareId: row.share_id, merchantName: row.name };
}

const shareToPayQuery = prepared((db, p: { shareId: string }) =>
  db
    .selectFrom('members')
    .innerJoin('merchants', 'merchants.id', 'members.merchant_id')
    .select(['members.id', 'members.session_id', 'members.share_id', 'merchants.name'])
    .where('members.share_id', '=', p.shareId),
);

export async function countMerchants(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('merchants')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export interface ApiKeyWithMerchant {
  keyId: string;
  kind: KeyKind;
  environment: KeyEnvironment;
  keyHash: string;
  /** When the key stops working: null while it has no end; the end of a roll's grace period. */
  expiresAt: number | null;
  merchant: Merchant;
}

/**
 * The key with this hash that works at `now` (not revoked, and not past its end), with its merchant.
 * On SQLite authentication costs no query while nothing was written (read-cache.ts); the answer is
 * frozen. A cached key is checked against `now` each time, so a key whose grace period ends stops
 * working at that moment, however long it has been cached.
 */
export async function findActiveKeyByHash(
  db: Db,
  keyHash: string,
  now: number,
): Promise<ApiKeyWithMerchant | undefined> {
  const cache = db.readCache<ApiKeyWithMerchant>('active-keys', { tables: ['api_keys', 'merchants'] });
  const found = cache
    ? await cache.get(keyHash, () => readActiveKey(db.kysely, db.secrets, keyHash, now))
    : await readActiveKey(db.kysely, db.secrets, keyHash, now);
  return found && (found.expiresAt === null || now < found.expiresAt) ? found : undefined;
}

async function readActiveKey(
  db: Executor,
  secrets: SecretBox,
  keyHash: string,
  now: number,
): Promise<ApiKeyWithMerchant | undefined> {
  const row = await activeKeyQuery.first(db, { keyHash, now });
  if (!row) return undefined;
  return {
    keyId: row.key_id,
    kind: row.key_kind,
    environment: row.key_environment,
    keyHash: row.key_hash,
    expiresAt: row.key_expires_at,
    merchant: toMerchant(row, secrets),
  };
}

const activeKeyQuery = prepared((db, p: { keyHash: string; now: number }) =>
  db
    .selectFrom('api_keys')
    .innerJoin('merchants', 'merchants.id', 'api_keys.merchant_id')
    .selectAll('merchants')
    .select([
      'api_keys.id as key_id',
      'api_keys.kind as key_kind',
      'api_keys.environment as key_environment',
      'api_keys.key_hash as key_hash',
      'api_keys.expires_at as key_expires_at',
    ])
    .where('api_keys.key_hash', '=', p.keyHash)
    .where('api_keys.revoked_at', 'is', null)
    .where((eb) => eb.or([eb('api_keys.expires_at', 'is', null), eb('api_keys.expires_at', '>', p.now)])),
);

/** Revokes the merchant's live keys of `kind`: they stop working at once. Answers their hashes. */
export async function revokeKeys(
  trx: Transaction<Database>,
  merchantId: string,
  kind: KeyKind,
  now: number,
): Promise<string[]> {
  const revoked = await trx
    .updateTable('api_keys')
    .set({ revoked_at: now })
    .where('merchant_id', '=', merchantId)
    .where('kind', '=', kind)
    .where('revoked_at', 'is', null)
    .returning('key_hash')
    .execute();
  return revoked.map((r) => r.key_hash);
}

/**
 * Sets the end of the merchant's unrevoked keys of `kind` to `at` (the end of a grace period); a key
 * already ending sooner keeps its end. Answers their hashes.
 */
export async function expireKeys(
  trx: Transaction<Database>,
  merchantId: string,
  kind: KeyKind,
  at: number,
): Promise<string[]> {
  const expiring = await trx
    .updateTable('api_keys')
    .set({ expires_at: at })
    .where('merchant_id', '=', merchantId)
    .where('kind', '=', kind)
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', at)]))
    .returning('key_hash')
    .execute();
  return expiring.map((r) => r.key_hash);
}

export async function insertKey(
  trx: Transaction<Database>,
  merchant: Pick<Merchant, 'id' | 'environment'>,
  key: string,
  kind: KeyKind,
  now: number,
): Promise<void> {
  await trx
    .insertInto('api_keys')
    .values(keyRow(merchant.id, key, kind, merchant.environment, now))
    .execute();
}

/**
 * PostgreSQL: locks the merchant's row until the transaction ends and answers the created_at of its next
 * session, `now` or the millisecond after its newest session's, whichever is later
 * (docs/decisions.md#session-list-paging), in one statement. An update rather than a read after the
 * lock: a create that waited for another's lock computes from the row that one committed (PostgreSQL
 * evaluates the update again on the newest version of the row), where a read in the same statement
 * would see only what had committed before it began. The sessions are read too, for a merchant whose
 * row has no time yet and for any session written another way; the unique index and the caller's retry
 * stay the backstop.
 */
export async function takeSessionCreatedAt(
  trx: Transaction<Database>,
  merchantId: string,
  now: number,
): Promise<number> {
  const row = await sessionTimeQuery.first(trx, { merchantId, now });
  if (row?.last_session_at == null) throw new Error(`merchant ${merchantId} not found`);
  return Number(row.last_session_at);
}

const sessionTimeQuery = prepared((db, p: { merchantId: string; now: number }) =>
  db
    .updateTable('merchants')
    .set({
      last_session_at: sql<number>`greatest(${p.now}, greatest("last_session_at", (select max("created_at") from "sessions" where "merchant_id" = ${p.merchantId})) + 1)`,
    })
    .where('id', '=', p.merchantId)
    .returning('last_session_at'),
);

/**
 * Locks the merchant row until the transaction ends, so that checks against a per-merchant cap (16
 * webhook endpoints) cannot be passed by concurrent requests. PostgreSQL only: on SQLite a writing
 * transaction already holds the database's single write lock.
 */
export async function lockMerchantRow(trx: Transaction<Database>, merchantId: string): Promise<void> {
  await trx.selectFrom('merchants').select('id').where('id', '=', merchantId).forUpdate().execute();
}
