// A worker loop: runs `tick` every `intervalMs` until the signal aborts; a tick that throws is logged
// and the loop goes on. stop() waits for the tick in progress, so shutdown never cuts one in half.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';

export interface Loop {
  stop(): Promise<void>;
}

export function startLoop(
  name: string,
  intervalMs: number,
  logger: Logger,
  tick: (signal: AbortSignal) => Promise<unknown>,
): Loop {
  const controller = new AbortController();
  const done = (async () => {
    while (!controller.signal.aborted) {
      try {
        await tick(controller.signal);
      } catch (error) {
        logger.error({ err: error, worker: name }, 'worker tick failed');
      }
      await sleep(intervalMs, undefined, { signal: controller.signal }).catch(() => undefined);
    }
  })();
  return {
    async stop() {
      controller.abort();
      await done;
    },
  };
}
