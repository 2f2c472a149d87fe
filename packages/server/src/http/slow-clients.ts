// Slow clients (docs/decisions.md#slow-clients): headers must arrive within headersTimeoutMs and the whole
// request within requestTimeoutMs, checked every second; an idle connection is closed after the
// keep-alive time. Without these a client sending half a body holds a connection forever. Fastify
// options, given when the instance is made.
import type { Config } from '../config.ts';

/** A connection with nothing going on is closed after this; Fastify keeps idle keep-alives 72 s. */
const CONNECTION_IDLE_MS = 75_000;

export const slowClientOptions = (config: Config) => ({
  requestTimeout: config.requestTimeoutMs,
  connectionTimeout: CONNECTION_IDLE_MS,
  http: {
    headersTimeout: config.headersTimeoutMs,
    connectionsCheckingInterval: Math.min(1_000, config.headersTimeoutMs),
  },
});
