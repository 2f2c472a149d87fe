// What the dashboard's pages read (docs/dashboard.md#pages), through the same flows and store queries as
// the API where the API has them: a session is getSession's, its events and deliveries getEventDetail's.
import type { Deps } from '../deps.ts';
import { refundsOf, withDisputes } from '../domain/settling.ts';
import { ServiceError } from '../errors.ts';
import type { EventPayload } from '../events/outbox.ts';
import { type ApiRequestRecord, listApiRequests } from '../store/api-requests.ts';
import { listSessionAttempts } from '../store/attempts.ts';
import {
  closedPerDay,
  createdPerDay,
  DAY_MS,
  fundedPerDay,
  listKeySummaries,
  listRecentDeliveries,
  listSessionsFiltered,
  medianTimeToFund,
  type SessionFilter,
  type SessionRowSummary,
} from '../store/dashboard.ts';
import type { Delivery, DeliveryAttempt } from '../store/deliveries.ts';
import { listSessionLedgerLines, type StoredLedgerLine } from '../store/ledger.ts';
import { getEventDetail, listMerchantEvents } from './events.ts';
import { API_REQUEST_RETENTION_MS } from './housekeeping.ts';
import { getSession } from './sessions.ts';
import { listMerchantWebhookEndpoints } from './webhooks.ts';

const SESSIONS_PAGE_SIZE = 25;
/** A session's timeline shows at most this many events (a session has a dozen at most in practice). */
const TIMELINE_EVENTS = 100;
/** The webhooks page shows this many of the latest deliveries. */
const RECENT_DELIVERIES = 25;

/** The cursor of a page: the last row's creation time and id, as one opaque string. */
const cursorOf = (row: SessionRowSummary) => `${row.createdAt}.${row.id}`;

/**
 * The position a cursor names; undefined for none. A cursor this list did not give is refused in words
 * (invalid_request) rather than read as the first page, which would show as if it were the page asked for.
 */
function parseCursor(cursor: string | undefined, pattern: RegExp, link: string) {
  if (cursor === undefined) return undefined;
  const match = pattern.exec(cursor);
  if (!match)
    throw new ServiceError('invalid_request', {
      message: `"${cursor.slice(0, 60)}" is not a position this list gave. Use its ${link} link, or start again from the newest.`,
    });
  return { createdAt: Number(match[1]), id: match[2] as string };
}

const SESSION_CURSOR = /^(\d{1,16})\.([A-Za-z0-9_]{1,64})$/;
const REQUEST_CURSOR = /^(\d{1,16})\.(req_[A-Za-z0-9]{1,64})$/;

/** A page of the merchant's sessions; a cursor the list did not give is invalid_request. */
export async function listSessionsPage(
  deps: Deps,
  merchantId: string,
  query: { status?: SessionFilter['status']; search?: string; cursor?: string },
): Promise<{ rows: SessionRowSummary[]; nextCursor: string | null }> {
  const rows = await listSessionsFiltered(deps.db.kysely, merchantId, SESSIONS_PAGE_SIZE, {
    status: query.status,
    search: query.search?.trim() || undefined,
    after: parseCursor(query.cursor, SESSION_CURSOR, 'Older sessions'),
  });
  const page = rows.slice(0, SESSIONS_PAGE_SIZE);
  const last = page.at(-1);
  return { rows: page, nextCursor: rows.length > SESSIONS_PAGE_SIZE && last ? cursorOf(last) : null };
}

export interface TimelineEvent {
  event: EventPayload;
  deliveries: (Delivery & { attempts: DeliveryAttempt[] })[];
}

/**
 * A session with everything that happened to it; another merchant's is session_not_found. `refunds` are
 * the API's (GET /sessions/{id}'s `refunds`, from the same rule), so the page cannot tell them otherwise.
 */
export async function sessionPage(deps: Deps, merchantId: string, sessionId: string) {
  const found = await getSession(deps, merchantId, sessionId);
  // getSession reads attempts only once money has moved; a declined payment moves none and leaves its
  // member pending, so the page reads them itself then: every attempt is listed, declines included.
  const attempts =
    found.attempts.length > 0 ? found.attempts : await listSessionAttempts(deps.db.kysely, sessionId);
  const refunds = refundsOf(found.session, found.members, withDisputes(attempts, found.disputes));
  const ledger: StoredLedgerLine[] = await listSessionLedgerLines(deps.db.kysely, sessionId);
  const { page } = await listMerchantEvents(deps, merchantId, TIMELINE_EVENTS, { sessionId });
  const timeline: TimelineEvent[] = [];
  // Oldest first: a timeline reads down.
  for (const event of [...page].reverse()) {
    const detail = await getEventDetail(deps, merchantId, event.id);
    timeline.push({ event: detail.event, deliveries: detail.deliveries });
  }
  return {
    session: found.session,
    members: found.members,
    attempts,
    disputes: found.disputes,
    refunds,
    ledger,
    timeline,
  };
}

/** The webhooks page: the merchant's endpoints and its latest deliveries with their attempts. */
export async function webhooksPage(deps: Deps, merchantId: string) {
  return {
    endpoints: await listMerchantWebhookEndpoints(deps, merchantId),
    deliveries: await listRecentDeliveries(deps.db.kysely, merchantId, RECENT_DELIVERIES),
  };
}

/** Requests a page of the developers page's request log shows. */
const REQUESTS_PAGE_SIZE = 25;

/**
 * A page of the merchant's API request log, newest first, over the last 7 days (rows the sweep has not
 * deleted yet are not shown either); `requestId` finds one request. The cursor is the last row's time and
 * request id, as one opaque string; one the log did not give is invalid_request.
 */
export async function requestLogPage(
  deps: Deps,
  merchantId: string,
  query: { cursor?: string; requestId?: string },
): Promise<{ rows: ApiRequestRecord[]; nextCursor: string | null }> {
  const after = parseCursor(query.cursor, REQUEST_CURSOR, 'Older requests');
  const requestId = query.requestId?.trim();
  const rows = await listApiRequests(deps.db.kysely, merchantId, REQUESTS_PAGE_SIZE, {
    since: deps.clock.now() - API_REQUEST_RETENTION_MS,
    ...(after ? { after } : {}),
    ...(requestId ? { requestId: requestId.slice(0, 100) } : {}),
  });
  const page = rows.slice(0, REQUESTS_PAGE_SIZE);
  const last = page.at(-1);
  return {
    rows: page,
    nextCursor: rows.length > REQUESTS_PAGE_SIZE && last ? `${last.createdAt}.${last.id}` : null,
  };
}

/** The developers page's keys: prefixes and lifetimes, never a key. */
export const keysPage = (deps: Deps, merchantId: string) => listKeySummaries(deps.db.kysely, merchantId);

const OVERVIEW_DAYS = 30;

export interface Overview {
  /** UTC days, oldest first, as ms at midnight. */
  days: number[];
  created: number[];
  funded: number[];
  expired: number[];
  cancelled: number[];
  /** Funded volume per currency, per day, minor units. */
  volume: { currency: string; cents: number[] }[];
  /** Of the sessions that ended (funded, expired or cancelled) in the period, the share funded; null for none. */
  fundingRate: number | null;
  medianTimeToFundMs: number | null;
}

/** The overview's 30 days, each figure from an indexed aggregate (docs/decisions.md#merchant-dashboard). */
export async function overviewPage(deps: Deps, merchantId: string): Promise<Overview> {
  const db = deps.db.kysely;
  const today = Math.floor(deps.clock.now() / DAY_MS);
  const firstDay = today - OVERVIEW_DAYS + 1;
  const since = firstDay * DAY_MS;
  const [created, closed, funded, median] = await Promise.all([
    createdPerDay(db, merchantId, since),
    closedPerDay(db, merchantId, since),
    fundedPerDay(db, merchantId, since),
    medianTimeToFund(db, merchantId, since),
  ]);
  const dayNumbers = Array.from({ length: OVERVIEW_DAYS }, (_, i) => firstDay + i);
  const perDay = (rows: { day: number; count: number }[]) =>
    dayNumbers.map((d) => rows.filter((r) => r.day === d).reduce((a, r) => a + r.count, 0));
  const currencies = [...new Set(funded.map((v) => v.currency))].sort();
  const total = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const f = perDay(funded);
  const expired = perDay(closed.filter((r) => r.status === 'expired'));
  const cancelled = perDay(closed.filter((r) => r.status === 'cancelled'));
  const ended = total(f) + total(expired) + total(cancelled);
  return {
    days: dayNumbers.map((d) => d * DAY_MS),
    created: dayNumbers.map((d) => created.get(d) ?? 0),
    funded: f,
    expired,
    cancelled,
    volume: currencies.map((currency) => ({
      currency,
      cents: dayNumbers.map((d) =>
        funded.filter((v) => v.day === d && v.currency === currency).reduce((a, v) => a + v.cents, 0),
      ),
    })),
    fundingRate: ended === 0 ? null : total(f) / ended,
    medianTimeToFundMs: median,
  };
}
