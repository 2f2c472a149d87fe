// Session operations of several steps: check → load → decide → write, each change and its event in one
// transaction that the flow owns (docs/architecture.md). Handlers parse, call one of these and shape
// the reply.
import { type Cart, verifyCartSignature } from '@group-checkout/node';
import type { ServiceEnv } from '../config.ts';
import type { Deps } from '../deps.ts';
import { checkCart } from '../domain/cart.ts';
import { type GroupConfigInput, resolveGroupConfig } from '../domain/group-config.ts';
import { canonicalOrigins, isPublicImageUrl, parseOrigin } from '../domain/origins.ts';
import { secretsInForce } from '../domain/rotation.ts';
import { refundsOf } from '../domain/settling.ts';
import { diagnoseCartSignature } from '../domain/signature-check.ts';
import { ServiceError } from '../errors.ts';
import { recordEvent } from '../events/outbox.ts';
import { CATALOGUES } from '../i18n/catalogues.ts';
import { chooseLocale, type LocaleSetting } from '../i18n/locales.ts';
import { translator } from '../i18n/translate.ts';
import { ids, sha256 } from '../ids.ts';
import { isUniqueViolation } from '../store/db.ts';
import { insertMembers, type Member } from '../store/members.ts';
import { type Merchant, takeSessionCreatedAt } from '../store/merchants.ts';
import {
  type Customer,
  closePendingSession,
  findLatestSessionCreatedAt,
  findSessionById,
  findSessionByIdUnscoped,
  findSessionWithMembers,
  insertSession,
  listExpiredPendingSessionIds,
  listSessions,
  type Session,
  type SessionListItem,
  type SessionRow,
  type SessionWithMembers,
} from '../store/sessions.ts';
import type { RefundView } from '../wire/mappers.ts';
import type { Caller } from './caller.ts';
import { chargeStepOf } from './chargeable.ts';
import { type AnswerSpec, recordAnswer, updateAnswer } from './idempotency.ts';
import { loadMoney, settleClosing } from './record.ts';
import { settleIfDue } from './settle.ts';
import { checkMerchantUrl, checkWebhookEndpointUrl } from './urls.ts';

const HOUR_MS = 60 * 60 * 1000;
/** How many milliseconds a create may move on to find one its merchant has not used (see below). */
const MAX_CREATED_AT_TRIES = 50;

export interface CreateSessionInput {
  cart: Cart;
  signature: string | undefined;
  groupConfig: GroupConfigInput | undefined;
  customer: Customer | undefined;
  successUrl: string | undefined;
  cancelUrl: string | undefined;
  webhookUrl: string | undefined;
  /** The language of its pages and mail; `auto` (the default) follows each reader. */
  locale: LocaleSetting | undefined;
  /** The creator's Accept-Language: the mail's language when `locale` is `auto`. */
  acceptLanguage: string | undefined;
  /** The Origin header of the create request, if any. */
  origin: string | undefined;
}

export interface CreatedSession {
  session: Session;
  organizerToken: string;
}

function invalid(code: 'invalid_cart' | 'invalid_request', errors: string[]): never {
  throw new ServiceError(code, { message: errors[0], details: errors });
}

/** Checks the request in the order docs/api.md#create-a-session gives: the cart, the options, then who may create. */
export async function createSession(
  deps: Deps,
  caller: Caller,
  input: CreateSessionInput,
  answer?: AnswerSpec<CreatedSession>,
): Promise<CreatedSession> {
  const { merchant } = caller;
  const cartErrors = checkCart(input.cart);
  if (cartErrors.length > 0) invalid('invalid_cart', cartErrors);
  // What the processor can charge is a rule of the cart too: its currency, the total's step and minimum.
  const chargeStep = chargeStepOf(deps.processor.currencies, input.cart, merchant.consumerFeePpm);

  const group = resolveGroupConfig(input.groupConfig);
  if (!group.ok) invalid('invalid_request', group.errors);
  const env = deps.config.serviceEnv;
  // A publishable key is public and its cart signature can be replayed (docs/decisions.md#replayed-signatures):
  // what it sets beyond the cart is held to the page it came from.
  const browser =
    caller.keyKind === 'publishable' ? browserOrigin(caller.merchant, input.origin, env) : undefined;
  if (browser !== undefined && input.webhookUrl !== undefined) {
    throw new ServiceError('not_allowed_with_publishable_key', {
      message:
        'webhook_url cannot be set with a publishable key: register your endpoint once with POST /webhooks (secret key), or create the session from your server.',
    });
  }
  const urlErrors = (
    [
      ['success_url', input.successUrl],
      ['cancel_url', input.cancelUrl],
      ['webhook_url', input.webhookUrl],
    ] as const
  )
    .map(([field, value]) => {
      if (value === undefined) return undefined;
      const problem = checkMerchantUrl(field, value, env);
      if (problem || browser === undefined) return problem;
      return new URL(value).origin === browser
        ? undefined
        : `${field} must be on the page's own origin (${browser}) when the session is created with a publishable key`;
    })
    .filter((e): e is string => e !== undefined);
  // In production a webhook target must also resolve only to public addresses, as a registered
  // endpoint must: our delivery workers are never to be aimed inside our own network.
  if (input.webhookUrl !== undefined && env === 'production' && urlErrors.length === 0) {
    const problem = await checkWebhookEndpointUrl('webhook_url', input.webhookUrl, 'production');
    if (problem) urlErrors.push(problem);
  }
  // Members' browsers load the thumbnails: in production never from an address inside their own network.
  if (env === 'production') {
    input.cart.items.forEach((item, i) => {
      if (item.image_url !== undefined && !isPublicImageUrl(item.image_url))
        urlErrors.push(
          `cart.items[${i}].image_url must be https on a public host name (no IP address, no local name)`,
        );
    });
  }
  if (urlErrors.length > 0) invalid('invalid_request', urlErrors);

  if (input.signature === undefined) {
    if (caller.keyKind === 'publishable') {
      throw new ServiceError('invalid_signature', {
        message:
          'A cart signature is required with a publishable key: send it as signature or X-Service-Signature.',
        details: [...diagnose(caller, input.cart, '', deps.clock.now()).slice(1)],
      });
    }
    if (!merchant.headlessApiEnabled) throw new ServiceError('headless_not_enabled');
  } else {
    const details = diagnose(caller, input.cart, input.signature, deps.clock.now());
    if (details.length > 0) throw new ServiceError('invalid_signature', { details });
  }

  const now = deps.clock.now();
  const organizerToken = ids.organizerToken();
  const sessionId = ids.session();
  const expiryMs = group.config.expiryHours * HOUR_MS;
  // The language the session's mail speaks: the organizer's, as they created it (docs/decisions.md#languages).
  const mailLocale = chooseLocale(input.locale, input.acceptLanguage).lang;
  const draft: SessionRow = {
    id: sessionId,
    merchantId: merchant.id,
    status: 'pending',
    cart: input.cart,
    currency: input.cart.currency,
    totalCents: input.cart.total,
    orderRef: input.cart.metadata?.order_ref ?? null,
    groupId: ids.group(),
    groupMode: group.config.defaultMode,
    groupConfig: group.config,
    groupSetUpAt: null,
    customer: input.customer ?? null,
    successUrl: input.successUrl ?? null,
    cancelUrl: input.cancelUrl ?? null,
    webhookUrl: input.webhookUrl ?? null,
    // Hosted pages may be framed only by the page that created the session, or for sessions created
    // server-side by the merchant's registered origins (docs/api.md#hosted-pages-and-embedding); either
    // way canonical origins only, never a header as it was sent.
    embedOrigins: browser !== undefined ? [browser] : canonicalOrigins(merchant.allowedOrigins),
    groupToken: ids.groupToken(),
    merchantFeePpm: merchant.merchantFeePpm,
    consumerFeePpm: merchant.consumerFeePpm,
    chargeStep,
    locale: input.locale ?? 'auto',
    mailLocale,
    organizerTokenHash: sha256(organizerToken),
    createdAt: now,
    updatedAt: now,
    expiresAt: now + expiryMs,
    closedAt: null,
    fundedAt: null,
    settledAt: null,
    settleAfter: null,
  };
  const organizerDraft = {
    id: ids.member(),
    sessionId,
    merchantId: merchant.id,
    position: 0,
    // No name given: "Organizer" in the organizer's language, as every reader sees a name as it was given.
    name: input.customer?.name ?? translator(CATALOGUES[mailLocale], mailLocale)('progress.organizerName'),
    email: input.customer?.email ?? null,
    amountCents: input.cart.total,
    basisPoints: null,
    items: null,
    shareId: ids.share(),
    status: 'pending',
    isOrganizer: true,
    lastRemindedAt: null,
    payingAttemptId: null,
    failure: null,
  } satisfies Omit<Member, 'createdAt' | 'updatedAt'>;

  // created_at is unique per merchant: it is the list cursor, so a session created in the same
  // millisecond as the merchant's previous one takes the next free millisecond (docs/decisions.md). On
  // PostgreSQL one update of the merchant's row locks it and answers that millisecond, so that processes
  // creating for one merchant at once take their turns instead of colliding on the millisecond over and
  // over; the retry stays for SQLite files shared with another process.
  for (let attempt = 0; ; attempt++) {
    try {
      const session = await deps.db.kysely.transaction().execute(async (trx) => {
        const createdAt =
          deps.db.dialect === 'postgres'
            ? await takeSessionCreatedAt(trx, merchant.id, now)
            : Math.max(now, ((await findLatestSessionCreatedAt(trx, merchant.id)) ?? 0) + 1);
        const row: SessionRow = {
          ...draft,
          createdAt,
          updatedAt: createdAt,
          expiresAt: createdAt + expiryMs,
        };
        const organizer: Member = { createdAt, updatedAt: createdAt, ...organizerDraft };
        await insertSession(trx, row);
        await insertMembers(trx, [organizer]);
        await recordEvent(deps.db.events, trx, 'group.created', { session: row, paidCents: 0 }, createdAt);
        const { organizerTokenHash: _hash, ...session } = row;
        await recordAnswer(trx, answer, { session, organizerToken });
        return session;
      });
      deps.faults.reach('session-created');
      return { session, organizerToken };
    } catch (error) {
      // Another process took this millisecond for the same merchant: read again and take the next.
      if (!isUniqueViolation(error) || attempt >= MAX_CREATED_AT_TRIES) throw error;
    }
  }
}

/**
 * The canonical origin of a publishable-key create (docs/api.md#origins): its Origin header parsed strictly,
 * and one of the merchant's registered origins when it has any. In production a merchant with none
 * registered creates no browser sessions; the sandbox takes any well-formed origin until one is registered.
 */
function browserOrigin(merchant: Merchant, header: string | undefined, env: ServiceEnv): string {
  const parsed = parseOrigin(header, env);
  if (!parsed.ok) {
    // No Origin at all is most often a server using the publishable key (docs/decisions.md#origins).
    const fromServer = header === undefined || header === '';
    throw new ServiceError('invalid_origin', {
      message: `The Origin header is not a web origin: ${parsed.reason}. A browser session is created from a web page served over https (http only on localhost in the sandbox).${fromServer ? ' From a server, create sessions with the secret key (svc_sk_…) instead.' : ''}`,
    });
  }
  const registered = canonicalOrigins(merchant.allowedOrigins);
  if (registered.includes(parsed.origin)) return parsed.origin;
  if (registered.length === 0 && env === 'sandbox') return parsed.origin;
  const register = `group-checkout merchant update --merchant ${merchant.id} --allowed-origin ${parsed.origin}`;
  throw new ServiceError('origin_not_allowed', {
    message:
      registered.length === 0
        ? `Origin ${parsed.origin} is not registered: in production a merchant registers the origins its pages create sessions from. Register it with: ${register}`
        : `Origin ${parsed.origin} is not one of this merchant's registered origins. Register it with: ${register}`,
  });
}

/**
 * The merchant's session with its members (the same frozen object while nothing changed, so callers
 * may memoize what they make of it); another merchant's, or an unknown id, is session_not_found.
 */
export async function getSession(
  deps: Deps,
  merchantId: string,
  sessionId: string,
): Promise<Readonly<SessionWithMembers>> {
  const found = await findSessionWithMembers(deps.db, merchantId, sessionId);
  if (!found) throw new ServiceError('session_not_found');
  return found;
}

/** One page of the merchant's sessions, newest first, strictly older than `before` when given. */
export async function listMerchantSessions(
  deps: Deps,
  merchantId: string,
  limit: number,
  before: number | undefined,
): Promise<{ page: SessionListItem[]; hasMore: boolean }> {
  const rows = await listSessions(deps.db.kysely, merchantId, limit, before);
  return { page: rows.slice(0, limit), hasMore: rows.length > limit };
}

/**
 * [] when the signature is right under the signing secret, or under the one it replaced while that
 * one's grace period lasts (docs/operations.md#keys); otherwise the details of
 * docs/api.md#cart-signature, the recognized mistake first, about the current secret.
 */
function diagnose(caller: Caller, cart: Cart, signature: string, now: number): string[] {
  const { signingSecret, previousSigningSecret } = caller.merchant;
  // The common case, a right signature, costs one canonicalization; the diagnosis only runs on a wrong one.
  const inForce = secretsInForce(signingSecret, previousSigningSecret, now);
  if (inForce.some((secret) => verifyCartSignature(cart, signature, secret))) return [];
  const check = diagnoseCartSignature({
    cart,
    signature,
    signingSecret: caller.merchant.signingSecret,
    knownWrongKeys:
      caller.keyKind === 'secret'
        ? { secretApiKey: caller.presentedKey }
        : { publishableKey: caller.presentedKey },
  });
  return check.valid ? [] : check.details;
}

export interface ClosedSession {
  session: Session;
  members: Member[];
  /** One per share whose money was taken, with how far its refund got (docs/api.md#refunds). */
  refunds: RefundView[];
}

/**
 * Closes a pending session as cancelled or expired, in one transaction. The conditional update is the
 * claim: of two processes closing one session, one gets the closed session and the other undefined (the
 * session was no longer pending, or for a cancel no longer open). A session with no money in it gets its
 * closing event (group.cancelled or group.expired) at once; otherwise its paid shares are refunded and its
 * holds released first, here right after the commit and by the settling worker until they succeed, and
 * the event follows them. `expireNow` (the sandbox helper) also moves expires_at to the moment of closing.
 */
export async function closeSession(
  deps: Deps,
  sessionId: string,
  to: 'cancelled' | 'expired',
  options: { expireNow?: boolean; answer?: AnswerSpec<ClosedSession> } = {},
): Promise<ClosedSession | undefined> {
  const now = deps.clock.now();
  const closed = await deps.db.kysely.transaction().execute(async (trx) => {
    // A cancel must find the session still open; expiry (the sweeper, the sandbox helper) needs it pending.
    const session = await closePendingSession(trx, sessionId, to, now, {
      openAt: to === 'cancelled' ? now : undefined,
      expiresAt: options.expireNow ? now : undefined,
    });
    if (!session) return undefined;
    // Its events are dated once the session's lock is held, after any change it waited on (lockForChange).
    const state = await settleClosing(deps, trx, session, Math.max(now, deps.clock.now()));
    const result: ClosedSession = {
      session: state.session,
      members: state.members,
      refunds: refundsOf(state.session, state.members, state.attempts),
    };
    // With refunds still to make, this is the answer only should the request die before making them: a
    // retry meanwhile is told the request is in progress, and gets the final answer once it is given.
    const done = result.refunds.length === 0 && result.session.settleAfter === null;
    await recordAnswer(trx, options.answer, result, { provisional: !done });
    return { result, state, done };
  });
  if (!closed) return undefined;
  const { result, state, done } = closed;
  if (done) return result;
  // Refund now rather than at the worker's next round: the answer then shows them done.
  await settleIfDue(deps, result.session, state);
  const after = await loadMoney(deps, sessionId);
  if (!after) {
    await updateAnswer(deps, options.answer, result);
    return result;
  }
  const final: ClosedSession = { refunds: refundsOf(after.session, after.members, after.attempts), ...after };
  // A retry with the same Idempotency-Key replays this answer, not the one committed with the close.
  await updateAnswer(deps, options.answer, final);
  return final;
}

/**
 * Closes a session for a caller who asked for it (a merchant, the organizer); a session that was not
 * open is session_not_pending, naming its status or that it expired.
 */
export async function closeSessionOrFail(
  deps: Deps,
  sessionId: string,
  to: 'cancelled' | 'expired',
  answer?: AnswerSpec<ClosedSession>,
): Promise<ClosedSession> {
  const closed = await closeSession(deps, sessionId, to, { expireNow: to === 'expired', answer });
  if (closed) return closed;
  throw notOpen(await findSessionByIdUnscoped(deps.db.kysely, sessionId), deps.clock.now());
}

/** Closes the merchant's session; another merchant's, or an unknown id, is session_not_found. */
export async function closeMerchantSession(
  deps: Deps,
  merchantId: string,
  sessionId: string,
  to: 'cancelled' | 'expired',
  answer?: AnswerSpec<ClosedSession>,
): Promise<ClosedSession> {
  const session = await findSessionById(deps.db.kysely, merchantId, sessionId);
  if (!session) throw new ServiceError('session_not_found');
  return closeSessionOrFail(deps, session.id, to, answer);
}

/** Pending sessions past their expires_at, oldest first: what the expiry sweeper closes. */
export const listDueSessionIds = (deps: Deps, limit: number): Promise<string[]> =>
  listExpiredPendingSessionIds(deps.db.kysely, deps.clock.now(), limit);

/**
 * Only a pending session before its expires_at takes changes (group set-up, joins, reminders, cancel).
 * Past expires_at it is expired in all but name until the sweeper gets to it, seconds later.
 */
export function assertOpen(session: Pick<Session, 'status' | 'expiresAt'>, now: number): void {
  if (session.status !== 'pending' || now >= session.expiresAt) throw notOpen(session, now);
}

/**
 * Why a change found the session closed, naming its status or that it expired. `session` is the
 * session as read after the change failed: a session still open then lost a race to another change.
 */
export function notOpen(
  session: Pick<Session, 'status' | 'expiresAt'> | undefined,
  now: number,
): ServiceError {
  if (!session) return new ServiceError('session_not_found');
  if (session.status !== 'pending')
    return new ServiceError('session_not_pending', {
      message: `The session is ${session.status}; only a pending session can be changed or paid.`,
    });
  if (now >= session.expiresAt)
    return new ServiceError('session_not_pending', { message: 'The session has expired.' });
  return new ServiceError('session_not_pending', {
    message: 'The session was being changed by another request at the same time; load it again and retry.',
  });
}
