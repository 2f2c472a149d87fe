// `group-checkout listen --forward-to URL`: for local development, forwards a merchant's events to a URL on
// the developer's machine, which the service itself may not be able to reach (docs/api.md#local-development).
// It reads the events API with the merchant's secret key, like any client, and POSTs each new event to the
// URL signed with a secret of its own, printed at start (Standard Webhooks headers, webhook-id = the event
// id), so the developer's receiver verifies exactly as it will in production. Events that happened before
// it started are not forwarded; nothing is retried: a failed forward is printed, and
// `POST /events/{id}/redeliver` or the next event tries again.
import { setTimeout as sleep } from 'node:timers/promises';
import { GroupCheckout, generateTestHeaders, type WebhookEvent } from '@group-checkout/node';
import { ids } from '../ids.ts';

export interface ForwardOptions {
  apiKey: string;
  apiBase: string;
  forwardTo: string;
  /** Event types to forward; empty for all. */
  events: string[];
  /** The whsec_ secret forwards are signed with; a new one when not given. */
  secret?: string;
  intervalMs: number;
  json: boolean;
  /** Stops the loop (^C). */
  signal: AbortSignal;
  out: (line: string) => void;
}

/** How many event ids are remembered as forwarded; far more than one poll's worth. */
const REMEMBERED = 10_000;
const PAGE = 100;
const FORWARD_TIMEOUT_MS = 15_000;

export async function forwardEvents(options: ForwardOptions): Promise<void> {
  const client = new GroupCheckout(options.apiKey, { baseUrl: options.apiBase });
  const secret = options.secret ?? ids.webhookSecret();
  const me = await client.merchants.me();
  const seen = new Set<string>();
  // What exists now is history: mark the newest page as seen, so only what happens from here is forwarded.
  for (const event of (await client.events.list({ limit: PAGE })).data) seen.add(event.id);
  report(options, {
    ready: true,
    merchant_id: me.id,
    forward_to: options.forwardTo,
    secret,
    line: `Ready. Forwarding ${me.name}'s events to ${options.forwardTo}\nWebhook signing secret: ${secret} (verify with it; ^C to stop)`,
  });
  while (!options.signal.aborted) {
    try {
      for (const event of await newEvents(client, seen)) {
        remember(seen, event.id);
        if (options.events.length > 0 && !options.events.includes(event.type)) continue;
        await forward(options, event, secret);
      }
    } catch (error) {
      report(options, { error: (error as Error).message, line: `! ${(error as Error).message}` });
    }
    await sleep(options.intervalMs, undefined, { signal: options.signal }).catch(() => undefined);
  }
}

/** Events not seen yet, oldest first: pages are read newest first until one holds a seen event. */
async function newEvents(client: GroupCheckout, seen: Set<string>): Promise<WebhookEvent[]> {
  const fresh: WebhookEvent[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await client.events.list({ limit: PAGE, ...(cursor ? { cursor } : {}) });
    const unseen = page.data.filter((e) => !seen.has(e.id));
    fresh.push(...unseen);
    if (unseen.length < page.data.length || !page.has_more || page.next_cursor === null) break;
    cursor = page.next_cursor;
  }
  return fresh.reverse();
}

function remember(seen: Set<string>, id: string) {
  seen.add(id);
  if (seen.size > REMEMBERED) seen.delete(seen.values().next().value as string);
}

async function forward(options: ForwardOptions, event: WebhookEvent, secret: string): Promise<void> {
  const { body, headers } = generateTestHeaders(event, secret, { id: event.id });
  const started = performance.now();
  let status: number | null = null;
  let error: string | null = null;
  try {
    const res = await fetch(options.forwardTo, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'GroupCheckout-Listen/1.0', ...headers },
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
    });
    status = res.status;
    await res.arrayBuffer();
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    error = cause?.code ?? cause?.message ?? (e as Error).message;
  }
  const ms = Math.round(performance.now() - started);
  const outcome = status === null ? `failed: ${error}` : `${status}`;
  report(options, {
    event_id: event.id,
    type: event.type,
    session_id: event.data.session_id,
    status_code: status,
    error,
    latency_ms: ms,
    line: `${new Date().toISOString()}  ${event.type.padEnd(20)} ${event.id}  → ${outcome} (${ms} ms)`,
  });
}

function report(options: ForwardOptions, entry: Record<string, unknown> & { line: string }) {
  const { line, ...fields } = entry;
  options.out(options.json ? JSON.stringify(fields) : line);
}
