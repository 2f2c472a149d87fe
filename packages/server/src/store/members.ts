// Members of a session's group: one row each, the organizer first (position 0). Share ids are the
// payers' credentials (the /s/{shareId} link), so lookups by share id need no merchant.
import type { Selectable, Transaction } from 'kysely';
import { assertMemberTransition, type MemberStatus } from '../domain/session-state.ts';
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

export async function insertMembers(trx: Transaction<Database>, members: Member[]): Promise<void> {
  if (members.length > 0) await trx.insertInto('members').values(members.map(memberRow)).execute();
}

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

export async function findMemberById(db: Executor, memberId: string): Promise<Member | undefined> {
  const row = await db.selectFrom('members').selectAll().where('id', '=', memberId).executeTakeFirst();
  return row && toMember(row);
}

/** Marks a pending member as paying with `attemptId`; false when it is not pending or already paying. */
export async function startPaying(
  trx: Transaction<Database>,
  memberId: string,
  attemptId: string,
  now: number,
): Promise<boolean> {
  const result = await trx
    .updateTable('members')
    .set({ paying_attempt_id: attemptId, updated_at: now })
    .where('id', '=', memberId)
    .where('status', '=', 'pending')
    .where('paying_attempt_id', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
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
 * it, and writes `failure` (null clears it); false when the member was not in `from`.
 */
export async function moveMember(
  trx: Transaction<Database>,
  memberId: string,
  from: MemberStatus,
  to: MemberStatus,
  options: { attemptId?: string; failure?: string | null; now: number },
): Promise<boolean> {
  assertMemberTransition(from, to);
  let query = trx
    .updateTable('members')
    .set({
      status: to,
      updated_at: options.now,
      ...(options.failure === undefined ? {} : { failure: options.failure }),
      ...(options.attemptId === undefined ? {} : { paying_attempt_id: null }),
    })
    .where('id', '=', memberId)
    .where('status', '=', from);
  if (options.attemptId !== undefined) query = query.where('paying_attempt_id', '=', options.attemptId);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Ends a payment attempt that moved no money: the member stays pending, with why it failed. */
export async function stopPaying(
  trx: Transaction<Database>,
  memberId: string,
  attemptId: string,
  failure: string | null,
  now: number,
): Promise<boolean> {
  const result = await trx
    .updateTable('members')
    .set({ paying_attempt_id: null, failure, updated_at: now })
    .where('id', '=', memberId)
    .where('paying_attempt_id', '=', attemptId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
