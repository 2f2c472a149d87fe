// Disputes (chargebacks) on members' payments, as the processor reported them (docs/api.md#disputes).
import type { Selectable, Transaction } from 'kysely';
import type { Database, DisputesTable, Executor } from './schema.ts';

type DisputeStatus = DisputesTable['status'];

export interface Dispute {
  id: string;
  merchantId: string;
  sessionId: string;
  memberId: string;
  attemptId: string;
  amountCents: number;
  currency: string;
  reason: string;
  status: DisputeStatus;
  createdAt: number;
  updatedAt: number;
  closedAt: number | null;
}

const toDispute = (row: Selectable<DisputesTable>): Dispute => ({
  id: row.id,
  merchantId: row.merchant_id,
  sessionId: row.session_id,
  memberId: row.member_id,
  attemptId: row.attempt_id,
  amountCents: row.amount_cents,
  currency: row.currency,
  reason: row.reason,
  status: row.status,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  closedAt: row.closed_at,
});

/** Records a new dispute; false when it was recorded before (the processor told us twice). */
export async function insertDispute(trx: Transaction<Database>, d: Dispute): Promise<boolean> {
  const inserted = await trx
    .insertInto('disputes')
    .values({
      id: d.id,
      merchant_id: d.merchantId,
      session_id: d.sessionId,
      member_id: d.memberId,
      attempt_id: d.attemptId,
      amount_cents: d.amountCents,
      currency: d.currency,
      reason: d.reason,
      status: d.status,
      created_at: d.createdAt,
      updated_at: d.updatedAt,
      closed_at: d.closedAt,
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted !== undefined;
}

export async function findDispute(db: Executor, id: string): Promise<Dispute | undefined> {
  const row = await db.selectFrom('disputes').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toDispute(row);
}

/** Closes an open dispute as won or lost; answers it closed, or undefined when it was not open. */
export async function closeDispute(
  trx: Transaction<Database>,
  id: string,
  status: 'won' | 'lost',
  now: number,
): Promise<Dispute | undefined> {
  const row = await trx
    .updateTable('disputes')
    .set({ status, closed_at: now, updated_at: now })
    .where('id', '=', id)
    .where('status', '=', 'needs_response')
    .returningAll()
    .executeTakeFirst();
  return row && toDispute(row);
}

/** The session's disputes, oldest first. */
export async function listSessionDisputes(db: Executor, sessionId: string): Promise<Dispute[]> {
  const rows = await db
    .selectFrom('disputes')
    .selectAll()
    .where('session_id', '=', sessionId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(toDispute);
}
