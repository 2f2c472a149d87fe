// Group set-up by the organizer and joining by members (DESIGN.md §8, §10). Shares come from the pure
// split engine; paid shares are passed to it as locked, so they never change. Each change runs in one
// transaction that first claims the still-pending session row.
import { ApiError } from '../api/errors.ts';
import type { Deps } from '../deps.ts';
import { cartExtras } from '../domain/cart.ts';
import { type MemberSpec, type SplitMode, splitTotal } from '../domain/split.ts';
import { ids } from '../ids.ts';
import {
  findSessionByIdUnscoped,
  listMembers,
  type Member,
  type Session,
  saveGroup,
  touchPendingSession,
} from '../store/sessions.ts';
import { assertOpen } from './sessions.ts';

export interface MemberInput {
  id?: string;
  name: string;
  email?: string;
  amount_cents?: number;
  basis_points?: number;
  items?: { item_index: number; quantity: number }[];
}

const invalidGroup = (errors: string[]): never => {
  throw new ApiError('invalid_group', { message: errors[0], details: errors });
};

function splitOrThrow(
  session: Session,
  mode: SplitMode,
  specs: MemberSpec[],
  locked: (number | null)[],
): number[] {
  const result = splitTotal({
    mode,
    total: session.totalCents,
    items: session.cart.items.map((i) => ({ quantity: i.quantity, unitPrice: i.unit_price })),
    extras: cartExtras(session.cart),
    members: specs,
    locked,
  });
  if (!result.ok) invalidGroup(result.errors);
  return (result as { ok: true; amounts: number[] }).amounts;
}

/**
 * Replaces the group with `members` under `mode`. Member 0 is the organizer. Members already in the
 * group are named by `id` and keep their share links; paid members must stay, with their amounts.
 */
export async function setUpGroup(
  deps: Deps,
  session: Session,
  mode: SplitMode,
  members: MemberInput[],
): Promise<{ session: Session; members: Member[] }> {
  assertOpen(session, deps.clock.now());
  const cfg = session.groupConfig;
  const errors: string[] = [];
  if (!cfg.allowedModes.includes(mode))
    errors.push(`mode must be one of ${cfg.allowedModes.join(', ')} for this session`);
  if (members.length < cfg.minSize || members.length > cfg.maxSize) {
    errors.push(`the group must have from ${cfg.minSize} to ${cfg.maxSize} members, got ${members.length}`);
  }
  if (errors.length > 0) invalidGroup(errors);

  const now = deps.clock.now();
  return deps.db.kysely.transaction().execute(async (trx) => {
    if (!(await touchPendingSession(trx, session.id, now))) throw new ApiError('session_not_pending');
    const existing = await listMembers(trx, session.id);
    const byId = new Map(existing.map((m) => [m.id, m]));
    const organizer = existing.find((m) => m.isOrganizer);
    const matched = members.map((input, index) => {
      const id = input.id ?? (index === 0 ? organizer?.id : undefined);
      if (id === undefined) return undefined;
      const found = byId.get(id);
      if (!found) errors.push(`members[${index}].id ${id} is not a member of this group`);
      else if (found.isOrganizer !== (index === 0)) {
        errors.push(
          index === 0
            ? 'members[0] must be the organizer'
            : `members[${index}] is the organizer; put them first`,
        );
      }
      return found;
    });
    const seen = new Set<string>();
    for (const [index, m] of matched.entries()) {
      if (!m) continue;
      if (seen.has(m.id)) errors.push(`members[${index}].id ${m.id} appears twice`);
      seen.add(m.id);
    }
    for (const m of existing) {
      if (m.status !== 'pending' && !seen.has(m.id))
        errors.push(`${m.name} has paid and must stay in the group (id ${m.id})`);
    }
    if (errors.length > 0) invalidGroup(errors);

    const locked = matched.map((m) => (m && m.status !== 'pending' ? m.amountCents : null));
    const specs: MemberSpec[] = members.map((input) => ({
      name: input.name,
      amountCents: input.amount_cents,
      basisPoints: input.basis_points,
      items: input.items?.map((i) => ({ itemIndex: i.item_index, quantity: i.quantity })),
    }));
    const amounts = splitOrThrow(session, mode, specs, locked);

    const next: Member[] = members.map((input, position) => {
      const previous = matched[position];
      if (previous && previous.status !== 'pending') return { ...previous, position };
      return {
        id: previous?.id ?? ids.member(),
        sessionId: session.id,
        merchantId: session.merchantId,
        position,
        name: input.name,
        // A member named by id keeps the email they had (one who joined gave it themselves) unless a new
        // one is given; the organizer's defaults to the session's customer.email.
        email: input.email ?? previous?.email ?? (position === 0 ? (session.customer?.email ?? null) : null),
        amountCents: amounts[position] as number,
        basisPoints: mode === 'percentage' ? (input.basis_points ?? null) : null,
        items:
          mode === 'itemized'
            ? (input.items?.map((i) => ({ itemIndex: i.item_index, quantity: i.quantity })) ?? null)
            : null,
        shareId: previous?.shareId ?? ids.share(),
        status: 'pending',
        isOrganizer: position === 0,
        lastRemindedAt: previous?.lastRemindedAt ?? null,
        createdAt: previous?.createdAt ?? now,
        updatedAt: now,
      };
    });
    await saveGroup(trx, session, existing, next, mode, now);
    return {
      session: { ...session, groupMode: mode, groupSetUpAt: session.groupSetUpAt ?? now, updatedAt: now },
      members: next,
    };
  });
}

/** Adds a member to an equal group and re-splits the pending shares evenly. */
export async function joinGroup(
  deps: Deps,
  session: Session,
  input: { name: string; email?: string },
): Promise<{ member: Member; members: Member[] }> {
  assertOpen(session, deps.clock.now());
  if (session.groupMode !== 'equal') {
    throw new ApiError('group_not_joinable', {
      message: `Members can join only an equal split; this group is split by ${session.groupMode}.`,
    });
  }
  const now = deps.clock.now();
  return deps.db.kysely.transaction().execute(async (trx) => {
    if (!(await touchPendingSession(trx, session.id, now))) throw new ApiError('session_not_pending');
    // Read the mode again under the claim: the organizer may have changed it since `session` was loaded,
    // and an equal re-split must not overwrite a custom set-up made in between.
    const current = await findSessionByIdUnscoped(trx, session.id);
    if (current?.groupMode !== 'equal') throw new ApiError('group_not_joinable');
    const existing = await listMembers(trx, session.id);
    if (existing.length >= session.groupConfig.maxSize) {
      throw new ApiError('group_full', {
        message: `The group is full: it has its ${session.groupConfig.maxSize} members.`,
      });
    }
    const member: Member = {
      id: ids.member(),
      sessionId: session.id,
      merchantId: session.merchantId,
      position: existing.length,
      name: input.name,
      email: input.email ?? null,
      amountCents: 0,
      basisPoints: null,
      items: null,
      shareId: ids.share(),
      status: 'pending',
      isOrganizer: false,
      lastRemindedAt: null,
      createdAt: now,
      updatedAt: now,
    };
    const all = [...existing, member];
    const amounts = splitOrThrow(
      session,
      'equal',
      all.map((m) => ({ name: m.name })),
      all.map((m) => (m.status === 'pending' ? null : m.amountCents)),
    );
    const next = all.map((m, position) =>
      m.status === 'pending' ? { ...m, amountCents: amounts[position] as number, updatedAt: now } : m,
    );
    await saveGroup(trx, session, existing, next, 'equal', now);
    return { member: next.at(-1) as Member, members: next };
  });
}
