// Mail that follows from a fact (docs/decisions.md#mail): one row per fact, claimed under a lease to be
// sent, and its outcome. `fact` is unique, so a fact recorded twice (two processes fanning out one event,
// a decline recorded again) is still one mail.
import { type Selectable, sql } from 'kysely';
import type { Executor, MailsTable } from './schema.ts';

export type MailKind =
  | 'receipt'
  | 'refund'
  | 'release'
  | 'organizer_funded'
  | 'organizer_share_failed'
  | 'organizer_share_declined';

export interface Mail {
  id: string;
  fact: string;
  kind: MailKind;
  merchantId: string;
  sessionId: string;
  memberId: string | null;
  eventId: string | null;
  attemptId: string | null;
  address: string;
  state: MailsTable['state'];
  attempts: number;
  nextAttemptAt: number;
  createdAt: number;
}

/** A mail to queue: pending from `nextAttemptAt`. */
export type NewMail = Omit<Mail, 'state' | 'attempts'>;

const toMail = (row: Selectable<MailsTable>): Mail => ({
  id: row.id,
  fact: row.fact,
  kind: row.kind as MailKind,
  merchantId: row.merchant_id,
  sessionId: row.session_id,
  memberId: row.member_id,
  eventId: row.event_id,
  attemptId: row.attempt_id,
  address: row.address,
  state: row.state,
  attempts: Number(row.attempts),
  nextAttemptAt: Number(row.next_attempt_at),
  createdAt: Number(row.created_at),
});

/** Queues the mails; one whose fact was queued before is left as it is. */
export async function insertMails(db: Executor, mails: readonly NewMail[]): Promise<void> {
  if (mails.length === 0) return;
  await db
    .insertInto('mails')
    .values(
      mails.map((m) => ({
        id: m.id,
        fact: m.fact,
        kind: m.kind,
        merchant_id: m.merchantId,
        session_id: m.sessionId,
        member_id: m.memberId,
        event_id: m.eventId,
        attempt_id: m.attemptId,
        address: m.address,
        state: 'pending' as const,
        attempts: 0,
        next_attempt_at: m.nextAttemptAt,
        holder: null,
        held_until: null,
        last_error: null,
        created_at: m.createdAt,
        sent_at: null,
      })),
    )
    .onConflict((oc) => oc.column('fact').doNothing())
    .execute();
}

/** An event as the mail fan-out reads it. */
export interface EventForMail {
  id: string;
  type: string;
  sessionId: string;
  payload: string;
}

/** The events (of those ids) that belong to a session, with their payloads. */
export async function findEventsForMail(db: Executor, eventIds: readonly string[]): Promise<EventForMail[]> {
  if (eventIds.length === 0) return [];
  const rows = await db
    .selectFrom('events')
    .select(['id', 'type', 'session_id', 'payload'])
    .where('id', 'in', eventIds)
    .where('session_id', 'is not', null)
    .execute();
  return rows.map((r) => ({ id: r.id, type: r.type, sessionId: r.session_id as string, payload: r.payload }));
}

/** Whom a session's mail may reach: the organizer's address and the members' read. */
export interface SessionAddresses {
  merchantId: string;
  /** customer.email as POST /sessions gave it. */
  customerEmail: string | null;
  members: Map<string, { email: string | null; isOrganizer: boolean; status: string }>;
}

/**
 * The sessions' addresses, with their organizers and `members` (the ids of the members mail is for, or
 * `all` of each session's members: a closing session tells every member whose hold it let go).
 */
export async function findSessionAddresses(
  db: Executor,
  sessionIds: readonly string[],
  members: readonly string[] | 'all',
): Promise<Map<string, SessionAddresses>> {
  const found = new Map<string, SessionAddresses>();
  if (sessionIds.length === 0) return found;
  const sessions = await db
    .selectFrom('sessions')
    .select(['id', 'merchant_id', 'customer'])
    .where('id', 'in', sessionIds)
    .execute();
  for (const s of sessions) {
    const customer = s.customer === null ? null : (JSON.parse(s.customer) as { email?: string });
    found.set(s.id, {
      merchantId: s.merchant_id,
      customerEmail: customer?.email ?? null,
      members: new Map(),
    });
  }
  let query = db
    .selectFrom('members')
    .select(['id', 'session_id', 'email', 'is_organizer', 'status'])
    .where('session_id', 'in', sessionIds);
  if (members !== 'all')
    query =
      members.length === 0
        ? query.where('is_organizer', '=', 1)
        : query.where((eb) => eb.or([eb('is_organizer', '=', 1), eb('id', 'in', members)]));
  for (const m of await query.execute())
    found
      .get(m.session_id)
      ?.members.set(m.id, { email: m.email, isOrganizer: m.is_organizer === 1, status: m.status });
  return found;
}

export interface Lease {
  now: number;
  holder: string;
  until: number;
  limit: number;
}

/**
 * Takes the lease of pending mails that are due and not held (or whose holder's lease ran out: a process
 * that died sending them), oldest first; answers them. On PostgreSQL rows another process is taking are
 * skipped; SQLite has one writer at a time.
 */
export async function takeDueMails(
  db: Executor,
  dialect: 'sqlite' | 'postgres',
  lease: Lease,
): Promise<Mail[]> {
  const { now, holder, until, limit } = lease;
  const free = sql`state = 'pending' and next_attempt_at <= ${now} and (held_until is null or held_until <= ${now})`;
  const lock = dialect === 'postgres' ? sql`for update skip locked` : sql``;
  const { rows } = await sql<Selectable<MailsTable>>`
    update mails set holder = ${holder}, held_until = ${until}
    where id in (select id from mails where ${free} order by next_attempt_at limit ${limit} ${lock})
      and ${free}
    returning *`.execute(db);
  return rows.map(toMail).sort((a, b) => a.nextAttemptAt - b.nextAttemptAt);
}

/** How a held mail ended: sent, refused for good, no longer true, or to be tried again at `retryAt`. */
export type MailEnd =
  | { state: 'sent'; at: number }
  | { state: 'failed' | 'skipped'; error: string | null }
  | { state: 'pending'; retryAt: number; error: string };

/** Writes how a mail held by `holder` ended; false when the lease was no longer `holder`'s. */
export async function endMail(db: Executor, id: string, holder: string, end: MailEnd): Promise<boolean> {
  const set =
    end.state === 'sent'
      ? { state: end.state, sent_at: end.at, last_error: null }
      : end.state === 'pending'
        ? { state: end.state, next_attempt_at: end.retryAt, last_error: end.error }
        : { state: end.state, last_error: end.error };
  const result = await db
    .updateTable('mails')
    .set((eb) => ({ holder: null, held_until: null, attempts: eb('attempts', '+', 1), ...set }))
    .where('id', '=', id)
    .where('holder', '=', holder)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * A session's mails, oldest first: what was sent, and what was not.
 * @internal Exported for its tests.
 */
export async function listSessionMails(db: Executor, sessionId: string): Promise<Mail[]> {
  const rows = await db
    .selectFrom('mails')
    .selectAll()
    .where('session_id', '=', sessionId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(toMail);
}
