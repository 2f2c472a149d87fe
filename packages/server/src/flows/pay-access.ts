// What a pay-page credential opens (docs/api.md#pay-page-api): the organizer's access token (at_…) opens
// its session as the organizer, the group access token (gat_…) as a member of the group, and a share
// id one member's share. None of them is an API key, and none needs a merchant id.
import type { Deps } from '../deps.ts';
import { ServiceError } from '../errors.ts';
import { sha256 } from '../ids.ts';
import { type Attempt, listSessionAttempts } from '../store/attempts.ts';
import { findMemberByShareId, listMembers, type Member } from '../store/members.ts';
import { findMerchantName, findShareToPay } from '../store/merchants.ts';
import {
  findSessionByGroupToken,
  findSessionByIdUnscoped,
  findSessionByOrganizerTokenHash,
  type Session,
} from '../store/sessions.ts';
import type { PageRole } from '../wire/mappers.ts';

/** The session a token opens, and as whom; invalid_access_token for anything else. */
export async function sessionForToken(
  deps: Deps,
  token: string,
): Promise<{ session: Session; role: PageRole }> {
  const db = deps.db.kysely;
  if (token.startsWith('at_')) {
    const session = await findSessionByOrganizerTokenHash(db, sha256(token));
    if (session) return { session, role: 'organizer' };
  } else if (token.startsWith('gat_')) {
    const session = await findSessionByGroupToken(db, token);
    if (session) return { session, role: 'member' };
  }
  throw new ServiceError('invalid_access_token');
}

/** The session of a token that must be the organizer's; a group token is organizer_only. */
export async function organizerSession(
  deps: Deps,
  token: string,
): Promise<{ session: Session; role: PageRole }> {
  const access = await sessionForToken(deps, token);
  if (access.role !== 'organizer') throw new ServiceError('organizer_only');
  return access;
}

/** The name the pages show for the session's merchant. */
export function merchantNameOf(deps: Deps, session: Pick<Session, 'merchantId'>): Promise<string> {
  return findMerchantName(deps.db, session.merchantId);
}

/** The session as its page shows it: the session, its members and the merchant's name. */
export async function loadPayPage(deps: Deps, access: { session: Session; role: PageRole }) {
  const { session, role } = access;
  const members = await listMembers(deps.db.kysely, session.id);
  return { session, members, role, merchantName: await merchantNameOf(deps, session) };
}

/**
 * One member's share by its id, with its session, the merchant's name and its attempts once it was paid
 * or a payment failed (the page says why, by the failed attempt).
 */
export async function loadShare(
  deps: Deps,
  shareId: string,
): Promise<{ session: Session; member: Member; merchantName: string; attempts: Attempt[] }> {
  const member = await findMemberByShareId(deps.db.kysely, shareId);
  const session = member && (await findSessionByIdUnscoped(deps.db.kysely, member.sessionId));
  if (!member || !session) throw new ServiceError('share_not_found');
  const attempts =
    member.status === 'pending' && member.failure === null
      ? []
      : await listSessionAttempts(deps.db.kysely, session.id);
  return { session, member, merchantName: await merchantNameOf(deps, session), attempts };
}

/**
 * A share about to be paid: its member's ids (the claim reads the member under the session's lock) and
 * the merchant's name for the answer, in one statement; share_not_found for an unknown id, before
 * anything else.
 */
export async function loadShareToPay(
  deps: Deps,
  shareId: string,
): Promise<{ member: Pick<Member, 'id' | 'sessionId' | 'shareId'>; merchantName: string }> {
  const found = await findShareToPay(deps.db.kysely, shareId);
  if (!found) throw new ServiceError('share_not_found');
  const { merchantName, ...member } = found;
  return { member, merchantName };
}

/** A share as its page shows it: loadShare, and the group's members for its progress. */
export async function loadSharePage(deps: Deps, shareId: string) {
  const share = await loadShare(deps, shareId);
  return { members: await listMembers(deps.db.kysely, share.session.id), ...share };
}
