// Merchants and their API keys. Secret keys are stored as SHA-256 hashes and shown once.
import type { Kysely, Selectable } from 'kysely';
import { DEFAULT_CONSUMER_FEE_PPM, DEFAULT_FX_FEE_PPM, DEFAULT_MERCHANT_FEE_PPM } from '../domain/fees.ts';
import { ids, type KeyEnvironment, sha256 } from '../ids.ts';
import { sqliteDataVersion } from './db.ts';
import type { ApiKeysTable, Database, MerchantsTable } from './schema.ts';

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
  allowedOrigins: string[];
  processorAccountId: string | null;
  createdAt: number;
}

export const KEY_PREFIX_LENGTH = 16;

function toMerchant(row: Selectable<MerchantsTable>): Merchant {
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
    signingSecret: row.signing_secret,
    sessionWebhookSecret: row.session_webhook_secret,
    allowedOrigins: JSON.parse(row.allowed_origins) as string[],
    processorAccountId: row.processor_account_id,
    createdAt: row.created_at,
  };
}

export interface NewMerchant {
  name: string;
  environment: KeyEnvironment;
  headlessApiEnabled: boolean;
  payoutCurrency: string | null;
  allowedOrigins: string[];
}

export interface CreatedMerchant {
  merchant: Merchant;
  publishableKey: string;
  secretKey: string;
}

function keyRow(
  merchantId: string,
  key: string,
  kind: 'publishable' | 'secret',
  env: KeyEnvironment,
  now: number,
) {
  return {
    id: ids.apiKey(),
    merchant_id: merchantId,
    kind,
    environment: env,
    prefix: key.slice(0, KEY_PREFIX_LENGTH),
    key_hash: sha256(key),
    created_at: now,
    revoked_at: null,
  };
}

export async function insertMerchant(
  db: Kysely<Database>,
  input: NewMerchant,
  now: number,
): Promise<CreatedMerchant> {
  const env = input.environment;
  const row: Selectable<MerchantsTable> = {
    id: ids.merchant(),
    name: input.name,
    environment: env,
    headless_api_enabled: input.headlessApiEnabled ? 1 : 0,
    payout_mode: input.payoutCurrency ? 'preferred' : 'checkout',
    payout_currency: input.payoutCurrency,
    merchant_fee_ppm: DEFAULT_MERCHANT_FEE_PPM,
    consumer_fee_ppm: DEFAULT_CONSUMER_FEE_PPM,
    fx_fee_ppm: DEFAULT_FX_FEE_PPM,
    signing_secret: ids.signingSecret(env),
    session_webhook_secret: ids.webhookSecret(),
    allowed_origins: JSON.stringify(input.allowedOrigins),
    processor_account_id: null,
    created_at: now,
  };
  const publishableKey = ids.publishableKey(env);
  const secretKey = ids.secretKey(env);
  await db.transaction().execute(async (trx) => {
    await trx.insertInto('merchants').values(row).execute();
    await trx
      .insertInto('api_keys')
      .values([
        keyRow(row.id, publishableKey, 'publishable', env, now),
        keyRow(row.id, secretKey, 'secret', env, now),
      ])
      .execute();
  });
  return { merchant: toMerchant(row), publishableKey, secretKey };
}

export async function findMerchantById(
  db: Kysely<Database>,
  merchantId: string,
): Promise<Merchant | undefined> {
  const row = await db.selectFrom('merchants').selectAll().where('id', '=', merchantId).executeTakeFirst();
  return row && toMerchant(row);
}

export async function countMerchants(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom('merchants')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export interface ApiKeyWithMerchant {
  keyId: string;
  kind: 'publishable' | 'secret';
  environment: KeyEnvironment;
  keyHash: string;
  merchant: Merchant;
}

/** The live (unrevoked) key with this hash, with its merchant. */
/**
 * Keys found, per embedded SQLite database, so that authentication costs no query. Exact, not a TTL:
 * an entry is used only while SQLite's data_version says no other connection has written since it was
 * read, and this process's own writes to keys or merchants clear the cache. On PostgreSQL, where other
 * processes write unseen, every request reads the key.
 */
const keyCaches = new WeakMap<Kysely<Database>, KeyCache>();
const KEY_CACHE_MAX = 10_000;

interface KeyCache {
  /** SQLite data_version the entries were read under. */
  version: number;
  /** Bumped by every forget, so a read that raced a write is not cached. */
  generation: number;
  keys: Map<string, ApiKeyWithMerchant>;
}

/** Forgets every cached key of this database; call around writes to api_keys or merchants. */
export function forgetCachedKeys(db: Kysely<Database>): void {
  const cache = keyCaches.get(db);
  if (!cache) return;
  cache.keys.clear();
  cache.generation++;
}

export async function findActiveKeyByHash(
  db: Kysely<Database>,
  keyHash: string,
): Promise<ApiKeyWithMerchant | undefined> {
  const version = sqliteDataVersion(db);
  if (version === undefined) return readActiveKey(db, keyHash);
  let cache = keyCaches.get(db);
  if (!cache) {
    cache = { version, generation: 0, keys: new Map() };
    keyCaches.set(db, cache);
  } else if (cache.version !== version) {
    forgetCachedKeys(db);
    cache.version = version;
  }
  const cached = cache.keys.get(keyHash);
  if (cached) return cached;
  const generation = cache.generation;
  const found = await readActiveKey(db, keyHash);
  // Only hits are kept: a key created a moment ago must work at once, and misses are rate-limited anyway.
  if (found && cache.generation === generation && sqliteDataVersion(db) === cache.version) {
    if (cache.keys.size >= KEY_CACHE_MAX) cache.keys.clear();
    cache.keys.set(keyHash, found);
  }
  return found;
}

async function readActiveKey(db: Kysely<Database>, keyHash: string): Promise<ApiKeyWithMerchant | undefined> {
  const row = await db
    .selectFrom('api_keys')
    .innerJoin('merchants', 'merchants.id', 'api_keys.merchant_id')
    .selectAll('merchants')
    .select([
      'api_keys.id as key_id',
      'api_keys.kind as key_kind',
      'api_keys.environment as key_environment',
      'api_keys.key_hash as key_hash',
    ])
    .where('api_keys.key_hash', '=', keyHash)
    .where('api_keys.revoked_at', 'is', null)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    keyId: row.key_id,
    kind: row.key_kind,
    environment: row.key_environment,
    keyHash: row.key_hash,
    merchant: toMerchant(row),
  };
}

/** Revokes the merchant's secret keys and issues a new one, in one transaction. */
export async function rollSecretKey(
  db: Kysely<Database>,
  merchantId: string,
  now: number,
): Promise<{ secretKey: string; revokedHashes: string[] } | undefined> {
  const rolled = await db.transaction().execute(async (trx) => {
    const merchant = await trx
      .selectFrom('merchants')
      .select(['id', 'environment'])
      .where('id', '=', merchantId)
      .executeTakeFirst();
    if (!merchant) return undefined;
    const revoked = await trx
      .updateTable('api_keys')
      .set({ revoked_at: now })
      .where('merchant_id', '=', merchantId)
      .where('kind', '=', 'secret')
      .where('revoked_at', 'is', null)
      .returning('key_hash')
      .execute();
    forgetCachedKeys(db);
    const secretKey = ids.secretKey(merchant.environment);
    await trx
      .insertInto('api_keys')
      .values(keyRow(merchantId, secretKey, 'secret', merchant.environment, now))
      .execute();
    return { secretKey, revokedHashes: revoked.map((r) => r.key_hash) };
  });
  forgetCachedKeys(db);
  return rolled;
}

export type { ApiKeysTable };
