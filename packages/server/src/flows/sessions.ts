// Session operations of several steps: check → load → decide → save, each change and its event in one
// transaction. Handlers (api/sessions.*.ts, pages/api.ts) parse, call one of these and shape the reply.
import { type Cart, verifyCartSignature } from '@group-checkout/node';
import type { AuthContext } from '../api/auth.ts';
import { ApiError } from '../api/errors.ts';
import type { Deps } from '../deps.ts';
import { checkCart } from '../domain/cart.ts';
import { type GroupConfigInput, resolveGroupConfig } from '../domain/group-config.ts';
import { diagnoseCartSignature } from '../domain/signature-check.ts';
import { recordEvent } from '../events/outbox.ts';
import type { EventType } from '../events/types.ts';
import { ids, sha256 } from '../ids.ts';
import {
  type Customer,
  findSessionById,
  findSessionByIdUnscoped,
  insertSession,
  listMembers,
  type Member,
  type Session,
  transitionSession,
} from '../store/sessions.ts';
import { checkMerchantUrl, checkWebhookEndpointUrl } from './urls.ts';

const HOUR_MS = 60 * 60 * 1000;

export interface CreateSessionInput {
  cart: Cart;
  signature: string | undefined;
  groupConfig: GroupConfigInput | undefined;
  customer: Customer | undefined;
  successUrl: string | undefined;
  cancelUrl: string | undefined;
  webhookUrl: string | undefined;
  /** The Origin header of the create request, if any. */
  origin: string | undefined;
}

export interface CreatedSession {
  session: Session;
  organizerToken: string;
}

/** The URL an organizer opens to set the group up (SPEC.md §2.6). */
export const sessionUrl = (deps: Deps, sessionId: string, token: string) =>
  `${deps.config.publicPayUrl}/session/${sessionId}?access=${token}`;

/** The link a member opens to pay their share. */
export const shareUrl = (deps: Deps, shareId: string) => `${deps.config.publicPayUrl}/s/${shareId}`;

function invalid(code: 'invalid_cart' | 'invalid_request', errors: string[]): never {
  throw new ApiError(code, { message: errors[0], details: errors });
}

/** Checks the request the way SPEC.md §4.1 orders it: the cart, the options, then who may create. */
export async function createSession(
  deps: Deps,
  auth: AuthContext,
  input: CreateSessionInput,
): Promise<CreatedSession> {
  const { merchant } = auth;
  const cartErrors = checkCart(input.cart);
  if (cartErrors.length > 0) invalid('invalid_cart', cartErrors);

  const group = resolveGroupConfig(input.groupConfig);
  if (!group.ok) invalid('invalid_request', group.errors);
  const urlErrors = (
    [
      ['success_url', input.successUrl],
      ['cancel_url', input.cancelUrl],
      ['webhook_url', input.webhookUrl],
    ] as const
  )
    .map(([field, value]) =>
      value === undefined ? undefined : checkMerchantUrl(field, value, deps.config.serviceEnv),
    )
    .filter((e): e is string => e !== undefined);
  // In production a webhook target must also resolve only to public addresses (DESIGN.md §11), as a
  // registered endpoint must: our delivery workers are never to be aimed inside our own network.
  if (input.webhookUrl !== undefined && deps.config.serviceEnv === 'production' && urlErrors.length === 0) {
    const problem = await checkWebhookEndpointUrl('webhook_url', input.webhookUrl, 'production');
    if (problem) urlErrors.push(problem);
  }
  if (urlErrors.length > 0) invalid('invalid_request', urlErrors);

  if (input.signature === undefined) {
    if (auth.keyKind === 'publishable') {
      throw new ApiError('invalid_signature', {
        message:
          'A cart signature is required with a publishable key: send it as signature or X-Service-Signature.',
        details: [...diagnose(auth, input.cart, '').slice(1)],
      });
    }
    if (!merchant.headlessApiEnabled) throw new ApiError('headless_not_enabled');
  } else {
    const details = diagnose(auth, input.cart, input.signature);
    if (details.length > 0) throw new ApiError('invalid_signature', { details });
  }

  const now = deps.clock.now();
  const organizerToken = ids.organizerToken();
  const sessionId = ids.session();
  // Hosted pages may be framed only by the page that created the session, or for sessions created
  // server-side by the merchant's configured origins (DESIGN.md §10).
  const embedOrigins =
    auth.keyKind === 'publishable' && input.origin ? [input.origin] : merchant.allowedOrigins;
  const organizer: Omit<Member, 'createdAt' | 'updatedAt'> = {
    id: ids.member(),
    sessionId,
    merchantId: merchant.id,
    position: 0,
    name: input.customer?.name ?? 'Organizer',
    email: input.customer?.email ?? null,
    amountCents: input.cart.total,
    basisPoints: null,
    items: null,
    shareId: ids.share(),
    status: 'pending',
    isOrganizer: true,
    lastRemindedAt: null,
  };
  const session = await insertSession(
    deps.db.kysely,
    {
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
      embedOrigins,
      groupToken: ids.groupToken(),
      merchantFeePpm: merchant.merchantFeePpm,
      consumerFeePpm: merchant.consumerFeePpm,
      organizerTokenHash: sha256(organizerToken),
    },
    organizer,
    now,
    group.config.expiryHours * HOUR_MS,
    async (trx, created) => {
      // The session's own creation time, which insertSession may have moved a millisecond on.
      await recordEvent(trx, 'group.created', { session: created, members: [organizer] }, created.createdAt);
    },
  );
  return { session, organizerToken };
}

/** [] when the signature is right; otherwise the details of DESIGN.md §7, the recognized mistake first. */
function diagnose(auth: AuthContext, cart: Cart, signature: string): string[] {
  // The common case, a right signature, costs one canonicalization; the diagnosis only runs on a wrong one.
  if (verifyCartSignature(cart, signature, auth.merchant.signingSecret)) return [];
  const check = diagnoseCartSignature({
    cart,
    signature,
    signingSecret: auth.merchant.signingSecret,
    knownWrongKeys:
      auth.keyKind === 'secret' ? { secretApiKey: auth.presentedKey } : { publishableKey: auth.presentedKey },
  });
  return check.valid ? [] : check.details;
}

export interface ClosedSession {
  session: Session;
  members: Member[];
  /** Refunds of paid shares; paid shares are refunded by the payments work before the event goes out. */
  refunds: { id: string; member_id: string; amount_cents: number; status: string }[];
}

const CLOSING_EVENT: Record<'cancelled' | 'expired', EventType> = {
  cancelled: 'group.cancelled',
  expired: 'group.expired',
};

/**
 * Closes a pending session as cancelled or expired and writes its event, in one transaction. The
 * conditional update is the claim: of two processes closing one session, one wins and the other gets
 * ApiError session_not_pending.
 */
export async function closeSession(
  deps: Deps,
  sessionId: string,
  to: 'cancelled' | 'expired',
): Promise<ClosedSession> {
  const now = deps.clock.now();
  const result = await deps.db.kysely.transaction().execute(async (trx) => {
    // A cancel must find the session still open; expiry (the sweeper, the sandbox helper) needs it pending.
    const openAt = to === 'cancelled' ? now : undefined;
    if (!(await transitionSession(trx, sessionId, 'pending', to, now, openAt))) return undefined;
    const session = await findSessionByIdUnscoped(trx, sessionId);
    if (!session) return undefined;
    const members = await listMembers(trx, sessionId);
    await recordEvent(trx, CLOSING_EVENT[to], { session, members }, now);
    return { session, members, refunds: [] };
  });
  if (!result) {
    // A cancel refused only because expires_at has passed says so, as every other change does.
    const session = to === 'cancelled' ? await findSessionByIdUnscoped(deps.db.kysely, sessionId) : undefined;
    if (session) assertOpen(session, now);
    throw new ApiError('session_not_pending');
  }
  return result;
}

/** Closes the merchant's session; another merchant's, or an unknown id, is session_not_found. */
export async function closeMerchantSession(
  deps: Deps,
  merchantId: string,
  sessionId: string,
  to: 'cancelled' | 'expired',
): Promise<ClosedSession> {
  const session = await findSessionById(deps.db.kysely, merchantId, sessionId);
  if (!session) throw new ApiError('session_not_found');
  return closeSession(deps, session.id, to);
}

/**
 * Only a pending session before its expires_at takes changes (group set-up, joins, reminders, cancel).
 * Past expires_at it is expired in all but name until the sweeper gets to it, seconds later.
 */
export function assertOpen(session: Pick<Session, 'status' | 'expiresAt'>, now: number): void {
  if (session.status !== 'pending') throw new ApiError('session_not_pending');
  if (now >= session.expiresAt)
    throw new ApiError('session_not_pending', { message: 'The session has expired.' });
}
