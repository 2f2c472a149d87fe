// Merchant administration (the CLI, the sandbox's demo merchant): a new merchant gets the default fee
// rates, a publishable and a secret key, a cart signing secret and a session webhook secret
// (docs/api.md#ids-and-key-formats); a secret key can be rolled, the old one ending at once.
import { DEFAULT_CONSUMER_FEE_PPM, DEFAULT_FX_FEE_PPM, DEFAULT_MERCHANT_FEE_PPM } from '../domain/fees.ts';
import { ids, type KeyEnvironment } from '../ids.ts';
import type { Db } from '../store/db.ts';
import {
  countMerchants as countMerchantRows,
  findMerchantById,
  insertKey,
  insertMerchant,
  type Merchant,
  revokeKeys,
} from '../store/merchants.ts';

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

export async function createMerchant(db: Db, input: NewMerchant, now: number): Promise<CreatedMerchant> {
  const env = input.environment;
  const merchant: Merchant = {
    id: ids.merchant(),
    name: input.name,
    environment: env,
    headlessApiEnabled: input.headlessApiEnabled,
    payoutMode: input.payoutCurrency ? 'preferred' : 'checkout',
    payoutCurrency: input.payoutCurrency,
    merchantFeePpm: DEFAULT_MERCHANT_FEE_PPM,
    consumerFeePpm: DEFAULT_CONSUMER_FEE_PPM,
    fxFeePpm: DEFAULT_FX_FEE_PPM,
    signingSecret: ids.signingSecret(env),
    sessionWebhookSecret: ids.webhookSecret(),
    allowedOrigins: input.allowedOrigins,
    processorAccountId: null,
    createdAt: now,
  };
  const publishableKey = ids.publishableKey(env);
  const secretKey = ids.secretKey(env);
  await db.kysely.transaction().execute((trx) =>
    insertMerchant(trx, db.secrets, merchant, [
      { key: publishableKey, kind: 'publishable' },
      { key: secretKey, kind: 'secret' },
    ]),
  );
  return { merchant, publishableKey, secretKey };
}

/** Revokes the merchant's secret keys and issues a new one, in one transaction; undefined for no such merchant. */
export async function rollSecretKey(
  db: Db,
  merchantId: string,
  now: number,
): Promise<{ secretKey: string; revokedHashes: string[] } | undefined> {
  return db.kysely.transaction().execute(async (trx) => {
    const merchant = await findMerchantById(trx, db.secrets, merchantId);
    if (!merchant) return undefined;
    const revokedHashes = await revokeKeys(trx, merchantId, 'secret', now);
    const secretKey = ids.secretKey(merchant.environment);
    await insertKey(trx, merchant, secretKey, 'secret', now);
    return { secretKey, revokedHashes };
  });
}

/** How many merchants the database holds (the sandbox makes a demo merchant when there is none). */
export const countMerchants = (db: Db): Promise<number> => countMerchantRows(db.kysely);
