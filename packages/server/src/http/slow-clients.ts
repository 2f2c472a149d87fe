// Slow clients (docs/decisions.md#slow-clients): headers must arrive within headersTimeoutMs and the whole
// request within requestTimeoutMs, checked every second; an idle keep-alive connection is closed after
// Fastify's 72 s. Without these a client sending half a body holds a connection forever. Fastify
// options, given when the instance is made.
import type { Config } from '../config.ts';

/**
 * A socket with no bytes either way is closed after this. While a request waits on the card processor no
 * byte moves, and a Stripe call may take three tries of 30 s: the payer must get the 503 that tells them
 * not to pay again, not a dropped connection, so this outlasts that call with a margin.
 * @internal Exported for the test that holds it above the processor's longest call.
 */
export const CONNECTION_IDLE_MS = 120_000;

export const slowClientOptions = (config: Config) => ({
  requestTimeout: config.requestTimeoutMs,
  connectionTimeout: CONNECTION_IDLE_MS,
  http: {
    headersTimeout: config.headersTimeoutMs,
    connectionsCheckingInterval: Math.min(1_000, config.headersTimeoutMs),
  },
});
