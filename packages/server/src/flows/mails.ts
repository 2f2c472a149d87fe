// Mail that follows from a fact (docs/decisions.md#mail). A payer who gave an address gets a receipt when
// their share is paid or held, and a mail when the money goes back (refunded, or the hold released); the
// organizer hears when the group is funded and when a share fails. Mails are queued in the transaction
// that handles their fact — the events' fan-out (one transaction takes each event once) or the record of
// a declined payment — with a key per fact, so a fact is mailed once however many processes run. A sender
// then takes due mails under a lease, sends them with no transaction open, and writes the outcome; a
// process that dies mid-send leaves its lease to run out and another sends the mail, with the same
// Message-ID.
import { randomUUID } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { Deps } from '../deps.ts';
import type { EventType } from '../domain/event-types.ts';
import { ids } from '../ids.ts';
import { type Attempt, listSessionAttempts } from '../store/attempts.ts';
import {
  endMail,
  findEventsForMail,
  findSessionAddresses,
  insertMails,
  type Mail,
  type MailKind,
  type NewMail,
  takeDueMails,
} from '../store/mails.ts';
import { listMembers, type Member } from '../store/members.ts';
import { findMerchantById } from '../store/merchants.ts';
import type { Database } from '../store/schema.ts';
import { findSessionByIdUnscoped, type Session } from '../store/sessions.ts';
import { payLinks } from '../wire/mappers.ts';
import {
  type ComposedMail,
  fundedMail,
  type MailFacts,
  receiptMail,
  refundMail,
  releaseMail,
  shareFailedMail,
} from './mail-compose.ts';

const MINUTE_MS = 60 * 1000;
/**
 * When a mail the mail server did not take is tried again, after each failure; after the last it is
 * failed. An SMTP 5xx (no such mailbox) fails it at once.
 */
const RETRY_AFTER_MS = [1, 5, 30, 120, 360].map((m) => m * MINUTE_MS);
/**
 * A sender holds the mails it took this long: enough for a batch at the mail server's longest timeouts
 * (mail/mailer.ts: 10 s to connect, 10 s for the greeting, 20 s per reply).
 */
const LEASE_MS = 5 * MINUTE_MS;
/** Mails one sender takes at a time. */
const BATCH = 5;
/**
 * The organizer hears of a declined card only if the share is still open this long after: a payer whose
 * card is declined usually tries another at once, and then there is nothing to tell.
 * @internal Exported for its tests.
 */
export const DECLINE_MAIL_DELAY_MS = 15 * MINUTE_MS;

/** The events that mail someone. */
const MAILING_EVENTS: ReadonlySet<string> = new Set<EventType>([
  'group.share_paid',
  'group.share_refunded',
  'group.share_failed',
  'group.funded',
  'group.cancelled',
  'group.expired',
]);

const addressOf = (email: string | null | undefined) => email?.trim() || null;

/**
 * Queues the mails of events being fanned out, in the fan-out's transaction (which takes each event
 * once): a receipt for group.share_paid, a refund for group.share_refunded, a released hold for each
 * released member when the session closes, the organizer's mail for group.funded and group.share_failed.
 */
export async function queueEventMails(
  trx: Transaction<Database>,
  events: readonly { id: string; type: string }[],
  now: number,
): Promise<void> {
  const mailing = events.filter((e) => MAILING_EVENTS.has(e.type)).map((e) => e.id);
  if (mailing.length === 0) return;
  const found = (await findEventsForMail(trx, mailing)).map((event) => ({
    memberId: (JSON.parse(event.payload) as { data: { member?: { id: string } } }).data.member?.id,
    ...event,
  }));
  // The organizer and the members the events name; every member when a session closes (its releases).
  const closing = found.some((e) => e.type === 'group.cancelled' || e.type === 'group.expired');
  const addresses = await findSessionAddresses(
    trx,
    [...new Set(found.map((e) => e.sessionId))],
    closing ? 'all' : found.flatMap((e) => (e.memberId === undefined ? [] : [e.memberId])),
  );
  const mails: NewMail[] = [];
  for (const event of found) {
    const session = addresses.get(event.sessionId);
    if (!session) continue;
    const { memberId } = event;
    const memberAddress = (id: string | undefined) => {
      const member = id === undefined ? undefined : session.members.get(id);
      if (!member) return null;
      // The organizer's own share: their member's address, else the one the shop gave for them.
      return addressOf(member.email) ?? (member.isOrganizer ? addressOf(session.customerEmail) : null);
    };
    const organizerAddress =
      addressOf(session.customerEmail) ??
      addressOf([...session.members.values()].find((m) => m.isOrganizer)?.email);
    const queue = (kind: MailKind, fact: string, address: string | null, forMember: string | null) => {
      if (!address) return;
      mails.push({
        id: ids.mail(),
        fact,
        kind,
        merchantId: session.merchantId,
        sessionId: event.sessionId,
        memberId: forMember,
        eventId: event.id,
        attemptId: null,
        address,
        nextAttemptAt: now,
        createdAt: now,
      });
    };
    switch (event.type) {
      case 'group.share_paid':
        queue('receipt', `receipt:${event.id}`, memberAddress(memberId), memberId ?? null);
        break;
      case 'group.share_refunded':
        queue('refund', `refund:${event.id}`, memberAddress(memberId), memberId ?? null);
        break;
      case 'group.share_failed':
        queue('organizer_share_failed', `share_failed:${event.id}`, organizerAddress, memberId ?? null);
        break;
      case 'group.funded':
        queue('organizer_funded', `funded:${event.sessionId}`, organizerAddress, null);
        break;
      default:
        // group.cancelled, group.expired: each hold let go is told so (refunds had their own events).
        for (const [id, member] of session.members)
          if (member.status === 'released') queue('release', `release:${id}`, memberAddress(id), id);
    }
  }
  await insertMails(trx, mails);
}

/**
 * Queues the organizer's mail about a member's declined card, in the transaction that records the decline:
 * due after DECLINE_MAIL_DELAY_MS, and sent only if the share is still open then. Once per member.
 */
export async function queueDeclineMail(
  trx: Transaction<Database>,
  session: Session,
  attempt: Pick<Attempt, 'id' | 'memberId'>,
  now: number,
): Promise<void> {
  const address = addressOf(session.customer?.email);
  if (!address || !attempt.memberId) return;
  await insertMails(trx, [
    {
      id: ids.mail(),
      fact: `declined:${attempt.memberId}`,
      kind: 'organizer_share_declined',
      merchantId: session.merchantId,
      sessionId: session.id,
      memberId: attempt.memberId,
      eventId: null,
      attemptId: attempt.id,
      address,
      nextAttemptAt: now + DECLINE_MAIL_DELAY_MS,
      createdAt: now,
    },
  ]);
}

/** The mail's words, or why it is no longer to be sent. */
async function compose(deps: Deps, mail: Mail): Promise<ComposedMail | { skip: string }> {
  const session = await findSessionByIdUnscoped(deps.db.kysely, mail.sessionId);
  const merchant = session && (await findMerchantById(deps.db.kysely, deps.db.secrets, session.merchantId));
  if (!session || !merchant) return { skip: 'the session is gone' };
  const members = await listMembers(deps.db.kysely, session.id);
  const facts: MailFacts = {
    session,
    merchantName: merchant.name,
    members,
    attempts: await listSessionAttempts(deps.db.kysely, session.id),
    shareUrl: payLinks(deps.config.publicPayUrl).share,
  };
  if (mail.kind === 'organizer_funded') return fundedMail(facts);
  const member: Member | undefined = members.find((m) => m.id === mail.memberId);
  if (!member) return { skip: 'the member is no longer in the group' };
  switch (mail.kind) {
    case 'receipt':
      return receiptMail(facts, member);
    case 'refund':
      return refundMail(facts, member);
    case 'release':
      return releaseMail(facts, member);
    case 'organizer_share_failed':
    case 'organizer_share_declined':
      // Paid since, or the group closed: the organizer has nothing to act on.
      if (member.status !== 'pending' || session.status !== 'pending')
        return { skip: `the share is ${member.status} and the group ${session.status}` };
      return shareFailedMail(facts, member, mail.kind === 'organizer_share_failed' ? 'capture' : 'declined');
  }
}

/**
 * Whether the mail server refused the message for good (an SMTP 5xx: no such mailbox, rejected), so that
 * sending it again cannot help; anything else (no connection, a timeout, a 4xx) may pass later.
 */
const refusedForGood = (error: unknown): boolean => {
  const code = (error as { responseCode?: unknown }).responseCode;
  return typeof code === 'number' && code >= 500 && code < 600;
};

/** The Message-ID's domain: the sender's own (MAIL_FROM). */
const messageDomain = (from: string) => /@([^>\s]+)>?\s*$/.exec(from)?.[1] ?? 'group-checkout.localhost';

/**
 * Sends the mails that are due, a batch at a time, until none is left; answers how many went out. Each
 * mail's outcome is written as soon as it is known.
 */
export async function sendDueMails(deps: Deps, signal?: AbortSignal): Promise<number> {
  let sent = 0;
  const holder = `${process.pid}.${randomUUID()}`;
  while (!signal?.aborted) {
    const now = deps.clock.now();
    const mails = await takeDueMails(deps.db.kysely, deps.db.dialect, {
      now,
      holder,
      until: now + LEASE_MS,
      limit: BATCH,
    });
    if (mails.length === 0) break;
    for (const mail of mails) {
      const end = await sendOne(deps, mail);
      if (end.state === 'sent') sent++;
      const ours = await endMail(deps.db.kysely, mail.id, holder, end);
      if (!ours) deps.logger.warn({ mail_id: mail.id }, 'a mail outlived its lease: it may be sent twice');
    }
  }
  return sent;
}

async function sendOne(deps: Deps, mail: Mail): Promise<Parameters<typeof endMail>[3]> {
  let composed: Awaited<ReturnType<typeof compose>>;
  try {
    composed = await compose(deps, mail);
  } catch (error) {
    deps.logger.error({ err: error, mail_id: mail.id }, 'a mail could not be written');
    return { state: 'failed', error: (error as Error).message };
  }
  if ('skip' in composed) return { state: 'skipped', error: composed.skip };
  try {
    await deps.mailer.send({
      to: mail.address,
      subject: composed.subject,
      text: composed.text,
      html: composed.html,
      messageId: `${mail.id}@${messageDomain(deps.config.mailFrom)}`,
    });
    deps.logger.info({ mail_id: mail.id, kind: mail.kind, session_id: mail.sessionId }, 'mail sent');
    return { state: 'sent', at: deps.clock.now() };
  } catch (error) {
    const reason = (error as Error).message;
    const retryIn = RETRY_AFTER_MS[mail.attempts];
    deps.logger.warn({ mail_id: mail.id, kind: mail.kind, err: reason }, 'mail not sent');
    if (refusedForGood(error) || retryIn === undefined) return { state: 'failed', error: reason };
    return { state: 'pending', retryAt: deps.clock.now() + retryIn, error: reason };
  }
}
