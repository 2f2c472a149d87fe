// The merchant dashboard's people, sign-in links and cookie sessions (docs/dashboard.md). Links and
// cookies are found by their SHA-256 hash; neither is stored as given.
import { type Selectable, sql } from 'kysely';
import { type DeliveryAttempt, listAttemptsOf } from './deliveries.ts';
import { newestFirst } from './paging.ts';
import type { DashboardUsersTable, Executor } from './schema.ts';

export type DashboardRole = 'owner' | 'developer' | 'viewer';

export interface DashboardUser {
  id: string;
  merchantId: string;
  email: string;
  role: DashboardRole;
  createdAt: number;
}

export interface DashboardSession {
  tokenHash: string;
  user: DashboardUser;
  csrfToken: string;
  createdAt: number;
  lastSeenAt: number;
}

const toUser = (row: Selectable<DashboardUsersTable>): DashboardUser => ({
  id: row.id,
  merchantId: row.merchant_id,
  email: row.email,
  role: row.role,
  createdAt: row.created_at,
});

export async function insertDashboardUser(db: Executor, user: DashboardUser): Promise<void> {
  await db
    .insertInto('dashboard_users')
    .values({
      id: user.id,
      merchant_id: user.merchantId,
      email: user.email,
      role: user.role,
      created_at: user.createdAt,
    })
    .execute();
}

export async function findDashboardUser(
  db: Executor,
  merchantId: string,
  userId: string,
): Promise<DashboardUser | undefined> {
  const row = await db
    .selectFrom('dashboard_users')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('id', '=', userId)
    .executeTakeFirst();
  return row && toUser(row);
}

export async function findDashboardUserByEmail(
  db: Executor,
  merchantId: string,
  email: string,
): Promise<DashboardUser | undefined> {
  const row = await db
    .selectFrom('dashboard_users')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('email', '=', email)
    .executeTakeFirst();
  return row && toUser(row);
}

/** Every user with this address, whatever the merchant. */
export async function listDashboardUsersByEmail(db: Executor, email: string): Promise<DashboardUser[]> {
  const rows = await db.selectFrom('dashboard_users').selectAll().where('email', '=', email).execute();
  return rows.map(toUser);
}

export async function listDashboardUsers(db: Executor, merchantId: string): Promise<DashboardUser[]> {
  const rows = await db
    .selectFrom('dashboard_users')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(toUser);
}

export async function countOwners(db: Executor, merchantId: string): Promise<number> {
  const row = await db
    .selectFrom('dashboard_users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('merchant_id', '=', merchantId)
    .where('role', '=', 'owner')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Removes the user, its unused links and its sessions. */
export async function deleteDashboardUser(db: Executor, userId: string): Promise<void> {
  await db.deleteFrom('dashboard_sessions').where('user_id', '=', userId).execute();
  await db.deleteFrom('dashboard_links').where('user_id', '=', userId).execute();
  await db.deleteFrom('dashboard_users').where('id', '=', userId).execute();
}

export async function insertDashboardLink(
  db: Executor,
  link: { tokenHash: string; userId: string; createdAt: number; expiresAt: number },
): Promise<void> {
  await db
    .insertInto('dashboard_links')
    .values({
      token_hash: link.tokenHash,
      user_id: link.userId,
      created_at: link.createdAt,
      expires_at: link.expiresAt,
      used_at: null,
    })
    .execute();
}

/**
 * Marks the link used if it is unused and unexpired; the conditional update is the claim, so of two
 * requests with one link one wins. Answers the link's user id, or undefined.
 */
export async function claimDashboardLink(
  db: Executor,
  tokenHash: string,
  now: number,
): Promise<string | undefined> {
  const row = await db
    .updateTable('dashboard_links')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returning('user_id')
    .executeTakeFirst();
  return row?.user_id;
}

/** Whether a link with this hash exists, is unused and unexpired (the page that asks to confirm it). */
export async function dashboardLinkIsLive(db: Executor, tokenHash: string, now: number): Promise<boolean> {
  const row = await db
    .selectFrom('dashboard_links')
    .select('token_hash')
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return row !== undefined;
}

export async function insertDashboardSession(
  db: Executor,
  s: { tokenHash: string; userId: string; csrfToken: string; now: number },
): Promise<void> {
  await db
    .insertInto('dashboard_sessions')
    .values({
      token_hash: s.tokenHash,
      user_id: s.userId,
      csrf_token: s.csrfToken,
      created_at: s.now,
      last_seen_at: s.now,
      ended_at: null,
    })
    .execute();
}

/** The live session with this hash and its user; undefined when unknown or ended. */
export async function findDashboardSession(
  db: Executor,
  tokenHash: string,
): Promise<DashboardSession | undefined> {
  const row = await db
    .selectFrom('dashboard_sessions as s')
    .innerJoin('dashboard_users as u', 'u.id', 's.user_id')
    .select([
      's.token_hash',
      's.csrf_token',
      's.created_at as session_created_at',
      's.last_seen_at',
      'u.id',
      'u.merchant_id',
      'u.email',
      'u.role',
      'u.created_at',
    ])
    .where('s.token_hash', '=', tokenHash)
    .where('s.ended_at', 'is', null)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    tokenHash: row.token_hash,
    csrfToken: row.csrf_token,
    createdAt: row.session_created_at,
    lastSeenAt: row.last_seen_at,
    user: toUser(row),
  };
}

export async function touchDashboardSession(db: Executor, tokenHash: string, now: number): Promise<void> {
  await db
    .updateTable('dashboard_sessions')
    .set({ last_seen_at: now })
    .where('token_hash', '=', tokenHash)
    .execute();
}

export async function endDashboardSession(db: Executor, tokenHash: string, now: number): Promise<void> {
  await db
    .updateTable('dashboard_sessions')
    .set({ ended_at: now })
    .where('token_hash', '=', tokenHash)
    .where('ended_at', 'is', null)
    .execute();
}

export interface SessionFilter {
  status?: 'pending' | 'funded' | 'cancelled' | 'expired';
  /** A session id or an order_ref, matched exactly. */
  search?: string;
  /** The last row of the previous page: the page starts after it. */
  after?: { createdAt: number; id: string };
}

export interface SessionRowSummary {
  id: string;
  status: 'pending' | 'funded' | 'cancelled' | 'expired';
  orderRef: string | null;
  totalCents: number;
  currency: string;
  createdAt: number;
  expiresAt: number;
}

/**
 * The merchant's sessions newest first (creation time, then id), one more than `limit` to tell whether
 * more follow. Served by sessions_merchant_created, or sessions_merchant_status_created with a status.
 */
export async function listSessionsFiltered(
  db: Executor,
  merchantId: string,
  limit: number,
  filter: SessionFilter,
): Promise<SessionRowSummary[]> {
  let query = db
    .selectFrom('sessions')
    .select(['id', 'status', 'order_ref', 'total_cents', 'currency', 'created_at', 'expires_at'])
    .where('merchant_id', '=', merchantId);
  if (filter.status) query = query.where('status', '=', filter.status);
  const search = filter.search;
  if (search) query = query.where((eb) => eb.or([eb('id', '=', search), eb('order_ref', '=', search)]));
  const rows = await newestFirst(query, filter.after, limit).execute();
  return rows.map((r) => ({
    id: r.id,
    status: r.status,
    orderRef: r.order_ref,
    totalCents: r.total_cents,
    currency: r.currency,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
  }));
}

export interface RecentDelivery {
  id: string;
  eventId: string;
  eventType: string;
  sessionId: string | null;
  webhookId: string | null;
  url: string;
  state: 'pending' | 'delivered' | 'failed';
  createdAt: number;
  attempts: DeliveryAttempt[];
}

/** The merchant's latest deliveries, newest first, each with its attempts (deliveries_merchant_created). */
export async function listRecentDeliveries(
  db: Executor,
  merchantId: string,
  limit: number,
): Promise<RecentDelivery[]> {
  const rows = await db
    .selectFrom('deliveries as d')
    .innerJoin('events as e', 'e.id', 'd.event_id')
    .select([
      'd.id',
      'd.event_id',
      'e.type',
      'e.session_id',
      'd.webhook_id',
      'd.url',
      'd.state',
      'd.created_at',
    ])
    .where('d.merchant_id', '=', merchantId)
    .orderBy('d.created_at', 'desc')
    .orderBy('d.id', 'desc')
    .limit(limit)
    .execute();
  if (rows.length === 0) return [];
  const attempts = await listAttemptsOf(
    db,
    rows.map((r) => r.id),
  );
  return rows.map((r) => ({
    id: r.id,
    eventId: r.event_id,
    eventType: r.type,
    sessionId: r.session_id,
    webhookId: r.webhook_id,
    url: r.url,
    state: r.state,
    createdAt: r.created_at,
    attempts: attempts.get(r.id) ?? [],
  }));
}

export interface KeySummary {
  kind: 'publishable' | 'secret';
  /** The key's first characters: a secret key itself is stored only as a hash. */
  prefix: string;
  /** A publishable key whole (it is public); null for secret keys and publishable keys made before it was kept. */
  shown: string | null;
  createdAt: number;
  revokedAt: number | null;
  expiresAt: number | null;
}

/** The merchant's API keys, newest first: by prefix, and publishable keys whole. */
export async function listKeySummaries(db: Executor, merchantId: string): Promise<KeySummary[]> {
  const rows = await db
    .selectFrom('api_keys')
    .select(['kind', 'prefix', 'shown', 'created_at', 'revoked_at', 'expires_at'])
    .where('merchant_id', '=', merchantId)
    .orderBy('created_at', 'desc')
    .execute();
  return rows.map((r) => ({
    kind: r.kind,
    prefix: r.prefix,
    shown: r.kind === 'publishable' ? r.shown : null,
    createdAt: r.created_at,
    revokedAt: r.revoked_at,
    expiresAt: r.expires_at,
  }));
}

export const DAY_MS = 24 * 60 * 60 * 1000;

/** Sessions created per UTC day since `since` (day = floor(ms / DAY_MS)), from sessions_merchant_created. */
export async function createdPerDay(
  db: Executor,
  merchantId: string,
  since: number,
): Promise<Map<number, number>> {
  const rows = await db
    .selectFrom('sessions')
    .select((eb) => [
      sql<number>`cast(created_at / ${DAY_MS} as integer)`.as('day'),
      eb.fn.countAll<number>().as('n'),
    ])
    .where('merchant_id', '=', merchantId)
    .where('created_at', '>=', since)
    .groupBy('day')
    .execute();
  return new Map(rows.map((r) => [Number(r.day), Number(r.n)]));
}

/** Sessions closed (expired, cancelled) per UTC day and status since `since`, from sessions_merchant_closed. */
export async function closedPerDay(
  db: Executor,
  merchantId: string,
  since: number,
): Promise<{ day: number; status: string; count: number }[]> {
  const rows = await db
    .selectFrom('sessions')
    .select((eb) => [
      sql<number>`cast(closed_at / ${DAY_MS} as integer)`.as('day'),
      'status',
      eb.fn.countAll<number>().as('n'),
    ])
    .where('merchant_id', '=', merchantId)
    .where('closed_at', '>=', since)
    .groupBy(['day', 'status'])
    .execute();
  return rows.map((r) => ({ day: Number(r.day), status: r.status, count: Number(r.n) }));
}

/** Sessions funded and their volume (total_cents) per UTC day and currency since `since` (sessions_merchant_funded). */
export async function fundedPerDay(
  db: Executor,
  merchantId: string,
  since: number,
): Promise<{ day: number; currency: string; count: number; cents: number }[]> {
  const rows = await db
    .selectFrom('sessions')
    .select((eb) => [
      sql<number>`cast(funded_at / ${DAY_MS} as integer)`.as('day'),
      'currency',
      eb.fn.countAll<number>().as('n'),
      eb.fn.sum<number>('total_cents').as('cents'),
    ])
    .where('merchant_id', '=', merchantId)
    .where('funded_at', '>=', since)
    .groupBy(['day', 'currency'])
    .execute();
  return rows.map((r) => ({
    day: Number(r.day),
    currency: r.currency,
    count: Number(r.n),
    cents: Number(r.cents),
  }));
}

/**
 * The median of funded_at - created_at over sessions funded since `since`, in whole milliseconds: the middle
 * duration of an odd count, the mean of the two middle ones of an even count (rounded down); null when none
 * was funded. Two reads of sessions_merchant_funded: the count, then the one or two rows in the middle of
 * the ordered durations.
 */
export async function medianTimeToFund(
  db: Executor,
  merchantId: string,
  since: number,
): Promise<number | null> {
  const base = db
    .selectFrom('sessions')
    .where('merchant_id', '=', merchantId)
    .where('funded_at', '>=', since);
  const { n } = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const count = Number(n);
  if (count === 0) return null;
  const duration = sql<number>`funded_at - created_at`;
  const middle = await base
    .select(duration.as('ms'))
    .orderBy(duration)
    .limit(count % 2 === 0 ? 2 : 1)
    .offset(Math.floor((count - 1) / 2))
    .execute();
  if (middle.length === 0) return null;
  const total = middle.reduce((sum, row) => sum + Number(row.ms), 0);
  return Math.floor(total / middle.length);
}

/** The merchant's name, or its payout currency (null: each session's own; the mode follows, as at creation). */
export async function updateMerchantSettings(
  db: Executor,
  merchantId: string,
  change: { name: string } | { payoutCurrency: string | null },
): Promise<void> {
  await db
    .updateTable('merchants')
    .set(
      'name' in change
        ? { name: change.name }
        : {
            payout_currency: change.payoutCurrency,
            payout_mode: change.payoutCurrency ? 'preferred' : 'checkout',
          },
    )
    .where('id', '=', merchantId)
    .execute();
}
