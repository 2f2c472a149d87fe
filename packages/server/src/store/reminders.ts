// The record of reminders sent (docs/api.md#reminders): a session's rounds, and each mail by the address it
// went to, so that limits hold by address whatever the members are called or how often the group is saved.
import { ids } from '../ids.ts';
import type { Executor } from './schema.ts';

/** How many rounds of reminders the session has sent. */
export async function countReminderRounds(db: Executor, sessionId: string): Promise<number> {
  const row = await db
    .selectFrom('reminder_rounds')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('session_id', '=', sessionId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Records the session's round `round` (1, 2, 3); a second writer of the same round fails on the key. */
export async function insertReminderRound(
  db: Executor,
  round: { sessionId: string; merchantId: string; round: number; sentAt: number },
): Promise<void> {
  await db
    .insertInto('reminder_rounds')
    .values({
      session_id: round.sessionId,
      merchant_id: round.merchantId,
      round: round.round,
      sent_at: round.sentAt,
    })
    .execute();
}

/** Takes back the session's round `round`: none of its mails went out. */
export async function deleteReminderRound(db: Executor, sessionId: string, round: number): Promise<void> {
  await db
    .deleteFrom('reminder_rounds')
    .where('session_id', '=', sessionId)
    .where('round', '=', round)
    .execute();
}

/** How many reminders the merchant sent to `address` since `since` (any session). */
export async function countMailsToAddress(
  db: Executor,
  merchantId: string,
  address: string,
  since: number,
): Promise<number> {
  const row = await db
    .selectFrom('reminder_mails')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('merchant_id', '=', merchantId)
    .where('address', '=', address)
    .where('sent_at', '>', since)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Whether the session reminded `address` since `since`. */
export async function sessionMailedAddressSince(
  db: Executor,
  sessionId: string,
  address: string,
  since: number,
): Promise<boolean> {
  const row = await db
    .selectFrom('reminder_mails')
    .select('id')
    .where('session_id', '=', sessionId)
    .where('address', '=', address)
    .where('sent_at', '>', since)
    .executeTakeFirst();
  return row !== undefined;
}

/** Claims one reminder to `address`; answers the claim's id, to give it back if the mail is refused. */
export async function insertReminderMail(
  db: Executor,
  mail: { merchantId: string; sessionId: string; address: string; sentAt: number },
): Promise<string> {
  const id = ids.reminderMail();
  await db
    .insertInto('reminder_mails')
    .values({
      id,
      merchant_id: mail.merchantId,
      session_id: mail.sessionId,
      address: mail.address,
      sent_at: mail.sentAt,
    })
    .execute();
  return id;
}

/** Gives back a claimed reminder whose mail the mail server refused: it was never sent. */
export async function deleteReminderMail(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('reminder_mails').where('id', '=', id).execute();
}
