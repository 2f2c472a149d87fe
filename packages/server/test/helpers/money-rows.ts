// What the database holds about one member's money, read straight from the tables (not through the
// API under test): their attempts, the sandbox processor's objects made for them, the events naming
// them, and their ledger lines. The payment suites assert "charged once" against these.
import assert from 'node:assert/strict';
import type { Kysely } from 'kysely';
import type { Database } from '../../src/store/schema.ts';
import type { Share } from './payments.ts';

export interface MemberMoney {
  status: string | undefined;
  payingAttemptId: string | null | undefined;
  attempts: { id: string; kind: string; state: string; processorId: string | null; amountCents: number }[];
  /**
   * Sandbox records sent for this member (their idempotency keys name the member), with the object
   * they made: `id` is null for a refused or failed call, `ch_…` for a charge, `re_…` for a refund.
   */
  sandbox: { key: string; kind: string; id: string | null; state: string; amountCents: number }[];
  /** Types of the session's events whose payload names this member, oldest first. */
  events: string[];
  /** The member's ledger lines, one ledger entry id set per kind. */
  ledger: { kind: string; account: string; amountCents: number; entryId: string; attemptId: string | null }[];
}

export async function memberMoney(
  db: Kysely<Database>,
  sessionId: string,
  memberId: string,
): Promise<MemberMoney> {
  const member = await db
    .selectFrom('members')
    .select(['status', 'paying_attempt_id'])
    .where('id', '=', memberId)
    .executeTakeFirst();
  const attempts = await db
    .selectFrom('attempts')
    .select(['id', 'kind', 'state', 'processor_id', 'amount_cents'])
    .where('member_id', '=', memberId)
    .orderBy('created_at')
    .execute();
  const sandbox = (
    await db
      .selectFrom('sandbox_operations')
      .select(['idempotency_key', 'kind', 'id', 'state', 'amount_cents'])
      .orderBy('created_at')
      .execute()
  ).filter((r) => r.idempotency_key.includes(memberId));
  const events = await db
    .selectFrom('events')
    .select(['type', 'payload'])
    .where('session_id', '=', sessionId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  const ledger = await db
    .selectFrom('ledger_lines')
    .select(['kind', 'account', 'amount_cents', 'entry_id', 'attempt_id'])
    .where('member_id', '=', memberId)
    .orderBy('created_at')
    .execute();
  return {
    status: member?.status,
    payingAttemptId: member?.paying_attempt_id,
    attempts: attempts.map((a) => ({
      id: a.id,
      kind: a.kind,
      state: a.state,
      processorId: a.processor_id,
      amountCents: Number(a.amount_cents),
    })),
    sandbox: sandbox.map((r) => ({
      key: r.idempotency_key,
      kind: r.kind,
      id: r.id,
      state: r.state,
      amountCents: Number(r.amount_cents),
    })),
    events: events.filter((e) => JSON.parse(e.payload).data?.member?.id === memberId).map((e) => e.type),
    ledger: ledger.map((l) => ({
      kind: l.kind,
      account: l.account,
      amountCents: Number(l.amount_cents),
      entryId: l.entry_id,
      attemptId: l.attempt_id,
    })),
  };
}

/** The ledger entries (ids) of `kind` among `lines`. */
export const entriesOf = (lines: MemberMoney['ledger'], kind: string): string[] => [
  ...new Set(lines.filter((l) => l.kind === kind).map((l) => l.entryId)),
];

/** Objects the sandbox made of `kind` (a charge that went through, a refund that did), not refusals. */
export const madeOf = (records: MemberMoney['sandbox'], kind: string) =>
  records.filter((r) => r.kind === kind && r.id !== null);

/** The session's events, oldest first, by type. */
export async function sessionEventTypes(db: Kysely<Database>, sessionId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('events')
    .select('type')
    .where('session_id', '=', sessionId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map((r) => r.type);
}

/** Transfer attempts of the session and the sandbox transfer objects sent for it. */
export async function sessionTransfers(db: Kysely<Database>, sessionId: string) {
  const attempts = await db
    .selectFrom('attempts')
    .select(['id', 'state', 'processor_id'])
    .where('session_id', '=', sessionId)
    .where('kind', '=', 'transfer')
    .execute();
  const sandbox = (
    await db.selectFrom('sandbox_operations').select(['idempotency_key', 'kind', 'id']).execute()
  ).filter((r) => r.kind === 'transfer' && r.idempotency_key.includes(sessionId) && r.id !== null);
  return { attempts, sandbox };
}

/** The member was charged exactly once, for share + fee, and everything the payment causes is there once. */
export async function assertChargedOnce(
  db: Kysely<Database>,
  sessionId: string,
  share: Pick<Share, 'id' | 'due'>,
) {
  const money = await memberMoney(db, sessionId, share.id);
  assert.equal(money.status, 'paid');
  assert.equal(money.payingAttemptId, null, 'no payment left in flight');
  assert.deepEqual(
    money.attempts.map((a) => a.state),
    ['succeeded'],
    'one attempt, succeeded (none started, none lost)',
  );
  const attempt = money.attempts[0];
  const charges = madeOf(money.sandbox, 'charge');
  assert.equal(charges.length, 1, `one charge at the processor: ${JSON.stringify(money.sandbox)}`);
  assert.equal(charges[0]?.id, attempt?.processorId, 'the attempt records that charge');
  assert.equal(charges[0]?.amountCents, share.due, 'share + consumer fee');
  assert.deepEqual(money.events, ['group.share_paid'], 'one share_paid event for the member');
  const entries = entriesOf(money.ledger, 'charge');
  assert.equal(entries.length, 1, 'one ledger entry for the charge');
  assert.ok(money.ledger.filter((l) => l.kind === 'charge').every((l) => l.attemptId === attempt?.id));
  const fromCard = money.ledger
    .filter((l) => l.account === 'payer_cards')
    .reduce((sum, l) => sum + l.amountCents, 0);
  assert.equal(fromCard, -share.due, 'the card gave share + fee once');
  return attempt;
}
