// Identifiers and secrets (docs/api.md#ids-and-key-formats): crypto.randomBytes rendered in base62. Ids carry 96 bits,
// anything that grants access carries 128 bits or more.
import { hash, randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

// Random bytes are drawn from a pooled buffer refilled by crypto.randomBytes, as Node's randomUUID
// does: one system call per 4 KiB instead of one per id.
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let poolOffset = 0;

function randomByte(): number {
  if (poolOffset >= pool.length) {
    pool = randomBytes(POOL_BYTES);
    poolOffset = 0;
  }
  return pool[poolOffset++] as number;
}

/**
 * Base62 text carrying at least `bits` random bits. Each character is uniform over the 62 symbols:
 * bytes of 248 or more (248 = 4 × 62) are skipped, so `byte % 62` has no bias.
 */
function randomBase62(bits: number): string {
  const length = Math.ceil(bits / Math.log2(62));
  let out = '';
  while (out.length < length) {
    const byte = randomByte();
    if (byte < 248) out += ALPHABET[byte % 62];
  }
  return out;
}

const ID_BITS = 96;
const TOKEN_BITS = 160;

const newId = (prefix: string): string => `${prefix}${randomBase62(ID_BITS)}`;
const newToken = (prefix: string): string => `${prefix}${randomBase62(TOKEN_BITS)}`;

export type KeyEnvironment = 'test' | 'live';

/** A key's first characters, shown to operators and counted by the failed-authentication limit. */
export const KEY_PREFIX_LENGTH = 16;

/** The key environment a deployment accepts (docs/api.md#ids-and-key-formats): sandbox takes _test_ keys, production _live_. */
export const keyEnvironmentFor = (serviceEnv: 'sandbox' | 'production'): KeyEnvironment =>
  serviceEnv === 'production' ? 'live' : 'test';

export const ids = {
  merchant: () => newId('svc_merch_'),
  apiKey: () => newId('key_'),
  publishableKey: (env: KeyEnvironment) => newToken(`svc_pk_${env}_`),
  secretKey: (env: KeyEnvironment) => newToken(`svc_sk_${env}_`),
  signingSecret: (env: KeyEnvironment) => newToken(`svc_sig_${env}_`),
  /** Standard Webhooks secret: `whsec_` + base64 of 32 random bytes. */
  webhookSecret: () => `whsec_${randomBytes(32).toString('base64')}`,
  webhookEndpoint: () => newId('we_'),
  event: () => newId('evt_'),
  delivery: () => newId('dlv_'),
  request: () => newId('req_'),
  session: () => newId('gs_'),
  group: () => newId('grp_'),
  member: () => newId('mem_'),
  share: () => newToken('shr_'),
  organizerToken: () => newToken('at_'),
  groupToken: () => newToken('gat_'),
  /** One processor call of ours (docs/decisions.md#payments). */
  attempt: () => newId('att_'),
  ledgerLine: () => newId('ln_'),
  /** One reminder mail (docs/api.md#reminders). */
  reminderMail: () => newId('rml_'),
  mail: () => newId('mail_'),
  ledgerEntry: () => newId('le_'),
  /** The sandbox processor's objects: a charge or hold, a refund, a transfer. */
  sandboxCharge: () => newId('ch_'),
  sandboxRefund: () => newId('re_'),
  sandboxTransfer: () => newId('tr_'),
  sandboxDispute: () => newId('dp_'),
  /** The secret a payer's page hands the sandbox to authenticate a payment, as Stripe's client_secret. */
  sandboxClientSecret: (paymentId: string) => newToken(`${paymentId}_secret_`),
  /** The sandbox's own processor events (a dispute opening, a refund failing). */
  sandboxEvent: () => newId('sbxevt_'),
  /** The merchant dashboard (docs/dashboard.md): a person, a one-time sign-in link, a cookie session, its CSRF token. */
  dashboardUser: () => newId('usr_'),
  dashboardLink: () => newToken('dsl_'),
  dashboardSession: () => newToken('dss_'),
  csrfToken: () => newToken('csrf_'),
};

/**
 * SHA-256 hex digest, used to store secret keys and to compare bodies. The one-shot `hash` makes no Hash
 * object: about a third of createHash's cost for a key, and every authenticated request hashes its key.
 */
export const sha256 = (text: string): string => hash('sha256', text, 'hex');
