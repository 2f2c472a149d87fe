// Reminder mail to members whose shares are still pending (docs/api.md#reminders), only when the organizer
// gave an email. Reminders must never become a way to mail anyone, so every limit is keyed by the
// recipient's address, never by a member (re-saving a group makes new members, not new addresses): one
// session reminds an address at most once an hour and sends at most 3 rounds; one merchant reminds an
// address at most 3 times a day, whatever the session. Each mail is claimed in the database before it goes
// out, under the merchant's row lock, so concurrent calls (or processes) never pass a limit together.
import type { Deps } from '../deps.ts';
import { ServiceError } from '../errors.ts';
import { listMembers, type Member } from '../store/members.ts';
import { findMerchantById, lockMerchantRow, type Merchant } from '../store/merchants.ts';
import {
  countMailsToAddress,
  countReminderRounds,
  deleteReminderMail,
  deleteReminderRound,
  insertReminderMail,
  insertReminderRound,
  sessionMailedAddressSince,
} from '../store/reminders.ts';
import { findSessionById, type Session } from '../store/sessions.ts';
import { payLinks } from '../wire/mappers.ts';
import { reminderMail } from './mail-compose.ts';
import { assertOpen } from './sessions.ts';

const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;
/** Rounds of reminders one session may send (a round: a call that sent at least one mail). */
const MAX_REMINDER_ROUNDS = 3;
/** Reminders one merchant may send one address in 24 hours, whatever the session. */
const MAX_REMINDERS_PER_ADDRESS_PER_DAY = 3;

export interface ReminderResult {
  reminded: number;
  skipped: number;
  /** Members whose mail the mail server refused; they may be reminded again at once. */
  failed: number;
}

/** What the limits are keyed by: the address as mail servers compare it in practice, case aside. */
const addressKey = (email: string) => email.trim().toLowerCase();

/**
 * Mails every pending member of the merchant's session who has an email, within the limits above; a
 * member sharing an address with another is mailed once. The mails are claimed in one short transaction,
 * sent with no transaction open, and a refused mail gives its claim back (docs/decisions.md#claim-call-record).
 * A session that has sent its rounds is reminder_limit_reached.
 */
export async function remindPendingMembers(
  deps: Deps,
  merchantId: string,
  sessionId: string,
): Promise<{ session: Session } & ReminderResult> {
  const session = await findSessionById(deps.db.kysely, merchantId, sessionId);
  const merchant = session && (await findMerchantById(deps.db.kysely, deps.db.secrets, merchantId));
  if (!session || !merchant) throw new ServiceError('session_not_found');
  assertOpen(session, deps.clock.now());
  const pending = (await listMembers(deps.db.kysely, session.id)).filter((m) => m.status === 'pending');
  const result = { session, reminded: 0, skipped: 0, failed: 0 };
  if (!session.customer?.email) {
    result.skipped = pending.length;
    return result;
  }
  const now = deps.clock.now();
  const { claims, round } = await deps.db.kysely.transaction().execute(async (trx) => {
    // The daily limit spans the merchant's sessions: its claims are made one transaction at a time.
    if (deps.db.dialect === 'postgres') await lockMerchantRow(trx, merchantId);
    const rounds = await countReminderRounds(trx, session.id);
    if (rounds >= MAX_REMINDER_ROUNDS) throw new ServiceError('reminder_limit_reached');
    const claimed: { member: Member; claimId: string }[] = [];
    const seen = new Set<string>();
    for (const member of pending) {
      // A share of 0 owes nothing (docs/decisions.md): no reminder to pay it, none of the limits spent.
      if (member.amountCents === 0) continue;
      const address = member.email ? addressKey(member.email) : '';
      if (!address || seen.has(address)) continue;
      seen.add(address);
      if (await sessionMailedAddressSince(trx, session.id, address, now - HOUR_MS)) continue;
      const today = await countMailsToAddress(trx, merchantId, address, now - DAY_MS);
      if (today >= MAX_REMINDERS_PER_ADDRESS_PER_DAY) continue;
      const claimId = await insertReminderMail(trx, {
        merchantId,
        sessionId: session.id,
        address,
        sentAt: now,
      });
      claimed.push({ member, claimId });
    }
    if (claimed.length > 0)
      await insertReminderRound(trx, { sessionId: session.id, merchantId, round: rounds + 1, sentAt: now });
    return { claims: claimed, round: rounds + 1 };
  });
  result.skipped = pending.length - claims.length;
  for (const { member, claimId } of claims) {
    try {
      await deps.mailer.send(reminderMessage(deps, merchant, session, member));
      result.reminded++;
    } catch (error) {
      deps.logger.warn({ err: (error as Error).message, member_id: member.id }, 'reminder mail failed');
      await deleteReminderMail(deps.db.kysely, claimId);
      result.failed++;
    }
  }
  // A round in which no mail went out is not one: the organizer may try again.
  if (claims.length > 0 && result.reminded === 0)
    await deleteReminderRound(deps.db.kysely, session.id, round);
  return result;
}

/** A reminder in the session's mail language, as text and HTML (flows/mail-compose.ts). */
function reminderMessage(deps: Deps, merchant: Merchant, session: Session, member: Member) {
  const link = payLinks(deps.config.publicPayUrl).share(member.shareId);
  return {
    to: member.email as string,
    // No Reply-To: the organizer's address was typed in a browser and never verified, and a reply-to of
    // someone else's choosing would make our mail theirs (docs/decisions.md#reminder-limits).
    ...reminderMail(session, merchant.name, member, link),
  };
}
