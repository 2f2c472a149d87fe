// Identifiers and secrets (DESIGN.md §3): crypto.randomBytes rendered in base62. Ids carry 96 bits,
// anything that grants access carries 128 bits or more.
import { createHash, randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Base62 text of `bits` random bits; the length is fixed for a given number of bits. */
export function randomBase62(bits: number): string {
  const bytes = randomBytes(Math.ceil(bits / 8));
  let n = BigInt(`0x${bytes.toString('hex')}`);
  const length = Math.ceil(bits / Math.log2(62));
  let out = '';
  for (let i = 0; i < length; i++) {
    out = ALPHABET[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out;
}

const ID_BITS = 96;
const TOKEN_BITS = 160;

export const newId = (prefix: string): string => `${prefix}${randomBase62(ID_BITS)}`;
export const newToken = (prefix: string): string => `${prefix}${randomBase62(TOKEN_BITS)}`;

export type KeyEnvironment = 'test' | 'live';

/** The key environment a deployment accepts (DESIGN.md §3): sandbox takes _test_ keys, production _live_. */
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
  request: () => newId('req_'),
  session: () => newId('gs_'),
  group: () => newId('grp_'),
  member: () => newId('mem_'),
  share: () => newToken('shr_'),
  organizerToken: () => newToken('at_'),
  groupToken: () => newToken('gat_'),
};

/** SHA-256 hex digest, used to store secret keys and to compare bodies. */
export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
