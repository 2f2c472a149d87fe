// The environment, parsed once at start-up (README.md#configuration). A bad value throws ConfigError with one
// line naming the variable; main.ts and the CLI print that line and exit.
import { readFileSync } from 'node:fs';
import { BlockList, isIP } from 'node:net';

export class ConfigError extends Error {}

/** The points a crash test may stop the process at (SANDBOX_CRASH_AT, docs/operations.md#crash-points). */
export const CRASH_POINTS = [
  'session-created',
  'payment-called',
  'capture-called',
  'release-called',
  'refund-called',
  'transfer-called',
  'processor-event-received',
  'processor-event-kept',
  'delivery-sent',
] as const;

export type ServiceEnv = 'sandbox' | 'production';

/** Per-route limits, requests per minute per client IP (docs/api.md#rate-limits). Override with RATE_LIMIT_<NAME>. */
export const DEFAULT_RATE_LIMITS = {
  SESSIONS_CREATE: 60,
  SESSIONS_LIST: 60,
  SESSIONS_GET: 120,
  SESSIONS_CANCEL: 30,
  SESSIONS_REMIND: 20,
  // Not in docs/api.md#rate-limits; chosen to sit with the routes above.
  MERCHANTS_ME: 60,
  WEBHOOKS_READ: 60,
  WEBHOOKS_WRITE: 30,
  EVENTS_READ: 60,
  EVENTS_WRITE: 30,
  TEST_HELPERS: 60,
  PAY_READ: 600,
  PAY_WRITE: 30,
  // Stripe's webhooks come from Stripe's few addresses, in bursts when it catches up after an outage.
  STRIPE_WEBHOOKS: 1200,
  // Failed authentications (docs/api.md#authentication).
  AUTH_FAILURES_IP: 120,
  AUTH_FAILURES_KEY: 40,
} as const;

export type RateLimitName = keyof typeof DEFAULT_RATE_LIMITS;

export interface Config {
  port: number;
  host: string;
  databaseUrl: string;
  serviceEnv: ServiceEnv;
  publicBaseUrl: string;
  publicPayUrl: string;
  /** Path part of publicBaseUrl, without a trailing slash: where the API routes are mounted. */
  apiPrefix: string;
  /** Path part of publicPayUrl, without a trailing slash ('' at the root). */
  payPrefix: string;
  smtpUrl: string | undefined;
  mailFrom: string;
  outboxDir: string;
  redisUrl: string | undefined;
  /**
   * Prefix of every Redis key this deployment writes (REDIS_KEY_PREFIX, default `gc:`): route limits under
   * `<prefix>ratelimit:`, failed-auth counters under `<prefix>counter:`. Lets several deployments, or
   * parallel test runs, share one Redis without sharing counts.
   */
  redisKeyPrefix: string;
  trustProxy: boolean;
  ipBlocklist: BlockList;
  ipBlocklistText: string;
  stripeSecretKey: string | undefined;
  /** Stripe's publishable key, for the Payment Element on the hosted pages (STRIPE_PUBLISHABLE_KEY). */
  stripePublishableKey: string | undefined;
  /** STRIPE_WEBHOOK_SECRET (whsec_…): verifies Stripe's webhooks at {base_url}/stripe/webhook. */
  stripeWebhookSecret: string | undefined;
  /** STRIPE_API_URL: where Stripe's API is (stripe-mock, an egress proxy, a test double); Stripe's own when unset. */
  stripeApiUrl: { host: string; port: number; protocol: 'http' | 'https' } | undefined;
  /** PAYMENT_AUTH_TIMEOUT_MS: a payment left waiting on the payer's authentication this long is abandoned. */
  paymentAuthTimeoutMs: number;
  /** The Apple Pay domain association file's bytes (APPLE_PAY_DOMAIN_ASSOCIATION names the file). */
  applePayDomainAssociation: Buffer | undefined;
  rateLimits: Record<RateLimitName, number>;
  logLevel: string;
  /** Expiry sweeper period, milliseconds. */
  sweepIntervalMs: number;
  /** Settling worker period (captures, refunds, releases, transfers, recovery), milliseconds. */
  settleIntervalMs: number;
  /**
   * How long a processor call may stay unanswered before the recovery asks the processor what became of
   * it (PAYMENT_RECOVERY_AFTER_MS, default 5 minutes, docs/decisions.md#payments); it must be longer than
   * any call can take, so at least 2 minutes with Stripe.
   */
  paymentRecoveryAfterMs: number;
  /**
   * Waits before each retry of a failed webhook delivery, milliseconds (WEBHOOK_RETRY_SCHEDULE, default
   * 5s,5m,30m,2h,5h,10h,10h; docs/decisions.md#webhook-delivery); each is stretched by up to 10% of jitter.
   */
  webhookRetrySchedule: number[];
  /** How long a webhook receiver has to answer, milliseconds (WEBHOOK_TIMEOUT_MS, default 15 s). */
  webhookTimeoutMs: number;
  /** The dispatcher's fallback poll, milliseconds; a commit wakes it at once anyway. */
  webhookPollIntervalMs: number;
  /** Webhook targets one process delivers to at once (WEBHOOK_CONCURRENCY). */
  webhookConcurrency: number;
  /** Time a client has to send a request's headers, and the whole request, milliseconds (slow clients). */
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  /** Open connections one client address may hold at once; 0 for no cap (behind a proxy, say). */
  maxConnectionsPerIp: number;
  /**
   * Sandbox only: a named point where the process kills itself (SIGKILL), for crash tests
   * (SANDBOX_CRASH_AT, docs/operations.md#crash-points). Refused in production.
   */
  crashAt: string | undefined;
  /** SECRETS_KEY: seals stored secrets (docs/operations.md#secrets-at-rest); required in production. */
  secretsKey: Buffer | undefined;
  /** SECRETS_KEY_PREVIOUS: the key before the last rotation, still opening what it sealed. */
  secretsKeyPrevious: Buffer | undefined;
  /**
   * Port of the demo shop that `npm start` runs beside the sandbox (SHOP_PORT, default 4100), for the demo
   * merchant's allowed origin and webhook endpoint; undefined in production or with DEMO_SHOP=0
   * (docs/decisions.md#demo-shop).
   */
  demoShopPort: number | undefined;
}

type Env = Record<string, string | undefined>;

/** Host names a production deployment may still serve over http://: the machine itself. */
function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return (
    host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host)
  );
}

/** Longer than the longest Stripe call (three tries of 30 s and their back-offs), with a margin. */
const MIN_STRIPE_RECOVERY_AFTER_MS = 120_000;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return Number(raw);
}

/** The value as it may be printed: a password in a URL is replaced, so a config error never shows one. */
function printable(raw: string): string {
  return raw.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*:)[^@/]*@/i, '$1***@');
}

function url(env: Env, name: string, fallback: string, protocols: string[]): string {
  const raw = env[name] || fallback;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL, got "${printable(raw)}"`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(
      `${name} must start with ${protocols.map((p) => `${p}//`).join(' or ')}, got "${printable(raw)}"`,
    );
  }
  return raw.replace(/\/+$/, '');
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const MAX_RETRY_WAIT_MS = 7 * 24 * 3_600_000;

/** A comma-separated list of durations such as `5s,5m,2h` (units ms, s, m, h); `none` for no retries. */
function durations(env: Env, name: string, fallback: string): number[] {
  const raw = (env[name] || fallback).trim();
  if (raw === 'none') return [];
  const waits = raw.split(',').map((part) => {
    const match = /^(\d+)(ms|s|m|h)$/.exec(part.trim());
    const ms = match ? Number(match[1]) * (DURATION_UNITS[match[2] as string] as number) : Number.NaN;
    if (!(ms >= 1 && ms <= MAX_RETRY_WAIT_MS)) {
      throw new ConfigError(
        `${name} must be durations such as 5s,5m,2h (ms, s, m or h; each up to 7 days) or none, got "${raw}"`,
      );
    }
    return ms;
  });
  if (waits.length > 20) throw new ConfigError(`${name} may list at most 20 retries, got ${waits.length}`);
  return waits;
}

function boolean(env: Env, name: string): boolean {
  const raw = (env[name] ?? '').toLowerCase();
  if (['', '0', 'false', 'no'].includes(raw)) return false;
  if (['1', 'true', 'yes'].includes(raw)) return true;
  throw new ConfigError(`${name} must be true or false, got "${env[name]}"`);
}

const MAKE_A_KEY = 'make one with: openssl rand -hex 32';

/**
 * A secrets key: 32 bytes, written as 64 hex characters or in base64 (standard, padded or not, or
 * URL-safe). Refused as weak when its bytes show it was not drawn at random: fewer than 16 distinct byte
 * values (a random key practically always has about 30), or every byte printable ASCII (a password or
 * a phrase, encoded). The value itself is never printed.
 */
function secretsKey(env: Env, name: string): Buffer | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  let key: Buffer | undefined;
  if (/^[0-9a-fA-F]{64}$/.test(raw)) {
    key = Buffer.from(raw, 'hex');
  } else if (/^[A-Za-z0-9+/]{43}=?$/.test(raw) || /^[A-Za-z0-9_-]{43}$/.test(raw)) {
    const encoding = /[-_]/.test(raw) ? 'base64url' : 'base64';
    const decoded = Buffer.from(raw, encoding);
    // Only the canonical spelling: the last character of 43 carries 4 bits, so others decode alike.
    if (decoded.length === 32 && decoded.toString(encoding).replace(/=$/, '') === raw.replace(/=$/, '')) {
      key = decoded;
    }
  }
  if (!key) {
    throw new ConfigError(
      `${name} must be 32 random bytes written as 64 hex characters or in base64 (${MAKE_A_KEY})`,
    );
  }
  if (new Set(key).size < 16 || key.every((byte) => byte >= 0x20 && byte < 0x7f)) {
    throw new ConfigError(
      `${name} is too weak: it must be 32 random bytes, not a pattern or a phrase (${MAKE_A_KEY})`,
    );
  }
  return key;
}

/** Parses IP_BLOCKLIST: comma-separated addresses or CIDR ranges, IPv4 or IPv6. */
function parseBlocklist(text: string, name = 'IP_BLOCKLIST'): BlockList {
  const list = new BlockList();
  for (const entry of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [address = '', bits, extra] = entry.split('/');
    const family = isIP(address);
    const max = family === 4 ? 32 : 128;
    if (
      family === 0 ||
      extra !== undefined ||
      (bits !== undefined && !/^\d+$/.test(bits)) ||
      Number(bits) > max
    ) {
      throw new ConfigError(`${name} must be comma-separated IP addresses or CIDR ranges, got "${entry}"`);
    }
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (bits === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(bits), type);
  }
  return list;
}

/** Our names read outside loadConfig: the CLI's `listen` (src/cli/listen.ts). */
const READ_ELSEWHERE = ['GROUP_CHECKOUT_API_KEY', 'GROUP_CHECKOUT_API_BASE'];

/** A name as it is compared: capitals, without underscores (SWEEP_INTERVALMS is SWEEP_INTERVAL_MS). */
const squeezed = (name: string) => name.toUpperCase().replace(/_/g, '');

/** Levenshtein distance, stopping early once it is over `most`. */
function distance(a: string, b: string, most: number): number {
  if (Math.abs(a.length - b.length) > most) return most + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(
        (previous[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    if (Math.min(...row) > most) return most + 1;
    previous = row;
  }
  return previous[b.length] as number;
}

/**
 * A variable whose name is one of ours misspelt (SWEEP_INTERVALMS, STRIPE_SECRETKEY, WEBHOOK_TIMOUT_MS)
 * stops start-up: otherwise the default would silently stay in force. Every other name in the
 * environment belongs to someone else (PATH, HOME, a CI's own) and is left alone, so "ours" is what
 * loadConfig read, and "misspelt" is the same letters without underscores, or one letter off (two in
 * names of ten letters or more).
 */
function refuseMisspeltNames(env: Env, read: Set<string>): void {
  const ours = [...read, ...READ_ELSEWHERE];
  for (const variable of Object.keys(env)) {
    if (read.has(variable) || READ_ELSEWHERE.includes(variable)) continue;
    const name = squeezed(variable);
    if (name.length < 6) continue;
    const most = name.length >= 10 ? 2 : 1;
    const meant = ours.find((known) => distance(name, squeezed(known), most) <= most);
    if (meant)
      throw new ConfigError(
        `${variable} is not a variable Group Checkout knows: did you mean ${meant}? (README.md#configuration lists them)`,
      );
  }
}

export function loadConfig(env: Env = process.env): Config {
  const read = new Set<string>();
  const config = readConfig(
    new Proxy(env, {
      get(target, name) {
        if (typeof name === 'string') read.add(name);
        return target[name as string];
      },
    }),
  );
  refuseMisspeltNames(env, read);
  return config;
}

function readConfig(env: Env): Config {
  const serviceEnv = env.SERVICE_ENV || 'sandbox';
  if (serviceEnv !== 'sandbox' && serviceEnv !== 'production') {
    throw new ConfigError(`SERVICE_ENV must be sandbox or production, got "${serviceEnv}"`);
  }
  const port = integer(env, 'PORT', 4000, 0, 65535);
  const host = env.HOST || '127.0.0.1';
  const publicBaseUrl = url(env, 'PUBLIC_BASE_URL', `http://localhost:${port}/v1`, ['http:', 'https:']);
  const publicPayUrl = url(env, 'PUBLIC_PAY_URL', `http://localhost:${port}`, ['http:', 'https:']);
  const databaseUrl = env.DATABASE_URL || 'sqlite:./data/group-checkout.db';
  if (!/^(sqlite:|postgres:\/\/|postgresql:\/\/)/.test(databaseUrl)) {
    throw new ConfigError(
      `DATABASE_URL must be sqlite:PATH or postgres://…, got "${printable(databaseUrl)}"`,
    );
  }
  if (databaseUrl.startsWith('postgres')) url(env, 'DATABASE_URL', databaseUrl, ['postgres:', 'postgresql:']);
  const smtpUrl = env.SMTP_URL || undefined;
  if (smtpUrl) url(env, 'SMTP_URL', smtpUrl, ['smtp:', 'smtps:']);
  const redisUrl = env.REDIS_URL || undefined;
  if (redisUrl) url(env, 'REDIS_URL', redisUrl, ['redis:', 'rediss:']);
  const stripeSecretKey = env.STRIPE_SECRET_KEY || undefined;
  if (stripeSecretKey && !/^(sk|rk)_(test|live)_/.test(stripeSecretKey)) {
    throw new ConfigError('STRIPE_SECRET_KEY must be a Stripe secret key (sk_test_… or sk_live_…)');
  }
  const stripePublishableKey = env.STRIPE_PUBLISHABLE_KEY || undefined;
  if (stripePublishableKey && !/^pk_(test|live)_/.test(stripePublishableKey)) {
    throw new ConfigError('STRIPE_PUBLISHABLE_KEY must be a Stripe publishable key (pk_test_… or pk_live_…)');
  }
  const stripeWebhookSecret = env.STRIPE_WEBHOOK_SECRET || undefined;
  if (stripeWebhookSecret && !/^whsec_[A-Za-z0-9+/=_-]{8,}$/.test(stripeWebhookSecret)) {
    throw new ConfigError(
      "STRIPE_WEBHOOK_SECRET must be the signing secret of Stripe's webhook endpoint (whsec_…), from the Stripe dashboard",
    );
  }
  let stripeApiUrl: Config['stripeApiUrl'];
  if (env.STRIPE_API_URL) {
    const parsed = new URL(url(env, 'STRIPE_API_URL', '', ['http:', 'https:']));
    if (parsed.pathname !== '/' || parsed.search || parsed.username)
      throw new ConfigError(
        `STRIPE_API_URL must be scheme://host[:port] only, such as http://localhost:12111, got "${printable(env.STRIPE_API_URL)}"`,
      );
    const protocol = parsed.protocol === 'https:' ? 'https' : 'http';
    stripeApiUrl = {
      host: parsed.hostname.replace(/^\[|\]$/g, ''),
      port: parsed.port ? Number(parsed.port) : protocol === 'https' ? 443 : 80,
      protocol,
    };
  }
  let applePayDomainAssociation: Buffer | undefined;
  if (env.APPLE_PAY_DOMAIN_ASSOCIATION) {
    try {
      applePayDomainAssociation = readFileSync(env.APPLE_PAY_DOMAIN_ASSOCIATION);
    } catch (error) {
      throw new ConfigError(
        `APPLE_PAY_DOMAIN_ASSOCIATION must name a readable file (the one Stripe's dashboard gives for Apple Pay), got "${env.APPLE_PAY_DOMAIN_ASSOCIATION}": ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
      );
    }
    if (applePayDomainAssociation.length === 0)
      throw new ConfigError(
        `APPLE_PAY_DOMAIN_ASSOCIATION names an empty file: "${env.APPLE_PAY_DOMAIN_ASSOCIATION}"`,
      );
  }
  const rateLimits = { ...DEFAULT_RATE_LIMITS } as Record<RateLimitName, number>;
  for (const name of Object.keys(DEFAULT_RATE_LIMITS) as RateLimitName[]) {
    rateLimits[name] = integer(env, `RATE_LIMIT_${name}`, DEFAULT_RATE_LIMITS[name], 1, 1_000_000);
  }
  // A misspelt limit would otherwise be ignored without a word, leaving the default in force.
  for (const variable of Object.keys(env)) {
    if (variable.startsWith('RATE_LIMIT_') && !(variable.slice(11) in DEFAULT_RATE_LIMITS)) {
      const known = Object.keys(DEFAULT_RATE_LIMITS).map((n) => `RATE_LIMIT_${n}`);
      const meant = known.find((k) => distance(squeezed(variable), squeezed(k), 2) <= 2);
      throw new ConfigError(
        meant
          ? `${variable} is not a known rate limit: did you mean ${meant}?`
          : `${variable} is not a known rate limit; known: ${known.join(', ')}`,
      );
    }
  }
  const redisKeyPrefix = env.REDIS_KEY_PREFIX ?? 'gc:';
  if (!/^[\x21-\x7e]{0,64}$/.test(redisKeyPrefix)) {
    throw new ConfigError(
      `REDIS_KEY_PREFIX must be at most 64 visible ASCII characters, got "${redisKeyPrefix}"`,
    );
  }
  const logLevel = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }
  const secretsKeyCurrent = secretsKey(env, 'SECRETS_KEY');
  const secretsKeyPrevious = secretsKey(env, 'SECRETS_KEY_PREVIOUS');
  if (!secretsKeyCurrent && serviceEnv === 'production') {
    throw new ConfigError(`SECRETS_KEY is required when SERVICE_ENV=production (${MAKE_A_KEY})`);
  }
  if (secretsKeyPrevious && !secretsKeyCurrent) {
    throw new ConfigError('SECRETS_KEY_PREVIOUS is set without SECRETS_KEY: set the new key as SECRETS_KEY');
  }
  if (secretsKeyPrevious && secretsKeyCurrent?.equals(secretsKeyPrevious)) {
    throw new ConfigError('SECRETS_KEY_PREVIOUS is the same key as SECRETS_KEY');
  }
  // A live Stripe key takes real money: never in the sandbox, whose test helpers expire sessions, whose
  // crash points stop the process and whose keys are test keys (docs/decisions.md#payments).
  if (serviceEnv === 'sandbox' && stripeSecretKey && /^(sk|rk)_live_/.test(stripeSecretKey))
    throw new ConfigError(
      `STRIPE_SECRET_KEY is a live key (${stripeSecretKey.slice(0, 8)}…), but SERVICE_ENV is the sandbox: real money is taken only with SERVICE_ENV=production; in the sandbox use a test key (sk_test_…)`,
    );
  if (serviceEnv === 'production') {
    // Fail closed (docs/operations.md#going-to-production): real money only through Stripe, its own
    // events heard, and the public addresses on https.
    if (!stripeSecretKey)
      throw new ConfigError(
        'STRIPE_SECRET_KEY is required when SERVICE_ENV=production: the sandbox processor never takes real payments',
      );
    if (!stripeWebhookSecret)
      throw new ConfigError(
        "STRIPE_WEBHOOK_SECRET is required when SERVICE_ENV=production: Stripe's webhooks settle authentications, failed refunds and disputes",
      );
    for (const [name, value] of [
      ['PUBLIC_BASE_URL', publicBaseUrl],
      ['PUBLIC_PAY_URL', publicPayUrl],
    ] as const) {
      const parsed = new URL(value);
      if (parsed.protocol !== 'https:' && !isLoopbackHost(parsed.hostname))
        throw new ConfigError(
          `${name} must be https:// when SERVICE_ENV=production (http:// only on loopback), got "${printable(value)}"`,
        );
    }
  }
  const ipBlocklistText = env.IP_BLOCKLIST ?? '';
  const pathOf = (u: string) => new URL(u).pathname.replace(/\/+$/, '');
  const apiPrefix = pathOf(publicBaseUrl);
  if (apiPrefix === '') throw new ConfigError('PUBLIC_BASE_URL must have a path such as /v1');
  const payPrefix = pathOf(publicPayUrl);
  const headersTimeoutMs = integer(env, 'HEADERS_TIMEOUT_MS', 10_000, 100, 600_000);
  const requestTimeoutMs = integer(env, 'REQUEST_TIMEOUT_MS', 30_000, 100, 600_000);
  // Node refuses a headers timeout longer than the request's: both bound the same wait.
  if (headersTimeoutMs > requestTimeoutMs)
    throw new ConfigError('HEADERS_TIMEOUT_MS must not be longer than REQUEST_TIMEOUT_MS');
  const paymentRecoveryAfterMs = integer(env, 'PAYMENT_RECOVERY_AFTER_MS', 300_000, 100, 12 * 60 * 60 * 1000);
  // Recovery must never overtake a call still running: a Stripe call may take three tries of 30 s.
  if (stripeSecretKey && paymentRecoveryAfterMs < MIN_STRIPE_RECOVERY_AFTER_MS) {
    throw new ConfigError(
      `PAYMENT_RECOVERY_AFTER_MS must be at least ${MIN_STRIPE_RECOVERY_AFTER_MS} with STRIPE_SECRET_KEY: a Stripe call may run for about 92 s, and recovery must not overtake it`,
    );
  }
  const crashAt = env.SANDBOX_CRASH_AT || undefined;
  if (crashAt && serviceEnv !== 'sandbox')
    throw new ConfigError('SANDBOX_CRASH_AT is for crash tests in the sandbox; unset it in production');
  if (crashAt && !(CRASH_POINTS as readonly string[]).includes(crashAt))
    throw new ConfigError(
      `SANDBOX_CRASH_AT must be one of ${CRASH_POINTS.join(', ')}; got ${JSON.stringify(crashAt)}`,
    );
  const demoShopPort = integer(env, 'SHOP_PORT', 4100, 1, 65535);
  const demoShopOn = (env.DEMO_SHOP ?? '') === '' || boolean(env, 'DEMO_SHOP');
  return {
    port,
    host,
    databaseUrl,
    serviceEnv,
    publicBaseUrl,
    publicPayUrl,
    apiPrefix,
    payPrefix,
    smtpUrl,
    mailFrom: env.MAIL_FROM || 'Group Checkout <no-reply@group-checkout.localhost>',
    outboxDir: env.MAIL_OUTBOX_DIR || './data/outbox',
    redisUrl,
    redisKeyPrefix,
    trustProxy: boolean(env, 'TRUST_PROXY'),
    ipBlocklist: parseBlocklist(ipBlocklistText),
    ipBlocklistText,
    stripeSecretKey,
    stripePublishableKey,
    stripeWebhookSecret,
    stripeApiUrl,
    paymentAuthTimeoutMs: integer(env, 'PAYMENT_AUTH_TIMEOUT_MS', 900_000, 1000, 24 * 60 * 60 * 1000),
    applePayDomainAssociation,
    rateLimits,
    logLevel,
    sweepIntervalMs: integer(env, 'SWEEP_INTERVAL_MS', 2000, 100, 60_000),
    settleIntervalMs: integer(env, 'SETTLE_INTERVAL_MS', 1000, 50, 60_000),
    paymentRecoveryAfterMs,
    webhookRetrySchedule: durations(env, 'WEBHOOK_RETRY_SCHEDULE', '5s,5m,30m,2h,5h,10h,10h'),
    webhookTimeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 15_000, 100, 60_000),
    webhookPollIntervalMs: integer(env, 'WEBHOOK_POLL_INTERVAL_MS', 1000, 20, 60_000),
    webhookConcurrency: integer(env, 'WEBHOOK_CONCURRENCY', 32, 1, 1000),
    headersTimeoutMs,
    requestTimeoutMs,
    maxConnectionsPerIp: integer(env, 'MAX_CONNECTIONS_PER_IP', 256, 0, 1_000_000),
    crashAt,
    secretsKey: secretsKeyCurrent,
    secretsKeyPrevious,
    demoShopPort: demoShopOn && serviceEnv === 'sandbox' ? demoShopPort : undefined,
  };
}
