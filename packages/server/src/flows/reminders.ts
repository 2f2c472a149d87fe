// Reminder mail to members whose shares are still pending (docs/api.md#reminders): at most once an hour each,
// and only when the organizer gave an email. The hour is claimed in the database before the mail goes
// out, so concurrent calls (or processes) never send one member two reminders within the hour.
import { toIso } from '../clock.ts';
import type { Deps } from '../deps.ts';
import { formatMinorUnits } from '../domain/currencies.ts';
import { consumerFee } from '../domain/fees.ts';
import { ServiceError } from '../errors.ts';
import { claimReminder, listMembers, type Member, releaseReminder } from '../store/members.ts';
import { findMerchantById, type Merchant } from '../store/merchants.ts';
import { findSessionById, type Session } from '../store/sessions.ts';
import { payLinks } from '../wire/mappers.ts';
import { assertOpen } from './sessions.ts';

const REMINDER_INTERVAL_MS = 60 * 60 * 1000;

export interface ReminderResult {
  reminded: number;
  skipped: number;
  /** Members whose mail the mail server refused; they may be reminded again at once. */
  failed: number;
}

/**
 * Mails every pending member of the merchant's session who has an email and was not reminded within
 * the hour. Each member's hour is claimed in one short write, the mail is sent with no transaction
 * open, and a failed mail gives the claim back (docs/decisions.md#claim-call-record).
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
  for (const member of pending) {
    const now = deps.clock.now();
    if (!member.email || !(await claimReminder(deps.db.kysely, member.id, now, now - REMINDER_INTERVAL_MS))) {
      result.skipped++;
      continue;
    }
    try {
      await deps.mailer.send(reminderMail(deps, merchant, session, member));
      result.reminded++;
    } catch (error) {
      deps.logger.warn({ err: (error as Error).message, member_id: member.id }, 'reminder mail failed');
      await releaseReminder(deps.db.kysely, member.id, member.lastRemindedAt);
      result.failed++;
    }
  }
  return result;
}

function reminderMail(deps: Deps, merchant: Merchant, session: Session, member: Member) {
  const currency = session.currency.toUpperCase();
  const amount = `${formatMinorUnits(member.amountCents, session.currency)} ${currency}`;
  const fee = consumerFee(member.amountCents, session.consumerFeePpm, session.chargeStep);
  const feeText =
    fee > 0 ? ` (plus a ${formatMinorUnits(fee, session.currency)} ${currency} service fee)` : '';
  const organizer = session.customer?.name ?? 'Your organizer';
  const link = payLinks(deps.config.publicPayUrl).share(member.shareId);
  const expires = toIso(session.expiresAt);
  const order = session.orderRef ? ` (order ${session.orderRef})` : '';
  return {
    to: member.email as string,
    // Members may answer the organizer; the organizer's own reminder has no one else to reply to.
    ...(session.customer?.email && !member.isOrganizer ? { replyTo: session.customer.email } : {}),
    subject: `Reminder: your ${amount} share for ${merchant.name}`,
    text: [
      `Hi ${member.name},`,
      '',
      member.isOrganizer
        ? `You are buying from ${merchant.name}${order} as a group, and your own share is still open.`
        : `${organizer} is buying from ${merchant.name}${order} as a group, and your share is still open.`,
      '',
      `Your share: ${amount}${feeText}`,
      `Pay it here: ${link}`,
      '',
      `The group expires at ${expires}. If it is not fully paid by then, every payment is refunded.`,
      '',
      '— Group Checkout',
    ].join('\n'),
  };
}
