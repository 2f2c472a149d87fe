// Who may use the merchant dashboard and how they sign in (docs/dashboard.md#signing-in): people with a
// role at one merchant, a one-time link mailed to them (15 minutes, single use), and a cookie session
// that ends after 30 minutes without a request or at sign-out. Requests for a link answer the same
// whether or not the address is known; each address gets at most LINKS_PER_ADDRESS_PER_HOUR links.
import type { Deps } from '../deps.ts';
import { ServiceError } from '../errors.ts';
import { ids, sha256 } from '../ids.ts';
import {
  claimDashboardLink,
  countOwners,
  type DashboardRole,
  type DashboardSession,
  type DashboardUser,
  dashboardLinkIsLive,
  deleteDashboardUser,
  endDashboardSession,
  findDashboardSession,
  findDashboardUser,
  findDashboardUserByEmail,
  insertDashboardLink,
  insertDashboardSession,
  insertDashboardUser,
  listDashboardUsers,
  listDashboardUsersByEmail,
  touchDashboardSession,
} from '../store/dashboard.ts';
import type { Db } from '../store/db.ts';
import { findMerchantById } from '../store/merchants.ts';

export const SIGN_IN_LINK_TTL_MS = 15 * 60 * 1000;
const SESSION_IDLE_MS = 30 * 60 * 1000;
/** A session is never longer than this, however busy. */
const SESSION_MAX_MS = 12 * 60 * 60 * 1000;
/** last_seen_at is written at most this often: a page and its redirects are one write, not three. */
const TOUCH_EVERY_MS = 60 * 1000;
const LINKS_PER_ADDRESS_PER_HOUR = 5;

export const DASHBOARD_ROLES: readonly DashboardRole[] = ['owner', 'developer', 'viewer'];

const EMAIL = /^[^\s@<>()",;:\\[\]]+@[^\s@<>()",;:\\[\]]+\.[^\s@<>()",;:\\[\]]+$/;

/** The address as stored (trimmed, lowercased), or undefined when it is not one. */
export function normalEmail(text: string): string | undefined {
  const email = text.trim().toLowerCase();
  return email.length <= 254 && EMAIL.test(email) ? email : undefined;
}

const signInUrl = (publicPayUrl: string, token: string) =>
  `${publicPayUrl}/dashboard/sign-in?token=${encodeURIComponent(token)}`;

/** Adds a person to a merchant's dashboard; an address already there is 409 dashboard_user_exists. */
export async function addDashboardUser(
  db: Db,
  input: { merchantId: string; email: string; role: DashboardRole },
  now: number,
): Promise<DashboardUser> {
  const email = normalEmail(input.email);
  if (!email) throw invalidEmail();
  if (!(await findMerchantById(db.kysely, db.secrets, input.merchantId)))
    throw new ServiceError('invalid_request', {
      message: `no merchant ${input.merchantId}`,
      details: [`no merchant ${input.merchantId}`],
    });
  if (await findDashboardUserByEmail(db.kysely, input.merchantId, email))
    throw new ServiceError('dashboard_user_exists');
  const user: DashboardUser = {
    id: ids.dashboardUser(),
    merchantId: input.merchantId,
    email,
    role: input.role,
    createdAt: now,
  };
  await insertDashboardUser(db.kysely, user);
  return user;
}

/** A fresh one-time sign-in link for the user; the token is only in the URL answered. */
export async function issueSignInLink(
  db: Db,
  publicPayUrl: string,
  userId: string,
  now: number,
): Promise<string> {
  const token = ids.dashboardLink();
  await insertDashboardLink(db.kysely, {
    tokenHash: sha256(token),
    userId,
    createdAt: now,
    expiresAt: now + SIGN_IN_LINK_TTL_MS,
  });
  return signInUrl(publicPayUrl, token);
}

/** The merchant's user with this address, or its first owner when none is named (the CLI's link). */
export async function userForLink(
  db: Db,
  merchantId: string,
  email: string | undefined,
): Promise<DashboardUser | undefined> {
  if (email !== undefined) {
    const normal = normalEmail(email);
    return normal ? findDashboardUserByEmail(db.kysely, merchantId, normal) : undefined;
  }
  return (await listDashboardUsers(db.kysely, merchantId)).find((u) => u.role === 'owner');
}

/**
 * Mails a sign-in link to every dashboard user with this address, unless the address has had its links
 * for the hour. Answers nothing either way: the caller must not tell a stranger whether it is known.
 */
export async function mailSignInLinks(deps: Deps, email: string): Promise<void> {
  const normal = normalEmail(email);
  if (!normal) return;
  const { count } = await deps.counters.increment(`dashboard-link:${sha256(normal)}`, 60 * 60 * 1000);
  if (count > LINKS_PER_ADDRESS_PER_HOUR) return;
  const users = await listDashboardUsersByEmail(deps.db.kysely, normal);
  for (const user of users) await mailLink(deps, user, 'sign-in');
}

async function mailLink(deps: Deps, user: DashboardUser, why: 'sign-in' | 'invite'): Promise<void> {
  const merchant = await findMerchantById(deps.db.kysely, deps.db.secrets, user.merchantId);
  if (!merchant) return;
  const url = await issueSignInLink(deps.db, deps.config.publicPayUrl, user.id, deps.clock.now());
  const first =
    why === 'invite'
      ? `You were added to the ${merchant.name} dashboard on Group Checkout as ${user.role}.`
      : `Someone (we hope you) asked to sign in to the ${merchant.name} dashboard on Group Checkout.`;
  await deps.mailer.send({
    to: user.email,
    subject: `Sign in to the ${merchant.name} dashboard`,
    text: [
      first,
      '',
      'Open this link to sign in. It works once, within 15 minutes:',
      url,
      '',
      why === 'invite'
        ? 'If you did not expect this invitation, ignore this mail: nobody can sign in without the link.'
        : 'If you did not ask for it, ignore this mail: nobody can sign in without the link.',
    ].join('\n'),
  });
  if (deps.config.serviceEnv === 'sandbox')
    deps.logger.info({ dashboard_user: user.id, sign_in_url: url }, 'dashboard sign-in link (sandbox)');
}

/** Whether the link would sign someone in now (shown before it is used, so a mail scanner's GET spends nothing). */
export const signInLinkIsLive = (deps: Deps, token: string): Promise<boolean> =>
  dashboardLinkIsLive(deps.db.kysely, sha256(token), deps.clock.now());

/** Spends the link and opens a session: the cookie's value and the session. Used or expired: undefined. */
export async function signInWithLink(
  deps: Deps,
  token: string,
): Promise<{ cookie: string; session: DashboardSession } | undefined> {
  const now = deps.clock.now();
  const userId = await claimDashboardLink(deps.db.kysely, sha256(token), now);
  if (!userId) return undefined;
  const cookie = ids.dashboardSession();
  await insertDashboardSession(deps.db.kysely, {
    tokenHash: sha256(cookie),
    userId,
    csrfToken: ids.csrfToken(),
    now,
  });
  const session = await findDashboardSession(deps.db.kysely, sha256(cookie));
  return session && { cookie, session };
}

/** The live session a cookie names, its idle time renewed; undefined when unknown, ended or idle too long. */
export async function sessionForCookie(deps: Deps, cookie: string): Promise<DashboardSession | undefined> {
  const hash = sha256(cookie);
  const session = await findDashboardSession(deps.db.kysely, hash);
  if (!session) return undefined;
  const now = deps.clock.now();
  if (now - session.lastSeenAt > SESSION_IDLE_MS || now - session.createdAt > SESSION_MAX_MS) {
    await endDashboardSession(deps.db.kysely, hash, now);
    return undefined;
  }
  if (now - session.lastSeenAt >= TOUCH_EVERY_MS) await touchDashboardSession(deps.db.kysely, hash, now);
  return session;
}

export const signOut = (deps: Deps, session: DashboardSession): Promise<void> =>
  endDashboardSession(deps.db.kysely, session.tokenHash, deps.clock.now());

export const listTeam = (deps: Deps, merchantId: string): Promise<DashboardUser[]> =>
  listDashboardUsers(deps.db.kysely, merchantId);

/** Adds a teammate and mails them a sign-in link (an owner's change; the caller checks the role). */
export async function inviteTeammate(
  deps: Deps,
  merchantId: string,
  input: { email: string; role: DashboardRole },
): Promise<DashboardUser> {
  const user = await addDashboardUser(deps.db, { merchantId, ...input }, deps.clock.now());
  await mailLink(deps, user, 'invite').catch((error: Error) =>
    deps.logger.warn({ err: error.message, dashboard_user: user.id }, 'invitation mail failed'),
  );
  return user;
}

/** Removes a teammate of the merchant; another merchant's is not found; the last owner stays. */
export async function removeTeammate(deps: Deps, merchantId: string, userId: string): Promise<void> {
  const user = await findDashboardUser(deps.db.kysely, merchantId, userId);
  if (!user) throw new ServiceError('dashboard_user_not_found');
  if (user.role === 'owner' && (await countOwners(deps.db.kysely, merchantId)) <= 1)
    throw new ServiceError('last_owner');
  await deleteDashboardUser(deps.db.kysely, user.id);
}

const invalidEmail = () =>
  new ServiceError('invalid_request', {
    message: 'email must be an address such as ana@shop.example',
    details: ['email must be an address such as ana@shop.example'],
  });

/** The merchant a signed-in user works for (undefined once it is gone). */
export const findMerchantForDashboard = (deps: Deps, merchantId: string) =>
  findMerchantById(deps.db.kysely, deps.db.secrets, merchantId);

/**
 * The sandbox demo's sign-in link: for the user with `email` (the first found), or, when there is none,
 * for a new owner with that address at `merchantId`. Undefined when neither can be.
 */
export async function demoOwnerLink(
  deps: Deps,
  email: string,
  merchantId: string | undefined,
): Promise<string | undefined> {
  const now = deps.clock.now();
  let user = (await listDashboardUsersByEmail(deps.db.kysely, email))[0];
  if (!user && merchantId && (await findMerchantById(deps.db.kysely, deps.db.secrets, merchantId)))
    user = await addDashboardUser(deps.db, { merchantId, email, role: 'owner' }, now);
  return user && issueSignInLink(deps.db, deps.config.publicPayUrl, user.id, now);
}
