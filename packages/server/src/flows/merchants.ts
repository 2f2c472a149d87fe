// Merchant administration (the CLI, the sandbox's demo merchant): a new merchant gets the default fee
// rates, a publishable and a secret key, a cart signing secret and a session webhook secret
// (docs/api.md#ids-and-key-formats). A secret key can be rolled, the old one ending at once; the cart
// signing secret, the session webhook secret and the publishable key can be rolled, the old one working
// on for ROTATION_GRACE_MS (docs/operations.md#keys). An operator sets the merchant's processor account.
import { DEFAULT_CONSUMER_FEE_PPM, DEFAULT_FX_FEE_PPM, DEFAULT_MERCHANT_FEE_PPM } from '../domain/fees.ts';
import { originsToRemove } from '../domain/origins.ts';
import { ROTATION_GRACE_MS } from '../domain/rotation.ts';
import { ids, type KeyEnvironment } from '../ids.ts';
import type { Db } from '../store/db.ts';
import {
  countMerchants as countMerchantRows,
  expireKeys,
  findMerchantById,
  insertKey,
  insertMerchant,
  lockMerchantRow,
  type Merchant,
  type MerchantSecret,
  replaceMerchantSecret,
  revokeKeys,
  updateAllowedOrigins,
  updateProcessorAccount,
} from '../store/merchants.ts';
import { claimSingleton } from '../store/singletons.ts';
import { PLAIN_TEXT_PATTERN } from '../wire/schemas.ts';

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

const PLAIN_NAME = new RegExp(PLAIN_TEXT_PATTERN, 'u');

/**
 * What is wrong with a merchant's name, or undefined: 1 to 200 characters once trimmed, and plain text
 * as a person's name is (docs/api.md#plain-text), since it is shown to every payer on the hosted pages and
 * written into their mail, where a line break would forge a line and a bidirectional override reorder text.
 */
export function merchantNameProblem(name: string): string | undefined {
  const trimmed = name.trim();
  if (!trimmed || trimmed.length > 200) return 'The name must be 1 to 200 characters.';
  if (!PLAIN_NAME.test(trimmed))
    return 'The name must not contain control characters (such as line breaks), bidirectional overrides or unpaired surrogates.';
  return undefined;
}

export async function createMerchant(db: Db, input: NewMerchant, now: number): Promise<CreatedMerchant> {
  return (await makeMerchant(db, input, now)) as CreatedMerchant;
}

/**
 * Creates the merchant unless the one-time set-up `once` was done already, by this process or another
 * (its mark is written in the merchant's transaction): answers undefined then. However many processes
 * start together, one merchant is made.
 */
export const createMerchantOnce = (db: Db, once: string, input: NewMerchant, now: number) =>
  makeMerchant(db, input, now, once);

async function makeMerchant(
  db: Db,
  input: NewMerchant,
  now: number,
  once?: string,
): Promise<CreatedMerchant | undefined> {
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
    previousSigningSecret: null,
    previousSessionWebhookSecret: null,
    allowedOrigins: input.allowedOrigins,
    processorAccountId: null,
    createdAt: now,
  };
  const publishableKey = ids.publishableKey(env);
  const secretKey = ids.secretKey(env);
  const made = await db.kysely.transaction().execute(async (trx) => {
    if (once !== undefined && !(await claimSingleton(trx, once, now))) return false;
    await insertMerchant(trx, db.secrets, merchant, [
      { key: publishableKey, kind: 'publishable' },
      { key: secretKey, kind: 'secret' },
    ]);
    return true;
  });
  return made ? { merchant, publishableKey, secretKey } : undefined;
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

export interface Rolled {
  /** The new secret or key, shown once. */
  value: string;
  /** When the one it replaced stops working. */
  previousValidUntil: number;
}

/**
 * Replaces the merchant's cart signing secret or session webhook secret; the replaced one works on
 * until now + ROTATION_GRACE_MS. One previous secret is kept: a second roll within the grace period
 * ends the older one at once. Undefined for no such merchant.
 */
export async function rollMerchantSecret(
  db: Db,
  merchantId: string,
  which: MerchantSecret,
  now: number,
): Promise<Rolled | undefined> {
  return db.kysely.transaction().execute(async (trx) => {
    // Two rolls at once must not both keep the same previous secret (SQLite has a single writer already).
    if (db.dialect === 'postgres') await lockMerchantRow(trx, merchantId);
    const merchant = await findMerchantById(trx, db.secrets, merchantId);
    if (!merchant) return undefined;
    const [secret, replaced] =
      which === 'signing'
        ? [ids.signingSecret(merchant.environment), merchant.signingSecret]
        : [ids.webhookSecret(), merchant.sessionWebhookSecret];
    const previous = { secret: replaced, expiresAt: now + ROTATION_GRACE_MS };
    await replaceMerchantSecret(trx, db.secrets, merchantId, which, secret, previous);
    return { value: secret, previousValidUntil: previous.expiresAt };
  });
}

/**
 * Issues a new publishable key; the merchant's current ones work on until now + ROTATION_GRACE_MS (their
 * expires_at). Undefined for no such merchant.
 */
export async function rollPublishableKey(
  db: Db,
  merchantId: string,
  now: number,
): Promise<Rolled | undefined> {
  return db.kysely.transaction().execute(async (trx) => {
    const merchant = await findMerchantById(trx, db.secrets, merchantId);
    if (!merchant) return undefined;
    const previousValidUntil = now + ROTATION_GRACE_MS;
    await expireKeys(trx, merchantId, 'publishable', previousValidUntil);
    const publishableKey = ids.publishableKey(merchant.environment);
    await insertKey(trx, merchant, publishableKey, 'publishable', now);
    return { value: publishableKey, previousValidUntil };
  });
}

/**
 * Connects the merchant to its account at the payment processor (a Stripe connected account, acct_…), the
 * destination of its sessions' transfers (docs/operations.md#stripe-set-up). False for no such merchant.
 */
export const setProcessorAccount = (
  db: Db,
  merchantId: string,
  processorAccountId: string,
): Promise<boolean> => updateProcessorAccount(db.kysely, merchantId, processorAccountId);

/**
 * Registers and unregisters origins the merchant's pages create browser sessions from (docs/api.md#origins),
 * given canonical (domain/origins.ts); answers the merchant's origins after the change, or undefined for no
 * such merchant. The row is locked so that two changes at once both count.
 */
export async function changeAllowedOrigins(
  db: Db,
  merchantId: string,
  change: { add: readonly string[]; remove: readonly string[] },
  options: { removeOnlyRegistered?: boolean } = {},
): Promise<{ origins: string[]; unregistered: string[] } | undefined> {
  return db.kysely.transaction().execute(async (trx) => {
    if (db.dialect === 'postgres') await lockMerchantRow(trx, merchantId);
    const merchant = await findMerchantById(trx, db.secrets, merchantId);
    if (!merchant) return undefined;
    // An origin to remove may be named as typed and as parsed (domain/origins.ts originsToRemove): each
    // typed one counts as registered when either is.
    const unregistered = change.remove.filter((typed) =>
      originsToRemove(typed).every((o) => !merchant.allowedOrigins.includes(o)),
    );
    if (options.removeOnlyRegistered && unregistered.length > 0)
      return { origins: merchant.allowedOrigins, unregistered };
    const removed = new Set(change.remove.flatMap(originsToRemove));
    const origins = merchant.allowedOrigins.filter((o) => !removed.has(o));
    for (const origin of change.add) if (!origins.includes(origin)) origins.push(origin);
    await updateAllowedOrigins(trx, merchantId, origins);
    return { origins, unregistered };
  });
}

/**
 * Takes one registered origin out, typed as a person types it (domain/origins.ts originsToRemove: a page's
 * address is its origin, case and a trailing slash aside). Answers the origin named and whether it was
 * registered (nothing changes when it was not); undefined for no such merchant.
 */
export async function removeAllowedOrigin(
  db: Db,
  merchantId: string,
  typed: string,
): Promise<{ origin: string; removed: boolean } | undefined> {
  const changed = await changeAllowedOrigins(
    db,
    merchantId,
    { add: [], remove: [typed] },
    { removeOnlyRegistered: true },
  );
  if (!changed) return undefined;
  return { origin: originsToRemove(typed)[0] as string, removed: changed.unregistered.length === 0 };
}

/** The merchant's registered origins; undefined for no such merchant. */
export async function allowedOriginsOf(db: Db, merchantId: string): Promise<string[] | undefined> {
  return (await findMerchantById(db.kysely, db.secrets, merchantId))?.allowedOrigins;
}

/** How many merchants the database holds (the sandbox makes a demo merchant when there is none). */
export const countMerchants = (db: Db): Promise<number> => countMerchantRows(db.kysely);
