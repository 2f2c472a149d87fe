// Merchants and their API keys. Secret keys are stored as SHA-256 hashes and shown once.
import type { Kysely, Selectable } from 'kysely';
import { DEFAULT_CONSUMER_FEE_PPM, DEFAULT_FX_FEE_PPM, DEFAULT_MERCHANT_FEE_PPM } from '../domain/fees.ts';
import { ids, type KeyEnvironment, sha256 } from '../ids.ts';
import { ReadCache } from './read-cache.ts';
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
/** Keys found, per database: authentication costs no query while nothing was written (read-cache.ts). */
const keyCaches = new WeakMap<Kysely<Database>, ReadCache<ApiKeyWithMerchant>>();

export async function findActiveKeyByHash(
  db: Kysely<Database>,
  keyHash: string,
): Promise<ApiKeyWithMerchant | undefined> {
  let cache = keyCaches.get(db);
  if (!cache) {
    cache = new ReadCache(db);
    keyCaches.set(db, cache);
  }
  return cache.get(keyHash, () => readActiveKey(db, keyHash));
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
  return db.transaction().execute(async (trx) => {
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
    const secretKey = ids.secretKey(merchant.environment);
    await trx
      .insertInto('api_keys')
      .values(keyRow(merchantId, secretKey, 'secret', merchant.environment, now))
      .execute();
    return { secretKey, revokedHashes: revoked.map((r) => r.key_hash) };
  });
}

export type { ApiKeysTable };
