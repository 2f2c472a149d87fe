/** Time source, passed in so tests can hold or move time. Milliseconds since the epoch. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export const toIso = (ms: number): string => new Date(ms).toISOString();
