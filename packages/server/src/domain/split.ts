// The five split modes of docs/api.md#statuses-and-transitions: integer shares that always add up to the cart total exactly.
// Proportions are computed in BigInt by the largest remainder method, so no float touches an amount.
import { allocateByLargestRemainder, isMinorUnits, splitEvenly } from './money.ts';

export const SPLIT_MODES = ['equal', 'itemized', 'custom', 'percentage', 'host-pays'] as const;
export type SplitMode = (typeof SPLIT_MODES)[number];

/** Percentages are basis points: 10,000 is the whole total. */
export const BASIS_POINTS_TOTAL = 10_000;

/** `quantity` units of the cart item at `itemIndex` (its position in cart.items), taken by one member. */
interface ItemAssignment {
  itemIndex: number;
  quantity: number;
}

/**
 * One member as the organizer sets them up; member 0 is the organizer. Each mode reads its own field:
 * custom and host-pays `amountCents`, percentage `basisPoints`, itemized `items`; the others are ignored.
 */
export interface MemberSpec {
  name: string;
  amountCents?: number;
  basisPoints?: number;
  items?: ItemAssignment[];
}

/** @internal Exported for its tests. */
export interface SplitItem {
  quantity: number;
  unitPrice: number;
}

export interface SplitInput {
  mode: SplitMode;
  /** The cart total in minor units. */
  total: number;
  /** The cart items in cart order; used by itemized. */
  items: readonly SplitItem[];
  /** tax + shipping + sum(fees.amount); used by itemized. */
  extras: number;
  members: readonly MemberSpec[];
  /** Per member, the amount already paid, or null while the share is pending; absent means none paid. */
  locked?: readonly (number | null)[];
  /**
   * The step a card can be charged in, in minor units (the session's chargeStep; absent: 1). Every pending
   * share comes out a multiple of it, and given amounts must be; the total must be one.
   */
  step?: number;
}

export type SplitResult =
  | { ok: true; amounts: number[] }
  | { ok: false; errors: string[]; fixed?: FixedShare[] };

/** A paid member whose amount the set-up tried to change: their place and what they paid. */
interface FixedShare {
  memberIndex: number;
  paid: number;
}

export function isSplitMode(value: unknown): value is SplitMode {
  return typeof value === 'string' && (SPLIT_MODES as readonly string[]).includes(value);
}

/**
 * Every member's share, in member order, or every reason the set-up is refused. Messages use the wire
 * names (`members[1].amount_cents`, `items[0]`) since they reach the organizer as they are.
 *
 * Paid shares never change (docs/api.md#statuses-and-transitions). A member is paid when `locked[i]` is a number; that number is
 * their share, whatever the mode. The rest of the total (total − the paid amounts) goes to the pending
 * members, by the mode's rule applied to them alone:
 * - equal: the rest split evenly over the pending members in member order, leftover cents to the first
 *   of them. With nobody paid this is floor(total / n) each, the leftover to the first members.
 * - percentage: basis points must still add up to 10,000 over all members; the rest is divided among
 *   the pending members in proportion to their basis points, by largest remainder.
 * - itemized: every unit is assigned as usual; a pending member pays their items plus a part of what
 *   is left of the rest after all pending members' items, spread in proportion to their item subtotals
 *   (evenly when those are all 0). A paid member whose items now cost more than they paid is refused.
 * - custom and host-pays: a paid member's amount_cents may be left out or repeated, never changed; the
 *   organizer's rest in host-pays must equal what they paid, if they paid.
 * Whenever the rest cannot be divided so (it is negative, or nobody pending may take it), the set-up is
 * refused rather than any paid amount touched.
 *
 * With a step above 1 (a currency charged in tens of minor units, say) every rule above works in steps
 * instead of minor units: equal and percentage divide the rest's steps, itemized rounds each pending
 * share to the step by largest remainder (so a share may differ from its items and part of the extras
 * by less than one step), and custom and host-pays refuse a given amount that is not a multiple of it.
 */
export function splitTotal(input: SplitInput): SplitResult {
  const errors = checkCommonInput(input);
  if (errors.length > 0) return { ok: false, errors };
  const { total, members } = input;
  const locked = input.locked ?? members.map(() => null);
  const paidSum = locked.reduce<number>((sum, amount) => sum + (amount ?? 0), 0);
  if (paidSum > total) {
    return fail(`the paid shares add up to ${paidSum}, more than the total ${total}`);
  }
  const step = input.step ?? 1;
  const share: Share = { total, locked, pending: pendingIndexes(locked), rest: total - paidSum, step };

  let result: SplitResult;
  switch (input.mode) {
    case 'equal':
      result = splitEqual(share);
      break;
    case 'percentage':
      result = splitByPercentage(share, members);
      break;
    case 'itemized':
      result = splitByItems(share, members, input.items, input.extras);
      break;
    case 'custom':
      result = splitCustom(share, members);
      break;
    case 'host-pays':
      result = splitHostPays(share, members);
      break;
  }
  if (result.ok) assertAddsUp(result.amounts, share);
  return result;
}

/** What every mode starts from: the paid amounts, who is still pending, and the rest they share. */
interface Share {
  total: number;
  locked: readonly (number | null)[];
  pending: number[];
  rest: number;
  /** Every pending share is a multiple of it. */
  step: number;
}

function checkCommonInput(input: SplitInput): string[] {
  const errors: string[] = [];
  if (!isSplitMode(input.mode)) {
    errors.push(`mode must be one of ${SPLIT_MODES.join(', ')}, got ${JSON.stringify(input.mode)}`);
  }
  if (!isMinorUnits(input.total)) errors.push(`total must be a non-negative integer, got ${input.total}`);
  const step = input.step ?? 1;
  if (!Number.isSafeInteger(step) || step < 1) errors.push(`step must be a positive integer, got ${step}`);
  else if (isMinorUnits(input.total) && input.total % step !== 0) {
    errors.push(`total ${input.total} is not a multiple of ${step}, the step this currency is charged in`);
  }
  if (!Array.isArray(input.members) || input.members.length < 1) {
    errors.push('a group needs at least 1 member');
    return errors;
  }
  if (input.locked !== undefined) {
    if (input.locked.length !== input.members.length) {
      errors.push(`locked has ${input.locked.length} entries but there are ${input.members.length} members`);
    } else {
      for (const [index, amount] of input.locked.entries()) {
        if (amount !== null && !isMinorUnits(amount)) {
          errors.push(`locked[${index}] must be null or a non-negative integer, got ${amount}`);
        }
      }
    }
  }
  return errors;
}

function splitEqual(share: Share): SplitResult {
  if (share.pending.length === 0) return everyonePaid(share);
  if (share.rest % share.step !== 0) return restNotInSteps(share);
  const parts = splitEvenly(share.rest / share.step, share.pending.length).map((n) => n * share.step);
  return { ok: true, amounts: withPending(share, parts) };
}

function splitByPercentage(share: Share, members: readonly MemberSpec[]): SplitResult {
  const errors: string[] = [];
  let sum = 0;
  for (const [index, member] of members.entries()) {
    const points = member.basisPoints;
    if (points === undefined) errors.push(`members[${index}].basis_points is required in percentage mode`);
    else if (!Number.isInteger(points) || points < 0 || points > BASIS_POINTS_TOTAL) {
      errors.push(
        `members[${index}].basis_points must be an integer from 0 to ${BASIS_POINTS_TOTAL}, got ${points}`,
      );
    } else sum += points;
  }
  if (errors.length === 0 && sum !== BASIS_POINTS_TOTAL) {
    errors.push(`the basis points add up to ${sum} but must add up to ${BASIS_POINTS_TOTAL}`);
  }
  if (errors.length > 0) return { ok: false, errors };
  if (share.pending.length === 0) return everyonePaid(share);
  const weights = share.pending.map((index) => members[index]!.basisPoints!);
  if (share.rest === 0) {
    return { ok: true, amounts: withPending(share, Array<number>(weights.length).fill(0)) };
  }
  if (weights.every((points) => points === 0)) {
    return fail(`${share.rest} is left to pay but the pending members have 0 basis points between them`);
  }
  if (share.rest % share.step !== 0) return restNotInSteps(share);
  const parts = allocateByLargestRemainder(share.rest / share.step, weights).map((n) => n * share.step);
  return { ok: true, amounts: withPending(share, parts) };
}

function splitByItems(
  share: Share,
  members: readonly MemberSpec[],
  items: readonly SplitItem[],
  extras: number,
): SplitResult {
  const errors = checkItems(items, extras, share.total);
  if (errors.length > 0) return { ok: false, errors };

  const assigned = items.map(() => 0);
  const subtotals = members.map(() => 0n);
  for (const [memberIndex, member] of members.entries()) {
    for (const [k, assignment] of (member.items ?? []).entries()) {
      const path = `members[${memberIndex}].items[${k}]`;
      const { itemIndex, quantity } = assignment;
      if (!Number.isInteger(itemIndex) || itemIndex < 0 || itemIndex >= items.length) {
        errors.push(
          `${path}.item_index must be an item index from 0 to ${items.length - 1}, got ${itemIndex}`,
        );
      } else if (!isMinorUnits(quantity)) {
        errors.push(`${path}.quantity must be a non-negative integer, got ${quantity}`);
      } else {
        assigned[itemIndex]! += quantity;
        subtotals[memberIndex]! += BigInt(quantity) * BigInt(items[itemIndex]!.unitPrice);
      }
    }
  }
  for (const [index, item] of items.entries()) {
    if (assigned[index] !== item.quantity) {
      errors.push(
        `items[${index}] has ${item.quantity} ${item.quantity === 1 ? 'unit' : 'units'} ` +
          `but ${assigned[index]} ${assigned[index] === 1 ? 'is' : 'are'} assigned`,
      );
    }
  }
  if (errors.length > 0) return { ok: false, errors };

  for (const [index, paid] of share.locked.entries()) {
    if (paid !== null && subtotals[index]! > BigInt(paid)) {
      errors.push(
        `members[${index}] has paid ${paid}, less than the ${subtotals[index]} of items assigned to them; ` +
          'a paid share cannot change',
      );
    }
  }
  if (errors.length > 0) return { ok: false, errors };
  if (share.pending.length === 0) return everyonePaid(share);

  const pendingSubtotals = share.pending.map((index) => subtotals[index]!);
  const itemsSum = pendingSubtotals.reduce((a, b) => a + b, 0n);
  const restOfExtras = BigInt(share.rest) - itemsSum;
  if (restOfExtras < 0n) {
    return fail(
      `the items assigned to pending members come to ${itemsSum}, more than the ${share.rest} left to pay`,
    );
  }
  if (share.rest % share.step !== 0) return restNotInSteps(share);
  const extraParts =
    itemsSum === 0n
      ? splitEvenly(Number(restOfExtras), share.pending.length)
      : allocateByLargestRemainder(Number(restOfExtras), pendingSubtotals);
  const exact = pendingSubtotals.map((subtotal, k) => Number(subtotal) + extraParts[k]!);
  return { ok: true, amounts: withPending(share, roundToSteps(exact, share.step)) };
}

/**
 * Amounts adding up to a multiple of `step`, moved to multiples of it with the same sum: each is rounded
 * down, and the steps left over go one each to the amounts that lost the most, ties to the earlier one.
 */
function roundToSteps(amounts: readonly number[], step: number): number[] {
  if (step === 1) return [...amounts];
  const parts = amounts.map((amount) => amount - (amount % step));
  const sum = amounts.reduce((a, b) => a + b, 0);
  let leftover = (sum - parts.reduce((a, b) => a + b, 0)) / step;
  const order = amounts
    .map((amount, index) => ({ remainder: amount % step, index }))
    .sort((a, b) => b.remainder - a.remainder || a.index - b.index);
  for (const { index } of order) {
    if (leftover === 0) break;
    parts[index]! += step;
    leftover -= 1;
  }
  return parts;
}

/** The rest cannot be cut into steps: a paid share (made before the step applied) is not a multiple of it. */
function restNotInSteps(share: Share): SplitResult {
  return fail(
    `the ${share.rest} left to pay is not a multiple of ${share.step}, the step this currency is charged in`,
  );
}

function checkItems(items: readonly SplitItem[], extras: number, total: number): string[] {
  const errors: string[] = [];
  if (!Array.isArray(items) || items.length === 0) return ['itemized mode needs the cart items'];
  let sum = 0n;
  for (const [index, item] of items.entries()) {
    if (!Number.isSafeInteger(item.quantity) || item.quantity < 1) {
      errors.push(`items[${index}].quantity must be an integer of at least 1, got ${item.quantity}`);
    } else if (!isMinorUnits(item.unitPrice)) {
      errors.push(`items[${index}].unit_price must be a non-negative integer, got ${item.unitPrice}`);
    } else sum += BigInt(item.quantity) * BigInt(item.unitPrice);
  }
  if (!isMinorUnits(extras)) errors.push(`extras must be a non-negative integer, got ${extras}`);
  else sum += BigInt(extras);
  if (errors.length === 0 && sum !== BigInt(total)) {
    errors.push(`the items, tax, shipping and fees add up to ${sum} but the total is ${total}`);
  }
  return errors;
}

function splitCustom(share: Share, members: readonly MemberSpec[]): SplitResult {
  const errors: string[] = [];
  const fixed: FixedShare[] = [];
  const given = members.map((member, index) =>
    givenAmount(member, index, share.locked[index] ?? null, share.step, errors, fixed),
  );
  if (errors.length > 0) return { ok: false, errors, fixed };
  const amounts = given as number[];
  const sum = amounts.reduce((a, b) => a + b, 0);
  if (sum !== share.total) return fail(`the amounts add up to ${sum} but the total is ${share.total}`);
  return { ok: true, amounts };
}

function splitHostPays(share: Share, members: readonly MemberSpec[]): SplitResult {
  const errors: string[] = [];
  const fixed: FixedShare[] = [];
  // The organizer's own amount_cents is not read: their share is whatever the others leave.
  const given = members
    .slice(1)
    .map((member, k) => givenAmount(member, k + 1, share.locked[k + 1] ?? null, share.step, errors, fixed));
  if (errors.length > 0) return { ok: false, errors, fixed };
  const others = given as number[];
  const othersSum = others.reduce((a, b) => a + b, 0);
  const organizer = share.total - othersSum;
  if (organizer < 0) {
    return fail(`the other members' amounts add up to ${othersSum}, more than the total ${share.total}`);
  }
  const organizerPaid = share.locked[0] ?? null;
  if (organizerPaid === null && organizer % share.step !== 0) {
    return fail(
      `the other members' amounts leave the organizer ${organizer}, not a multiple of ${share.step}, ` +
        'the step this currency is charged in',
    );
  }
  if (organizerPaid !== null && organizerPaid !== organizer) {
    return fail(
      `members[0] (the organizer) has paid ${organizerPaid}, ` +
        `but the other amounts would leave them ${organizer}; ` +
        'a paid share cannot change',
    );
  }
  return { ok: true, amounts: [organizer, ...others] };
}

/** The member's amount_cents for custom and host-pays; a paid member's may be left out but not changed. */
function givenAmount(
  member: MemberSpec,
  index: number,
  paid: number | null,
  step: number,
  errors: string[],
  fixed: FixedShare[],
): number | undefined {
  const amount = member.amountCents;
  if (paid !== null) {
    if (amount !== undefined && amount !== paid) {
      errors.push(`members[${index}] has paid ${paid}, so amount_cents must stay ${paid}, got ${amount}`);
      fixed.push({ memberIndex: index, paid });
    }
    return paid;
  }
  if (amount === undefined) {
    errors.push(`members[${index}].amount_cents is required`);
    return undefined;
  }
  if (!isMinorUnits(amount)) {
    errors.push(`members[${index}].amount_cents must be a non-negative integer, got ${amount}`);
    return undefined;
  }
  if (amount % step !== 0) {
    errors.push(
      `members[${index}].amount_cents (${member.name}) must be a multiple of ${step}, ` +
        `the step a card is charged in this currency; got ${amount}`,
    );
    return undefined;
  }
  return amount;
}

function pendingIndexes(locked: readonly (number | null)[]): number[] {
  return locked.flatMap((amount, index) => (amount === null ? [index] : []));
}

/** The paid amounts, with `parts` placed at the pending members in order. */
function withPending(share: Share, parts: readonly number[]): number[] {
  const amounts = share.locked.map((amount) => amount ?? 0);
  for (const [k, index] of share.pending.entries()) amounts[index] = parts[k]!;
  return amounts;
}

function everyonePaid(share: Share): SplitResult {
  if (share.rest !== 0) return fail(`every member has paid, but ${share.rest} of the total is not covered`);
  return { ok: true, amounts: share.locked.map((amount) => amount!) };
}

function fail(message: string): SplitResult {
  return { ok: false, errors: [message] };
}

/** A broken invariant here is a bug in this module, not a bad request: it must never reach a payer. */
function assertAddsUp(amounts: readonly number[], share: Share): void {
  const sum = amounts.reduce((a, b) => a + b, 0);
  const paidKept = share.locked.every((paid, index) => paid === null || amounts[index] === paid);
  const inSteps = share.pending.every((index) => amounts[index]! % share.step === 0);
  if (sum !== share.total || !paidKept || !inSteps || amounts.some((amount) => !isMinorUnits(amount))) {
    throw new Error(`split invariant broken: ${JSON.stringify({ amounts, total: share.total })}`);
  }
}
