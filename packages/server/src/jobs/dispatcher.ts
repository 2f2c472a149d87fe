// The webhook dispatcher (docs/architecture.md#webhook-delivery). It wakes when an event commits (in this
// process, or on PostgreSQL in any process, through LISTEN/NOTIFY), when a retry falls due, when a target
// finishes, when another process's lease on a due URL runs out, and on a fallback poll. Each wake fans new
// events out into deliveries and takes the lease of URLs whose queue is due, one chain per URL; chains run
// side by side, up to WEBHOOK_CONCURRENCY of them, each sending its URL's deliveries in order. A receiver
// that is slow or down holds one chain, never the others' deliveries.
import type { Deps } from '../deps.ts';
import {
  type Chain,
  claimChains,
  deliverChain,
  fanOutEvents,
  heldElsewhereUntil,
  openSender,
} from '../flows/deliveries.ts';
import type { Loop } from './loop.ts';

/** Deliveries of one URL read from its queue at a time: enough to amortize the read. */
const CHAIN_LENGTH = 20;
/**
 * The least time between the starts of two rounds that a wake asks for (docs/architecture.md#webhook-delivery):
 * under a steady stream of commits, one round takes every event committed meanwhile instead of one round
 * (a transaction and its reads) per event. A wake after a quiet spell starts a round at once.
 */
const ROUND_GAP_MS = 50;

export async function startDispatcher(deps: Deps): Promise<Loop> {
  const sender = openSender(deps);
  const running = new Map<string, Promise<void>>();
  let stopped = false;
  let pumping = false;
  /** Work is known to be left (a full fan-out batch, a claim that found work): go round again at once. */
  let more = false;
  /** Woken while a round ran: another round, paced by ROUND_GAP_MS. */
  let woken = false;
  let lastRoundAt = Number.NEGATIVE_INFINITY;
  let roundTimer: NodeJS.Timeout | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  let retryAt = Number.POSITIVE_INFINITY;

  const wake = () => {
    if (stopped) return;
    if (pumping) {
      woken = true;
      return;
    }
    if (roundTimer !== undefined) return;
    const wait = lastRoundAt + ROUND_GAP_MS - performance.now();
    if (wait <= 0) {
      void pump();
      return;
    }
    roundTimer = setTimeout(() => {
      roundTimer = undefined;
      if (!stopped && !pumping) void pump();
    }, wait);
  };

  const scheduleRetry = (at: number) => {
    if (at >= retryAt) return;
    clearTimeout(retryTimer);
    retryAt = at;
    retryTimer = setTimeout(
      () => {
        retryAt = Number.POSITIVE_INFINITY;
        wake();
      },
      Math.max(0, at - deps.clock.now()),
    );
    retryTimer.unref();
  };

  const run = (chain: Chain) => {
    const done = deliverChain(deps, chain, sender, () => stopped)
      .then((at) => {
        if (at !== undefined) scheduleRetry(at);
      })
      .catch((error: unknown) => deps.logger.error({ err: error, url: chain.url }, 'webhook delivery failed'))
      .finally(() => {
        running.delete(chain.url);
        wake();
      });
    running.set(chain.url, done);
  };

  async function pump(): Promise<void> {
    pumping = true;
    woken = false;
    try {
      do {
        more = false;
        lastRoundAt = performance.now();
        // A full batch means more may wait: go round again, claiming in between.
        if (await fanOutEvents(deps)) more = true;
        const free = deps.config.webhookConcurrency - running.size;
        if (free <= 0) continue;
        const chains = await claimChains(deps, {
          targets: free,
          perTarget: CHAIN_LENGTH,
          busy: [...running.keys()],
        });
        for (const chain of chains) run(chain);
        // A process that died holding a URL: take the URL over the moment its lease runs out. Asked
        // once the chains are under way, and only while slots are left to take one.
        if (running.size < deps.config.webhookConcurrency) {
          const at = await heldElsewhereUntil(deps, [...running.keys()]);
          if (at !== undefined) scheduleRetry(at);
        }
        // While a claim finds work and slots are left, claim again.
        if (chains.length > 0 && running.size < deps.config.webhookConcurrency) more = true;
      } while (more && !stopped);
    } catch (error) {
      deps.logger.error({ err: error }, 'webhook dispatcher round failed');
    } finally {
      pumping = false;
    }
    if (woken) wake();
  }

  const stopListening = await deps.db.events.listen(wake, (error) =>
    deps.logger.warn({ err: error.message }, 'event notifications lost; reconnecting'),
  );
  const poll = setInterval(wake, deps.config.webhookPollIntervalMs);
  wake();
  return {
    async stop() {
      stopped = true;
      clearInterval(poll);
      clearTimeout(retryTimer);
      clearTimeout(roundTimer);
      await stopListening();
      // A chain stops after the attempt in flight (at most WEBHOOK_TIMEOUT_MS) and gives the rest back.
      while (pumping || running.size > 0) {
        await Promise.all([...running.values()]);
        if (pumping) await new Promise((resolve) => setTimeout(resolve, 5));
      }
      sender.close();
    },
  };
}
