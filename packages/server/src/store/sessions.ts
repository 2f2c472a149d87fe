// Sessions and their members. Every function takes the merchant id where a merchant asks, so another
// merchant's session is simply not found (STYLE.md habit 4); pay-page lookups go by token or share id.
import type { Cart } from '@group-checkout/node';
import type { Kysely, Selectable, Transaction } from 'kysely';
import { assertTransition, type MemberStatus, type SessionStatus } from '../domain/session-state.ts';
import type { SplitMode } from '../domain/split.ts';
import { isUniqueViolation } from './db.ts';
import { ReadCache } from './read-cache.ts';
import type { Database, MembersTable, SessionsTable } from './schema.ts';

type Executor = Kysely<Database> | Transaction<Database>;

export interface GroupConfig {
  minSize: number;
  maxSize: number;
  defaultMode: SplitMode;
  allowedModes: SplitMode[];
  expiryHours: number;
}

export interface Customer {
  name?: string;
  email?: string;
  phone?: string;
}

export interface Session {
  id: string;
  merchantId: string;
  status: SessionStatus;
  cart: Cart;
  currency: string;
  totalCents: number;
  orderRef: string | null;
  groupId: string;
  groupMode: SplitMode;
  groupConfig: GroupConfig;
  groupSetUpAt: number | null;
  customer: Customer | null;
  successUrl: string | null;
  cancelUrl: string | null;
  webhookUrl: string | null;
  embedOrigins: string[];
  groupToken: string;
  merchantFeePpm: number;
  consumerFeePpm: number;
  createdAt: number;
  updatedAt: number;
  expiresAt: number;
  closedAt: number | null;
}

export interface ItemShare {
  itemIndex: number;
  quantity: number;
}

export interface Member {
  id: string;
  sessionId: string;
  merchantId: string;
  position: number;
  name: string;
  email: string | null;
  amountCents: number;
  basisPoints: number | null;
  items: ItemShare[] | null;
  shareId: string;
  status: MemberStatus;
  isOrganizer: boolean;
  lastRemindedAt: number | null;
  createdAt: number;
  updatedAt: number;
}

export function toSession(row: Selectable<SessionsTable>): Session {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    status: row.status,
    cart: JSON.parse(row.cart) as Cart,
    currency: row.currency,
    totalCents: row.total_cents,
    orderRef: row.order_ref,
    groupId: row.group_id,
    groupMode: row.group_mode as SplitMode,
    groupConfig: JSON.parse(row.group_config) as GroupConfig,
    groupSetUpAt: row.group_set_up_at,
    customer: row.customer === null ? null : (JSON.parse(row.customer) as Customer),
    successUrl: row.success_url,
    cancelUrl: row.cancel_url,
    webhookUrl: row.webhook_url,
    embedOrigins: JSON.parse(row.embed_origins) as string[],
    groupToken: row.group_token,
    merchantFeePpm: row.merchant_fee_ppm,
    consumerFeePpm: row.consumer_fee_ppm,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    expiresAt: row.expires_at,
    closedAt: row.closed_at,
  };
}

export function toMember(row: Selectable<MembersTable>): Member {
  return {
    id: row.id,
    sessionId: row.session_id,
    merchantId: row.merchant_id,
    position: row.position,
    name: row.name,
    email: row.email,
    amountCents: row.amount_cents,
    basisPoints: row.basis_points,
    items: row.items === null ? null : (JSON.parse(row.items) as ItemShare[]),
    shareId: row.share_id,
    status: row.status,
    isOrganizer: row.is_organizer === 1,
    lastRemindedAt: row.last_reminded_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function memberRow(m: Member): Selectable<MembersTable> {
  return {
    id: m.id,
    session_id: m.sessionId,
    merchant_id: m.merchantId,
    position: m.position,
    name: m.name,
    email: m.email,
    amount_cents: m.amountCents,
    basis_points: m.basisPoints,
    items: m.items === null ? null : JSON.stringify(m.items),
    share_id: m.shareId,
    status: m.status,
    is_organizer: m.isOrganizer ? 1 : 0,
    last_reminded_at: m.lastRemindedAt,
    created_at: m.createdAt,
    updated_at: m.updatedAt,
  };
}

export interface NewSession extends Omit<Session, 'createdAt' | 'updatedAt' | 'expiresAt' | 'closedAt'> {
  organizerTokenHash: string;
}

const MAX_CREATED_AT_TRIES = 50;

/**
 * Inserts a session, its organizer and whatever `alsoWrite` adds (the group.created event), in one
 * transaction. created_at is unique per merchant: it is the list cursor, so a session created in the same
 * millisecond as the merchant's previous one takes the next free millisecond (docs/decisions.md).
 */
export async function insertSession(
  db: Kysely<Database>,
  input: NewSession,
  organizer: Omit<Member, 'createdAt' | 'updatedAt'>,
  now: number,
  expiryMs: number,
  alsoWrite: (trx: Transaction<Database>, session: Session) => Promise<void>,
): Promise<Session> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await db.transaction().execute(async (trx) => {
        const last = await trx
          .selectFrom('sessions')
          .select('created_at')
          .where('merchant_id', '=', input.merchantId)
          .orderBy('created_at', 'desc')
          .limit(1)
          .executeTakeFirst();
        const createdAt = Math.max(now, (last?.created_at ?? 0) + 1);
        const session: Session = {
          ...input,
          createdAt,
          updatedAt: createdAt,
          expiresAt: createdAt + expiryMs,
          closedAt: null,
        };
        await trx
          .insertInto('sessions')
          .values({
            id: session.id,
            merchant_id: session.merchantId,
            status: session.status,
            cart: JSON.stringify(session.cart),
            currency: session.currency,
            total_cents: session.totalCents,
            order_ref: session.orderRef,
            group_id: session.groupId,
            group_mode: session.groupMode,
            group_config: JSON.stringify(session.groupConfig),
            group_set_up_at: null,
            customer: session.customer === null ? null : JSON.stringify(session.customer),
            success_url: session.successUrl,
            cancel_url: session.cancelUrl,
            webhook_url: session.webhookUrl,
            embed_origins: JSON.stringify(session.embedOrigins),
            organizer_token_hash: input.organizerTokenHash,
            group_token: session.groupToken,
            merchant_fee_ppm: session.merchantFeePpm,
            consumer_fee_ppm: session.consumerFeePpm,
            created_at: createdAt,
            updated_at: createdAt,
            expires_at: session.expiresAt,
            closed_at: null,
          })
          .execute();
        await trx
          .insertInto('members')
          .values(memberRow({ ...organizer, createdAt, updatedAt: createdAt }))
          .execute();
        await alsoWrite(trx, session);
        return session;
      });
    } catch (error) {
      // Another process took this millisecond for the same merchant: read again and take the next.
      if (!isUniqueViolation(error) || attempt >= MAX_CREATED_AT_TRIES) throw error;
    }
  }
}

export async function findSessionById(
  db: Executor,
  merchantId: string,
  sessionId: string,
): Promise<Session | undefined> {
  const row = await db
    .selectFrom('sessions')
    .selectAll()
    .where('id', '=', sessionId)
    .where('merchant_id', '=', merchantId)
    .executeTakeFirst();
  return row && toSession(row);
}

/** Sessions with their members, per database: the SDK polls each open session every 3 seconds. */
const detailCaches = new WeakMap<Kysely<Database>, ReadCache<{ session: Session; members: Member[] }>>();

/** The merchant's session and its members; served from memory while nothing was written (read-cache.ts). */
export async function findSessionWithMembers(
  db: Kysely<Database>,
  merchantId: string,
  sessionId: string,
): Promise<{ session: Session; members: Member[] } | undefined> {
  let cache = detailCaches.get(db);
  if (!cache) {
    cache = new ReadCache(db);
    detailCaches.set(db, cache);
  }
  return cache.get(`${merchantId}\u0000${sessionId}`, async () => {
    const session = await findSessionById(db, merchantId, sessionId);
    return session && { session, members: await listMembers(db, sessionId) };
  });
}

export async function findSessionByOrganizerTokenHash(
  db: Executor,
  tokenHash: string,
): Promise<Session | undefined> {
  const row = await db
    .selectFrom('sessions')
    .selectAll()
    .where('organizer_token_hash', '=', tokenHash)
    .executeTakeFirst();
  return row && toSession(row);
}

export async function findSessionByGroupToken(db: Executor, token: string): Promise<Session | undefined> {
  const row = await db.selectFrom('sessions').selectAll().where('group_token', '=', token).executeTakeFirst();
  return row && toSession(row);
}

/** A session by id alone, for code that already holds a credential for it (share, token, job). */
export async function findSessionByIdUnscoped(db: Executor, sessionId: string): Promise<Session | undefined> {
  const row = await db.selectFrom('sessions').selectAll().where('id', '=', sessionId).executeTakeFirst();
  return row && toSession(row);
}

export async function listMembers(db: Executor, sessionId: string): Promise<Member[]> {
  const rows = await db
    .selectFrom('members')
    .selectAll()
    .where('session_id', '=', sessionId)
    .orderBy('position', 'asc')
    .execute();
  return rows.map(toMember);
}

export async function findMemberByShareId(db: Executor, shareId: string): Promise<Member | undefined> {
  const row = await db.selectFrom('members').selectAll().where('share_id', '=', shareId).executeTakeFirst();
  return row && toMember(row);
}

export interface SessionListItem {
  id: string;
  status: SessionStatus;
  orderRef: string | null;
  totalCents: number;
  currency: string;
  createdAt: number;
  expiresAt: number;
}

/** Newest first, strictly older than `before` (milliseconds) when given; one more than `limit` to tell has_more. */
export async function listSessions(
  db: Executor,
  merchantId: string,
  limit: number,
  before: number | undefined,
): Promise<SessionListItem[]> {
  let query = db
    .selectFrom('sessions')
    .select(['id', 'status', 'order_ref', 'total_cents', 'currency', 'created_at', 'expires_at'])
    .where('merchant_id', '=', merchantId);
  if (before !== undefined) query = query.where('created_at', '<', before);
  const rows = await query
    .orderBy('created_at', 'desc')
    .limit(limit + 1)
    .execute();
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

/**
 * Moves a session from `from` to `to` if, and only if, it is still in `from` (and, with `openAt`, not yet
 * expired at that time): the claim that keeps two processes from closing one session twice. True when
 * this call made the change.
 */
export async function transitionSession(
  trx: Executor,
  sessionId: string,
  from: SessionStatus,
  to: SessionStatus,
  now: number,
  openAt?: number,
): Promise<boolean> {
  // The domain's state machine decides which moves exist; every move leaves pending, so it closes.
  assertTransition(from, to);
  let query = trx
    .updateTable('sessions')
    .set({ status: to, updated_at: now, closed_at: now })
    .where('id', '=', sessionId)
    .where('status', '=', from);
  if (openAt !== undefined) query = query.where('expires_at', '>', openAt);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Pending sessions whose expiry has passed, oldest first. */
export async function listExpiredPendingSessionIds(
  db: Executor,
  now: number,
  limit: number,
): Promise<string[]> {
  const rows = await db
    .selectFrom('sessions')
    .select('id')
    .where('status', '=', 'pending')
    .where('expires_at', '<=', now)
    .orderBy('expires_at', 'asc')
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

/**
 * Writes the group as the organizer set it up: `members` is the whole new list. Members already in the
 * session keep their id and share link and are updated; new ones are inserted; pending members left out
 * are removed. Paid members must be passed through unchanged (the split engine keeps their amounts).
 * Runs inside the caller's transaction, after `touchPendingSession` claimed the session.
 */
export async function saveGroup(
  trx: Transaction<Database>,
  session: Session,
  existing: Member[],
  members: Member[],
  mode: SplitMode,
  now: number,
): Promise<void> {
  const kept = new Set(members.map((m) => m.id));
  const removed = existing.filter((m) => !kept.has(m.id)).map((m) => m.id);
  if (removed.length > 0) {
    await trx.deleteFrom('members').where('id', 'in', removed).where('status', '=', 'pending').execute();
  }
  const before = new Set(existing.map((m) => m.id));
  const added = members.filter((m) => !before.has(m.id));
  if (added.length > 0) await trx.insertInto('members').values(added.map(memberRow)).execute();
  for (const m of members.filter((x) => before.has(x.id))) {
    await trx
      .updateTable('members')
      .set({
        position: m.position,
        name: m.name,
        email: m.email,
        amount_cents: m.amountCents,
        basis_points: m.basisPoints,
        items: m.items === null ? null : JSON.stringify(m.items),
        updated_at: now,
      })
      .where('id', '=', m.id)
      .where('status', '=', 'pending')
      .execute();
  }
  await trx
    .updateTable('sessions')
    .set({ group_mode: mode, group_set_up_at: session.groupSetUpAt ?? now, updated_at: now })
    .where('id', '=', session.id)
    .execute();
}

/**
 * Bumps updated_at of a pending session and answers whether it is still open (pending, and `now` before
 * expires_at): taken first inside a transaction that changes the group, it serializes group changes on
 * one session (the row lock on PostgreSQL, the single writer on SQLite) and refuses them once the
 * session has closed or expired.
 */
export async function touchPendingSession(
  trx: Transaction<Database>,
  sessionId: string,
  now: number,
): Promise<boolean> {
  const result = await trx
    .updateTable('sessions')
    .set({ updated_at: now })
    .where('id', '=', sessionId)
    .where('status', '=', 'pending')
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Claims a reminder slot: sets last_reminded_at only if the last one is older than `notBefore`. */
export async function claimReminder(
  db: Executor,
  memberId: string,
  now: number,
  notBefore: number,
): Promise<boolean> {
  const result = await db
    .updateTable('members')
    .set({ last_reminded_at: now })
    .where('id', '=', memberId)
    .where('status', '=', 'pending')
    .where((eb) => eb.or([eb('last_reminded_at', 'is', null), eb('last_reminded_at', '<=', notBefore)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Gives a reminder slot back when the mail could not be sent. */
export async function releaseReminder(
  db: Executor,
  memberId: string,
  previous: number | null,
): Promise<void> {
  await db.updateTable('members').set({ last_reminded_at: previous }).where('id', '=', memberId).execute();
}
