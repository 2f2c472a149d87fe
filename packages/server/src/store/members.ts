// Members of a session's group: one row each, the organizer first (position 0). Share ids are the
// payers' credentials (the /s/{shareId} link), so lookups by share id need no merchant.
import { type Selectable, sql, type Transaction } from 'kysely';
import { assertMemberTransition, type MemberStatus } from '../domain/session-state.ts';
import type { GroupCounts } from '../domain/settling.ts';
import { fieldsOf, prepared, preparedBy } from './prepared.ts';
import type { Database, Executor, MembersTable } from './schema.ts';

interface ItemShare {
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
  /** The payment attempt in flight for this share: while set, the share cannot change. */
  payingAttemptId: string | null;
  /** Why the last payment or capture of this share failed, for the payer's page; null otherwise. */
  failure: string | null;
  createdAt: number;
  updatedAt: number;
}

function toMember(row: Selectable<MembersTable>): Member {
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
    payingAttemptId: row.paying_attempt_id,
    failure: row.failure,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function memberRow(m: Member): Selectable<MembersTable> {
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
    paying_attempt_id: m.payingAttemptId,
    failure: m.failure,
    created_at: m.createdAt,
    updated_at: m.updatedAt,
  };
}

const byPosition = prepared((db, p: { sessionId: string }) =>
  db.selectFrom('members').selectAll().where('session_id', '=', p.sessionId).orderBy('position', 'asc'),
);

export async function listMembers(db: Executor, sessionId: string): Promise<Member[]> {
  return (await byPosition.all(db, { sessionId })).map(toMember);
}

/** A group's sums for the settling rules (domain/settling.ts countGroup), and the amount paid so far. */
export interface GroupSums extends GroupCounts {
  /** Shares paid or authorized, in minor units (domain/members.ts paidAmountOf). */
  paidCents: number;
  /** Members in the group. */
  size: number;
}

/**
 * The sums of the session's group the record step reads under the session's lock, in one statement
 * instead of every member: each is what domain/settling.ts countGroup and paidAmountOf count, written
 * in SQL (a store test holds the two together).
 */
export async function sumGroup(db: Executor, sessionId: string): Promise<GroupSums> {
  const row = await sumQuery.first(db, { sessionId });
  return {
    size: Number(row?.size ?? 0),
    paidCents: Number(row?.paid_cents ?? 0),
    paid: Number(row?.paid ?? 0),
    authorized: Number(row?.authorized ?? 0),
    unpaid: Number(row?.unpaid ?? 0),
    unready: Number(row?.unready ?? 0),
  };
}

const sumQuery = prepared((db, p: { sessionId: string }) =>
  db
    .selectFrom('members')
    .select([
      sql<number>`count(*)`.as('size'),
      sql<number>`coalesce(sum(case when status in ('paid', 'authorized') then amount_cents else 0 end), 0)`.as(
        'paid_cents',
      ),
      sql<number>`coalesce(sum(case when status = 'paid' then 1 else 0 end), 0)`.as('paid'),
      sql<number>`coalesce(sum(case when status = 'authorized' then 1 else 0 end), 0)`.as('authorized'),
      sql<number>`coalesce(sum(case when amount_cents > 0 and (status <> 'paid' or paying_attempt_id is not null) then 1 else 0 end), 0)`.as(
        'unpaid',
      ),
      sql<number>`coalesce(sum(case when amount_cents > 0 and (status not in ('paid', 'authorized') or paying_attempt_id is not null) then 1 else 0 end), 0)`.as(
        'unready',
      ),
    ])
    .where('session_id', '=', p.sessionId),
);

const byShareId = prepared((db, p: { shareId: string }) =>
  db.selectFrom('members').selectAll().where('share_id', '=', p.shareId),
);

export async function findMemberByShareId(db: Executor, shareId: string): Promise<Member | undefined> {
  const row = await byShareId.first(db, { shareId });
  return row && toMember(row);
}

export async function insertMembers(trx: Transaction<Database>, members: Member[]): Promise<void> {
  if (members.length > 0) await insertQuery(members.length).execute(trx, { rows: members.map(memberRow) });
}

/** A group's members in one insert, shaped by how many there are. */
const insertQuery = preparedBy((db, p: { rows: Selectable<MembersTable>[] }, count: number) => {
  // Every column memberRow writes (its keys, whatever the values).
  const columns = Object.keys(memberRow({} as Member)) as (keyof MembersTable & string)[];
  return db
    .insertInto('members')
    .values(
      Array.from({ length: count }, (_, i) =>
        Object.fromEntries(columns.map((c) => [c, fieldsOf<MembersTable>(p, `rows.${i}`)(c)])),
      ) as never,
    );
});

/** Deletes members that are still pending; answers how many were deleted. */
export async function deletePendingMembers(trx: Transaction<Database>, memberIds: string[]): Promise<number> {
  if (memberIds.length === 0) return 0;
  const result = await trx
    .deleteFrom('members')
    .where('id', 'in', memberIds)
    .where('status', '=', 'pending')
    .where('paying_attempt_id', 'is', null)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Writes a pending member's place, name, email and share; false when the member is no longer pending or is paying. */
export async function updatePendingMember(
  trx: Transaction<Database>,
  m: Member,
  now: number,
): Promise<boolean> {
  const { position, name, email, amount_cents, basis_points, items } = memberRow(m);
  const result = await trx
    .updateTable('members')
    .set({ position, name, email, amount_cents, basis_points, items, updated_at: now })
    .where('id', '=', m.id)
    .where('status', '=', 'pending')
    .where('paying_attempt_id', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

const byId = prepared((db, p: { memberId: string }) =>
  db.selectFrom('members').selectAll().where('id', '=', p.memberId),
);

export async function findMemberById(db: Executor, memberId: string): Promise<Member | undefined> {
  const row = await byId.first(db, { memberId });
  return row && toMember(row);
}

const startPayingQuery = prepared(
  (db, p: { sessionId: string; memberId: string; attemptId: string; now: number }) =>
    db
      .updateTable('members')
      .set({ paying_attempt_id: p.attemptId, updated_at: p.now })
      .where('session_id', '=', p.sessionId)
      .where('id', '=', p.memberId)
      .where('status', '=', 'pending')
      .where('paying_attempt_id', 'is', null),
);

/**
 * Marks a pending member of the session as paying with `attemptId`; false when it is not pending or
 * already paying. Writes that change a session's members name it, so that a read cache keeps other
 * sessions (read-cache.ts).
 */
export async function startPaying(
  trx: Transaction<Database>,
  sessionId: string,
  memberId: string,
  attemptId: string,
  now: number,
): Promise<boolean> {
  return (await startPayingQuery.affected(trx, { sessionId, memberId, attemptId, now })) === 1;
}

/**
 * A paying member's bank asks them to authenticate the payment (3-D Secure): the member becomes
 * authenticating, still paying with `attemptId`; false when it is not pending and paying with it.
 */
export async function startAuthenticating(
  trx: Transaction<Database>,
  memberId: string,
  attemptId: string,
  now: number,
): Promise<boolean> {
  assertMemberTransition('pending', 'authenticating');
  const result = await trx
    .updateTable('members')
    .set({ status: 'authenticating', failure: null, updated_at: now })
    .where('id', '=', memberId)
    .where('status', '=', 'pending')
    .where('paying_attempt_id', '=', attemptId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Moves a member's status from `from` to `to`, ending the payment attempt in flight if `attemptId` is
 * it, and writes `failure` (null clears it); answers the member as moved, undefined when it was not in
 * `from`.
 */
export async function moveMember(
  trx: Transaction<Database>,
  sessionId: string,
  memberId: string,
  from: MemberStatus,
  to: MemberStatus,
  options: { attemptId?: string; failure?: string | null; now: number },
): Promise<Member | undefined> {
  assertMemberTransition(from, to);
  const { attemptId, failure, now } = options;
  const shape = `${failure === undefined ? '' : 'failure'}/${attemptId === undefined ? '' : 'attempt'}`;
  const values = { sessionId, memberId, from, to, failure, attemptId, now };
  const moved = await moveQuery(shape).first(trx, values);
  return moved && toMember(moved);
}

/** A member's move, shaped by whether it writes `failure` and ends the payment `attemptId`. */
const moveQuery = preparedBy(
  (
    db,
    p: {
      sessionId: string;
      memberId: string;
      from: MemberStatus;
      to: MemberStatus;
      failure: string | null | undefined;
      attemptId: string | undefined;
      now: number;
    },
    shape: string,
  ) => {
    const [failure, attempt] = shape.split('/');
    let query = db
      .updateTable('members')
      .set({
        status: p.to,
        updated_at: p.now,
        ...(failure ? { failure: p.failure } : {}),
        ...(attempt ? { paying_attempt_id: null } : {}),
      })
      .where('session_id', '=', p.sessionId)
      .where('id', '=', p.memberId)
      .where('status', '=', p.from);
    if (attempt) query = query.where('paying_attempt_id', '=', p.attemptId as string);
    return query.returningAll();
  },
);

/** Ends a payment attempt that moved no money: the member stays pending, with why it failed. */
export async function stopPaying(
  trx: Transaction<Database>,
  sessionId: string,
  memberId: string,
  attemptId: string,
  failure: string | null,
  now: number,
): Promise<boolean> {
  const result = await trx
    .updateTable('members')
    .set({ paying_attempt_id: null, failure, updated_at: now })
    .where('session_id', '=', sessionId)
    .where('id', '=', memberId)
    .where('paying_attempt_id', '=', attemptId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
