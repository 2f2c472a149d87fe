// The `mixed` scenario: GET /v1/sessions/{id} spread over 1,000 sessions while creates and pays are
// written beside it at a steady rate (by default 100 creates and 100 pays a second), as a shop's SDKs
// poll their sessions while other groups form and pay. What it shows is whether a write costs the
// reads of other sessions their cache (store/read-cache.ts): only the session a write names is read again.
import type { SharePool } from './shares.ts';

/** Hands out GET paths over `sessions`, round and round. */
export class SessionCycle {
  private next = 0;
  constructor(private readonly sessions: readonly string[]) {}
  path(): string {
    const id = this.sessions[this.next++ % this.sessions.length];
    return `/v1/sessions/${id}`;
  }
}

/** `count` sessions made through POST /v1/sessions, four at a time; answers their ids. */
export async function seedPolled(
  baseUrl: string,
  headers: Record<string, string>,
  body: string,
  count: number,
): Promise<string[]> {
  const ids: string[] = [];
  let made = 0;
  async function worker() {
    while (made < count) {
      made++;
      const response = await fetch(`${baseUrl}/v1/sessions`, { method: 'POST', headers, body });
      const text = await response.text();
      if (!response.ok) throw new Error(`seeding: POST /v1/sessions answered ${response.status}: ${text}`);
      ids.push((JSON.parse(text) as { session_id: string }).session_id);
    }
  }
  await Promise.all(Array.from({ length: 4 }, worker));
  return ids;
}

export interface WritesDone {
  creates: number;
  pays: number;
  /** Writes answered with anything but 2xx, or not answered. */
  failed: number;
  /** Ticks skipped because the writes of earlier ticks were still in flight (the server fell behind). */
  skipped: number;
}

/** The writes sent beside the polls (BENCH_MIXED_KINDS): both by default. */
export const WRITE_KINDS = ['create', 'pay'] as const;
export type WriteKind = (typeof WRITE_KINDS)[number];

/**
 * Sends one create and one pay (or only the `kinds` given) every 1000 / `perSecond` ms until stopped, each
 * request on its own (a tick whose predecessors are still in flight past a limit is skipped and counted,
 * so a slow server is not buried under a queue). `stop` waits for the requests in flight and answers what
 * was done.
 */
export function startWrites(
  baseUrl: string,
  create: { headers: Record<string, string>; body: string },
  pays: SharePool,
  payBody: string,
  perSecond: number,
  kinds: readonly WriteKind[] = WRITE_KINDS,
): { stop: () => Promise<WritesDone> } {
  const done: WritesDone = { creates: 0, pays: 0, failed: 0, skipped: 0 };
  const inFlight = new Set<Promise<void>>();
  const send = (path: string, headers: Record<string, string>, body: string, kind: 'creates' | 'pays') => {
    const request = fetch(`${baseUrl}${path}`, { method: 'POST', headers, body })
      .then(async (response) => {
        await response.arrayBuffer();
        if (response.ok) done[kind]++;
        else done.failed++;
      })
      .catch(() => {
        done.failed++;
      })
      .finally(() => inFlight.delete(request));
    inFlight.add(request);
  };
  const payHeaders = { 'content-type': 'application/json' };
  // No writes (BENCH_MIXED_WRITES=0): the polls alone, over the same sessions.
  if (perSecond <= 0 || kinds.length === 0) return { stop: async () => done };
  const timer = setInterval(() => {
    if (inFlight.size > 200) {
      done.skipped++;
      return;
    }
    if (kinds.includes('create')) send('/v1/sessions', create.headers, create.body, 'creates');
    if (kinds.includes('pay')) send(pays.path(), payHeaders, payBody, 'pays');
  }, 1000 / perSecond);
  return {
    async stop() {
      clearInterval(timer);
      await Promise.all(inFlight);
      return done;
    },
  };
}
