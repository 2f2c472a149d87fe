// Rules about a group's members that are pure logic: what counts as paid, and how the members an
// organizer sends in a group set-up are matched to the members the group already has.
import type { MemberStatus } from './session-state.ts';

/** A member as these rules see it. */
export interface MemberFacts {
  id: string;
  name: string;
  amountCents: number;
  status: MemberStatus;
  isOrganizer: boolean;
  /** Set while a payment of the share is in flight: the share must stay as it is. */
  payingAttemptId?: string | null;
}

/** Whether a member's share counts as paid: money was taken or is held (docs/api.md#capture-modes). */
const countsAsPaid = (status: MemberStatus): boolean => status === 'paid' || status === 'authorized';

/** Sum of the shares that count as paid; the session's pending amount is the total minus this. */
export const paidAmountOf = (members: readonly Pick<MemberFacts, 'amountCents' | 'status'>[]): number =>
  members.reduce((sum, m) => sum + (countsAsPaid(m.status) ? m.amountCents : 0), 0);

/** How far a group is, as a share's page shows it without naming the others (docs/api.md#pay-page-api). */
export interface GroupProgress {
  size: number;
  /** Members whose share counts as paid (paid, or authorized under on_funded). */
  paidCount: number;
  /** Sum of the shares that count as paid (paidAmountOf). */
  paidCents: number;
}

export const progressOf = (
  members: readonly Pick<MemberFacts, 'amountCents' | 'status'>[],
): GroupProgress => ({
  size: members.length,
  paidCount: members.filter((m) => countsAsPaid(m.status)).length,
  paidCents: paidAmountOf(members),
});

/**
 * Matches the members of a group set-up to the group's current members. Member 0 is the organizer
 * (matched to the current organizer when it names no id); others are matched by `id` when they give
 * one, and are new otherwise. Every current member who has paid must be named again, and nobody twice.
 * Answers, per position, the current member it stands for (or undefined for a new one), or every
 * rule broken, one sentence each naming the member as the organizer sent it.
 */
export function matchMembers<M extends MemberFacts>(
  existing: readonly M[],
  requested: readonly { id?: string }[],
): { ok: true; matched: (M | undefined)[] } | { ok: false; errors: string[] } {
  const errors: string[] = [];
  const byId = new Map(existing.map((m) => [m.id, m]));
  // The organizer is the first member marked so; a later one is a share the organizer took on by covering
  // the rest after paying their own, and may stand anywhere after them.
  const organizer = existing.find((m) => m.isOrganizer);
  const matched = requested.map((input, index) => {
    const id = input.id ?? (index === 0 ? organizer?.id : undefined);
    if (id === undefined) return undefined;
    const found = byId.get(id);
    if (!found) errors.push(`members[${index}].id ${id} is not a member of this group`);
    else if ((found.id === organizer?.id) !== (index === 0)) {
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
    if (seen.has(m.id)) continue;
    // A member whose bank is asking them to confirm the payment (3-D Secure) is still paying.
    if (m.payingAttemptId)
      errors.push(
        `${m.name} is paying right now${m.status === 'authenticating' ? ' (confirming it with their bank)' : ''} and must stay in the group (id ${m.id})`,
      );
    else if (m.status !== 'pending')
      errors.push(`${m.name} has paid and must stay in the group (id ${m.id})`);
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, matched };
}
