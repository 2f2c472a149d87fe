// Sessions (their members are in members.ts). Every function takes the merchant id where a merchant asks, so another
// merchant's session is simply not found (docs/architecture.md); pay-page lookups go by token or share id.
import type { Cart } from '@group-checkout/node';
import type { Selectable, Transaction } from 'kysely';
import type { ResolvedGroupConfig } from '../domain/group-config.ts';
import { assertTransition, type SessionStatus } from '../domain/session-state.ts';
import type { SplitMode } from '../domain/split.ts';
import { isLocale, type Locale, type LocaleSetting } from '../i18n/locales.ts';
import { type Attempt, listSessionAttempts } from './attempts.ts';
import type { Db } from './db.ts';
import { type Dispute, listSessionDisputes } from './disputes.ts';
import { listMembers, type Member } from './members.ts';
import { fieldsOf, prepared, preparedBy } from './prepared.ts';
import type { Database, Executor, SessionsTable } from './schema.ts';

type GroupConfig = ResolvedGroupConfig;

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
  /**
   * The step the processor charges the session's currency in (processor/currencies.ts), fixed at create
   * like the fee rates: every share, fee and transfer of the session is a multiple of it.
   */
  chargeStep: number;
  /** The language of the session's pages and mail, or `auto`: the reader's (i18n/locales.ts). */
  locale: LocaleSetting;
  /** The language of its mail: the locale, or with `auto` the creator's (their Accept-Language). */
  mailLocale: Locale;
  createdAt: number;
  updatedAt: number;
  expiresAt: number;
  closedAt: number | null;
  fundedAt: number | null;
  /** When the money work of a funded or closed session was all done (docs/decisions.md#payments). */
  settledAt: number | null;
  /** When the settling worker should next look at the session; null while it owes nothing. */
  settleAfter: number | null;
}

function toSession(row: Selectable<SessionsTable>): Session {
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
    // Sessions made before capture modes existed charge immediately.
    groupConfig: {
      capture: 'immediate',
      ...(JSON.parse(row.group_config) as Partial<GroupConfig>),
    } as GroupConfig,
    groupSetUpAt: row.group_set_up_at,
    customer: row.customer === null ? null : (JSON.parse(row.customer) as Customer),
    successUrl: row.success_url,
    cancelUrl: row.cancel_url,
    webhookUrl: row.webhook_url,
    embedOrigins: JSON.parse(row.embed_origins) as string[],
    groupToken: row.group_token,
    merchantFeePpm: row.merchant_fee_ppm,
    consumerFeePpm: row.consumer_fee_ppm,
    chargeStep: row.charge_step,
    locale: (isLocale(row.locale) ? row.locale : 'auto') as LocaleSetting,
    mailLocale: isLocale(row.mail_locale) ? row.mail_locale : 'en',
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    expiresAt: row.expires_at,
    closedAt: row.closed_at,
    fundedAt: row.funded_at,
    settledAt: row.settled_at,
    settleAfter: row.settle_after,
  };
}

/** A session as stored, with the hash of its organizer token (the token itself is never stored). */
export interface SessionRow extends Session {
  organizerTokenHash: string;
}

export async function insertSession(trx: Transaction<Database>, session: SessionRow): Promise<void> {
  await insertQuery.execute(trx, {
    session,
    cart: JSON.stringify(session.cart),
    groupConfig: JSON.stringify(session.groupConfig),
    customer: session.customer === null ? null : JSON.stringify(session.customer),
    embedOrigins: JSON.stringify(session.embedOrigins),
  });
}

/** A new session's row; its JSON columns are given as text. */
const insertQuery = prepared(
  (
    db,
    p: {
      session: SessionRow;
      cart: string;
      groupConfig: string;
      customer: string | null;
      embedOrigins: string;
    },
  ) => {
    const at = fieldsOf<SessionRow>(p, 'session');
    return db.insertInto('sessions').values({
      id: at('id'),
      merchant_id: at('merchantId'),
      status: at('status'),
      cart: p.cart,
      currency: at('currency'),
      total_cents: at('totalCents'),
      order_ref: at('orderRef'),
      group_id: at('groupId'),
      group_mode: at('groupMode'),
      group_config: p.groupConfig,
      group_set_up_at: at('groupSetUpAt'),
      customer: p.customer,
      success_url: at('successUrl'),
      cancel_url: at('cancelUrl'),
      webhook_url: at('webhookUrl'),
      embed_origins: p.embedOrigins,
      organizer_token_hash: at('organizerTokenHash'),
      group_token: at('groupToken'),
      merchant_fee_ppm: at('merchantFeePpm'),
      consumer_fee_ppm: at('consumerFeePpm'),
      charge_step: at('chargeStep'),
      locale: at('locale'),
      mail_locale: at('mailLocale'),
      created_at: at('createdAt'),
      updated_at: at('updatedAt'),
      expires_at: at('expiresAt'),
      closed_at: at('closedAt'),
      funded_at: at('fundedAt'),
      settled_at: at('settledAt'),
      settle_after: at('settleAfter'),
    });
  },
);

/** The creation time of the merchant's newest session, if it has one. */
export async function findLatestSessionCreatedAt(
  trx: Executor,
  merchantId: string,
): Promise<number | undefined> {
  return (await latestCreatedQuery.first(trx, { merchantId }))?.created_at ?? undefined;
}

// max() rather than `order by created_at desc limit 1`: SQLite answers it from the index's last entry in
// a third of the time (both walk sessions_merchant_created).
const latestCreatedQuery = prepared((db, p: { merchantId: string }) =>
  db
    .selectFrom('sessions')
    .select((eb) => eb.fn.max('created_at').as('created_at'))
    .where('merchant_id', '=', p.merchantId),
);

export async function findSessionById(
  db: Executor,
  merchantId: string,
  sessionId: string,
): Promise<Session | undefined> {
  const row = await byMerchantAndId.first(db, { merchantId, sessionId });
  return row && toSession(row);
}

const byMerchantAndId = prepared((db, p: { merchantId: string; sessionId: string }) =>
  db.selectFrom('sessions').selectAll().where('id', '=', p.sessionId).where('merchant_id', '=', p.merchantId),
);

export interface SessionWithMembers {
  session: Session;
  members: Member[];
  /** The session's processor attempts; loaded only once money has moved (a member not pending, or funded). */
  attempts: Attempt[];
  /** Disputes on its members' payments; loaded, like attempts, only once money has moved. */
  disputes: Dispute[];
}

/**
 * The merchant's session and its members; on SQLite served from the read cache while nothing was
 * written (read-cache.ts), since the SDK polls each open session every 3 seconds. The answer is frozen.
 */
export async function findSessionWithMembers(
  db: Db,
  merchantId: string,
  sessionId: string,
): Promise<Readonly<SessionWithMembers> | undefined> {
  const cache = db.readCache<SessionWithMembers>('session-with-members', SESSION_CACHE);
  // The loader is an inline arrow: a named closure made on every call costs a helper call under tsx.
  return cache
    ? cache.get(
        `${merchantId}\u0000${sessionId}`,
        () => loadSessionWithMembers(db, merchantId, sessionId),
        sessionId,
      )
    : loadSessionWithMembers(db, merchantId, sessionId);
}

/** What a session's answer is read from: a write naming another session leaves it cached. */
const SESSION_CACHE = { tables: ['sessions', 'members', 'attempts', 'disputes'], bySession: true };

async function loadSessionWithMembers(
  db: Db,
  merchantId: string,
  sessionId: string,
): Promise<SessionWithMembers | undefined> {
  const session = await findSessionById(db.kysely, merchantId, sessionId);
  if (!session) return undefined;
  const members = await listMembers(db.kysely, sessionId);
  // Charges, refunds and the transfer all come from attempts that succeeded, and each moved a member out
  // of pending (or funded the session): a session without either has none, and costs no third query.
  const moved = session.status === 'funded' || members.some((m) => m.status !== 'pending');
  if (!moved) return { session, members, attempts: [], disputes: [] };
  return {
    session,
    members,
    attempts: await listSessionAttempts(db.kysely, sessionId),
    disputes: await listSessionDisputes(db.kysely, sessionId),
  };
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
  const row = await byId.first(db, { sessionId });
  return row && toSession(row);
}

const byId = prepared((db, p: { sessionId: string }) =>
  db.selectFrom('sessions').selectAll().where('id', '=', p.sessionId),
);

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
 * Row lock on a session that is still open (pending, and `now` before expires_at), taken first in a
 * transaction that changes the session or its group: it bumps updated_at, which locks the row on
 * PostgreSQL and takes the single writer's lock on SQLite, so changes to one session run one after
 * another. Answers the session as locked, or undefined when it is no longer open.
 */
export function lockOpenSession(
  trx: Transaction<Database>,
  sessionId: string,
  now: number,
): Promise<Session | undefined> {
  return lockSession(trx, sessionId, now, { openAt: now });
}

/**
 * Closes a pending session as `to` if, and only if, it is still pending (and, with `openAt`, not yet
 * expired at that time): the claim that keeps two processes from closing one session twice. Answers
 * the closed session, or undefined when this call did not close it. `expiresAt`, when given, is
 * written too (an expiry run early by the sandbox helper moves it to the moment of closing).
 */
export async function closePendingSession(
  trx: Executor,
  sessionId: string,
  to: Exclude<SessionStatus, 'pending'>,
  now: number,
  options: { openAt?: number; expiresAt?: number } = {},
): Promise<Session | undefined> {
  // The domain's state machine decides which moves exist.
  assertTransition('pending', to);
  let query = trx
    .updateTable('sessions')
    .set({
      status: to,
      updated_at: now,
      closed_at: now,
      ...(options.expiresAt === undefined ? {} : { expires_at: options.expiresAt }),
    })
    .where('id', '=', sessionId)
    .where('status', '=', 'pending');
  if (options.openAt !== undefined) query = query.where('expires_at', '>', options.openAt);
  const row = await query.returningAll().executeTakeFirst();
  return row && toSession(row);
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

/** Records the split mode and the first set-up time of a locked session's group. */
export async function updateGroupMode(
  trx: Transaction<Database>,
  sessionId: string,
  mode: SplitMode,
  setUpAt: number,
  now: number,
): Promise<void> {
  await trx
    .updateTable('sessions')
    .set({ group_mode: mode, group_set_up_at: setUpAt, updated_at: now })
    .where('id', '=', sessionId)
    .execute();
}

/**
 * Row lock on a session whatever its status, taken first by a transaction that records what a processor
 * did for it (the session may have closed while the call was out); with `openAt`, only while it is still
 * open then (lockOpenSession). Answers the session as locked.
 */
export async function lockSession(
  trx: Transaction<Database>,
  sessionId: string,
  now: number,
  options: { openAt?: number } = {},
): Promise<Session | undefined> {
  const { openAt } = options;
  const row = await lockQuery(openAt === undefined ? 'any' : 'open').first(trx, { sessionId, now, openAt });
  return row && toSession(row);
}

const lockQuery = preparedBy(
  (db, p: { sessionId: string; now: number; openAt: number | undefined }, which: 'any' | 'open') => {
    let query = db.updateTable('sessions').set({ updated_at: p.now }).where('id', '=', p.sessionId);
    if (which === 'open')
      query = query.where('status', '=', 'pending').where('expires_at', '>', p.openAt as number);
    return query.returningAll();
  },
);

/** Marks a pending session funded (in the transaction of its last payment); false if it was not pending. */
export async function fundPendingSession(
  trx: Transaction<Database>,
  sessionId: string,
  now: number,
): Promise<boolean> {
  assertTransition('pending', 'funded');
  const result = await trx
    .updateTable('sessions')
    .set({ status: 'funded', funded_at: now, updated_at: now })
    .where('id', '=', sessionId)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Writes when the settling worker should next look at the session (null: it owes nothing), and settled_at. */
export async function scheduleSettling(
  trx: Transaction<Database>,
  sessionId: string,
  settleAfter: number | null,
  settledAt?: number,
): Promise<void> {
  await scheduleQuery(settledAt === undefined ? 'due' : 'settled').execute(trx, {
    sessionId,
    settleAfter,
    settledAt,
  });
}

const scheduleQuery = preparedBy(
  (
    db,
    p: { sessionId: string; settleAfter: number | null; settledAt: number | undefined },
    which: 'due' | 'settled',
  ) =>
    db
      .updateTable('sessions')
      .set({ settle_after: p.settleAfter, ...(which === 'settled' ? { settled_at: p.settledAt } : {}) })
      .where('id', '=', p.sessionId),
);

/** Sessions whose settling is due, soonest first. */
export async function listSessionsToSettle(db: Executor, now: number, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('sessions')
    .select('id')
    .where('settle_after', '<=', now)
    .orderBy('settle_after', 'asc')
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

/** Every session id, a page at a time in id order (reconcile). */
export async function listSessionIdsAfter(db: Executor, afterId: string, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('sessions')
    .select('id')
    .where('id', '>', afterId)
    .orderBy('id', 'asc')
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}
