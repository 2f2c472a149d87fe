// A clock the test moves by hand, for the app (startTestApp's `clock`) and the test's own arithmetic.
import type { Clock } from '../../src/clock.ts';

export interface ManualClock extends Clock {
  advance(ms: number): void;
  set(ms: number): void;
}

/** A clock that stands still at `start` until the test moves it. */
export function manualClock(start = Date.parse('2026-03-01T12:00:00.000Z')): ManualClock {
  let now = start;
  return {
    now: () => now,
    advance(ms) {
      now += ms;
    },
    set(ms) {
      now = ms;
    },
  };
}

export const HOUR_MS = 60 * 60 * 1000;
export const MINUTE_MS = 60 * 1000;
