// Group set-up by the organizer and joining by members (docs/api.md#split-modes). Shares come
// from the pure split engine; paid shares are passed to it as locked, so they never change. Each change
// runs in one transaction that first locks the still-open session row.
import type { Transaction } from 'kysely';
import type { Deps } from '../deps.ts';
import { cartExtras } from '../domain/cart.ts';
import { matchMembers } from '../domain/members.ts';
import { type MemberSpec, type SplitMode, splitTotal } from '../domain/split.ts';
import { ServiceError } from '../errors.ts';
import { ids } from '../ids.ts';
import {
  deletePendingMembers,
  insertMembers,
  listMembers,
  type Member,
  updatePendingMember,
} from '../store/members.ts';
import type { Database } from '../store/schema.ts';
import {
  findSessionByIdUnscoped,
  lockOpenSession,
  type Session,
  updateGroupMode,
} from '../store/sessions.ts';
import { assertSharesChargeable } from './chargeable.ts';
import { type AnswerSpec, recordAnswer } from './idempotency.ts';
import { notOpen } from './sessions.ts';

export interface MemberInput {
  id?: string;
  name: string;
  email?: string;
  amountCents?: number;
  basisPoints?: number;
  items?: { itemIndex: number; quantity: number }[];
}

/**
 * A share that no longer changes: paid, authorized (a hold), refunded or released, or with a payment in
 * flight. Set-ups, joins and cover keep these as they are.
 */
const isFixed = (m: Member): boolean => m.status !== 'pending' || m.payingAttemptId !== null;

/** A member new to the group: pending, never reminded, with a new id and share link. */
const newMember = (
  session: Session,
  fields: Pick<Member, 'position' | 'name' | 'email' | 'amountCents'>,
  now: number,
): Member => ({
  id: ids.member(),
  sessionId: session.id,
  merchantId: session.merchantId,
  basisPoints: null,
  items: null,
  shareId: ids.share(),
  status: 'pending',
  isOrganizer: false,
  lastRemindedAt: null,
  payingAttemptId: null,
  failure: null,
  createdAt: now,
  updatedAt: now,
  ...fields,
});

const invalidGroup = (errors: string[], fixed: { memberIndex: number; paid: number }[] = []): never => {
  throw new ServiceError('invalid_group', {
    message: errors[0],
    details: errors,
    problems: fixed.map((f) => ({ code: 'share_fixed', memberIndex: f.memberIndex, amountCents: f.paid })),
  });
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
    step: session.chargeStep,
  });
  if (!result.ok) return invalidGroup(result.errors, result.fixed);
  return result.amounts;
}

/** Refuses a group a pending member of which could not pay their share by card (below the minimum). */
const assertChargeable = (deps: Deps, session: Session, members: readonly Member[], prefix?: string) =>
  assertSharesChargeable(
    deps.processor.currencies,
    session,
    members.map((m) => ({ name: m.name, amountCents: m.amountCents, fixed: isFixed(m) })),
    prefix,
  );

/** Locks the session for a change, or says why it cannot change (its status, or that it expired). */
async function lockForChange(trx: Transaction<Database>, sessionId: string, now: number): Promise<Session> {
  const session = await lockOpenSession(trx, sessionId, now);
  if (session) return session;
  throw notOpen(await findSessionByIdUnscoped(trx, sessionId), now);
}

/**
 * Writes the group's new member list: members left out are deleted, new ones inserted, and those whose
 * place, name, email or share changed are updated. A member who paid in the meantime makes the whole
 * change fail (the transaction rolls back), though the session lock keeps payments out while it runs.
 */
async function saveMembers(trx: Transaction<Database>, existing: Member[], next: Member[], now: number) {
  const kept = new Set(next.map((m) => m.id));
  const removed = existing.filter((m) => !kept.has(m.id)).map((m) => m.id);
  const before = new Map(existing.map((m) => [m.id, m]));
  const changed = next.filter((m) => {
    const old = before.get(m.id);
    return old !== undefined && !isFixed(old) && !sameShare(old, m);
  });
  const conflict = new ServiceError('share_not_pending', {
    message: 'A member paid while the group was being changed; load the group again and retry.',
  });
  if ((await deletePendingMembers(trx, removed)) !== removed.length) throw conflict;
  await insertMembers(
    trx,
    next.filter((m) => !before.has(m.id)),
  );
  for (const m of changed) if (!(await updatePendingMember(trx, m, now))) throw conflict;
}

const sameShare = (a: Member, b: Member) =>
  a.position === b.position &&
  a.name === b.name &&
  a.email === b.email &&
  a.amountCents === b.amountCents &&
  a.basisPoints === b.basisPoints &&
  JSON.stringify(a.items) === JSON.stringify(b.items);

/**
 * Replaces the group with `members` under `mode`. Member 0 is the organizer. Members already in the
 * group are named by `id` and keep their share links; paid members must stay, with their amounts.
 */
export async function setUpGroup(
  deps: Deps,
  sessionId: string,
  mode: SplitMode,
  members: MemberInput[],
): Promise<{ session: Session; members: Member[] }> {
  const now = deps.clock.now();
  return deps.db.kysely.transaction().execute(async (trx) => {
    const session = await lockForChange(trx, sessionId, now);
    const cfg = session.groupConfig;
    const errors: string[] = [];
    if (!cfg.allowedModes.includes(mode))
      errors.push(`mode must be one of ${cfg.allowedModes.join(', ')} for this session, got "${mode}"`);
    if (members.length < cfg.minSize || members.length > cfg.maxSize) {
      errors.push(`the group must have from ${cfg.minSize} to ${cfg.maxSize} members, got ${members.length}`);
    }
    if (errors.length > 0) invalidGroup(errors);

    const existing = await listMembers(trx, session.id);
    const match = matchMembers(existing, members);
    if (!match.ok) return invalidGroup(match.errors);
    const { matched } = match;

    const locked = matched.map((m) => (m && isFixed(m) ? m.amountCents : null));
    const amounts = splitOrThrow(session, mode, members, locked);

    const next: Member[] = members.map((input, position) => {
      const previous = matched[position];
      if (previous && isFixed(previous)) return { ...previous, position };
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
        basisPoints: mode === 'percentage' ? (input.basisPoints ?? null) : null,
        items: mode === 'itemized' ? (input.items ?? null) : null,
        shareId: previous?.shareId ?? ids.share(),
        status: 'pending',
        // The first member, and a second share of the organizer's own (made by a cover) wherever it stands.
        isOrganizer: position === 0 || (previous?.isOrganizer ?? false),
        lastRemindedAt: previous?.lastRemindedAt ?? null,
        payingAttemptId: null,
        failure: null,
        createdAt: previous?.createdAt ?? now,
        updatedAt: now,
      };
    });
    assertChargeable(deps, session, next);
    await saveMembers(trx, existing, next, now);
    const setUpAt = session.groupSetUpAt ?? now;
    await updateGroupMode(trx, session.id, mode, setUpAt, now);
    return { session: { ...session, groupMode: mode, groupSetUpAt: setUpAt, updatedAt: now }, members: next };
  });
}

/** Adds a member to an equal group and re-splits the pending shares evenly. */
export interface JoinedGroup {
  session: Session;
  member: Member;
  members: Member[];
}

export async function joinGroup(
  deps: Deps,
  sessionId: string,
  input: { name: string; email?: string },
  answer?: AnswerSpec<JoinedGroup>,
): Promise<JoinedGroup> {
  const now = deps.clock.now();
  return deps.db.kysely.transaction().execute(async (trx) => {
    // The mode is read under the lock: the organizer may have changed it since the page was loaded,
    // and an equal re-split must not overwrite a custom set-up made in between.
    const session = await lockForChange(trx, sessionId, now);
    if (session.groupMode !== 'equal') {
      throw new ServiceError('group_not_joinable', {
        message: `Members can join only an equal split; this group is split by ${session.groupMode}.`,
      });
    }
    const existing = await listMembers(trx, session.id);
    if (existing.length >= session.groupConfig.maxSize) {
      throw new ServiceError('group_full', {
        message: `The group is full: it has its ${session.groupConfig.maxSize} members.`,
      });
    }
    const member = newMember(
      session,
      { position: existing.length, name: input.name, email: input.email ?? null, amountCents: 0 },
      now,
    );
    const all = [...existing, member];
    const amounts = splitOrThrow(
      session,
      'equal',
      all.map((m) => ({ name: m.name })),
      all.map((m) => (isFixed(m) ? m.amountCents : null)),
    );
    const next = all.map((m, position) =>
      isFixed(m) ? m : { ...m, amountCents: amounts[position] as number, updatedAt: now },
    );
    assertChargeable(deps, session, next, `${input.name} cannot join: `);
    await saveMembers(trx, existing, next, now);
    await updateGroupMode(trx, session.id, 'equal', session.groupSetUpAt ?? now, now);
    const joined = { session, member: next.at(-1) as Member, members: next };
    await recordAnswer(trx, answer, joined);
    return joined;
  });
}

/**
 * The organizer covers the rest (docs/api.md#split-modes): every other member's pending share is
 * removed and its amount added to the organizer's, or, if the organizer has paid already, to a new share
 * of theirs. Shares with a payment in flight stay. The group becomes custom: its amounts no longer follow
 * a split. Answers the group as it now is; unchanged when nobody else owes anything.
 */
export async function coverShares(
  deps: Deps,
  sessionId: string,
  answer?: AnswerSpec<{ session: Session; members: Member[] }>,
): Promise<{ session: Session; members: Member[] }> {
  const now = deps.clock.now();
  return deps.db.kysely.transaction().execute(async (trx) => {
    const session = await lockForChange(trx, sessionId, now);
    const existing = await listMembers(trx, session.id);
    // The organizer's own share that is still to pay takes the rest: their first, or one made by an
    // earlier cover. Only when every share of theirs is paid (or held) is a new one made.
    const open = existing.find((m) => m.isOrganizer && !isFixed(m));
    const organizer = existing.find((m) => m.isOrganizer) as Member;
    const covered = existing.filter((m) => !m.isOrganizer && !isFixed(m) && m.amountCents > 0);
    if (covered.length === 0) {
      const unchanged = { session, members: existing };
      await recordAnswer(trx, answer, unchanged);
      return unchanged;
    }
    const amount = covered.reduce((sum, m) => sum + m.amountCents, 0);
    const gone = new Set(covered.map((m) => m.id));
    const kept = existing.filter((m) => !gone.has(m.id));
    let next: Member[];
    if (open) {
      next = kept.map((m) =>
        m.id === open.id
          ? { ...m, amountCents: m.amountCents + amount, basisPoints: null, items: null, updatedAt: now }
          : m,
      );
    } else {
      // A second share of the organizer's own (docs/api.md#split-modes): theirs to pay on their page.
      next = [
        ...kept,
        {
          ...newMember(
            session,
            {
              position: Math.max(...existing.map((m) => m.position)) + 1,
              name: organizer.name,
              email: organizer.email,
              amountCents: amount,
            },
            now,
          ),
          isOrganizer: true,
        },
      ];
    }
    assertChargeable(deps, session, next);
    await saveMembers(trx, existing, next, now);
    await updateGroupMode(trx, session.id, 'custom', session.groupSetUpAt ?? now, now);
    const result = {
      session: {
        ...session,
        groupMode: 'custom' as const,
        groupSetUpAt: session.groupSetUpAt ?? now,
        updatedAt: now,
      },
      members: next,
    };
    await recordAnswer(trx, answer, result);
    return result;
  });
}
