// Session and member states of docs/api.md#statuses-and-transitions. Only a pending session takes payments or changes; the
// other three states are final.

/** @internal Exported for its tests. */
export const SESSION_STATUSES = ['pending', 'funded', 'cancelled', 'expired'] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

/** Cancelled or expired: a session that ended without its order, whose money goes back. */
export const isClosed = (status: SessionStatus): status is 'cancelled' | 'expired' =>
  status === 'cancelled' || status === 'expired';

/** @internal Exported for its tests. */
export const MEMBER_STATUSES = [
  'pending',
  'authenticating',
  'authorized',
  'paid',
  'refunded',
  'released',
] as const;
export type MemberStatus = (typeof MEMBER_STATUSES)[number];

const SESSION_TRANSITIONS: Readonly<Record<SessionStatus, readonly SessionStatus[]>> = {
  pending: ['funded', 'cancelled', 'expired'],
  funded: [],
  cancelled: [],
  expired: [],
};

// A share is paid once and refunded at most once (on cancel or expiry). Under on_funded a share is first
// authorized (a hold), then captured (paid) or released; a capture that fails puts it back to pending. A
// payment the card's bank wants to authenticate (3-D Secure) leaves the share authenticating until the
// payer completes it (paid, or authorized), fails it or abandons it (pending). A refund the processor took
// and later reported failed puts a refunded share back to paid: the money is with us again.
const MEMBER_TRANSITIONS: Readonly<Record<MemberStatus, readonly MemberStatus[]>> = {
  pending: ['authenticating', 'authorized', 'paid'],
  authenticating: ['authorized', 'paid', 'pending'],
  authorized: ['paid', 'released', 'pending'],
  paid: ['refunded'],
  refunded: ['paid'],
  released: [],
};

/**
 * Thrown by assertTransition for a move the state machine does not have. Only a bug can reach it: every
 * store write that changes a status names the status it moves from in its WHERE clause (a conditional
 * update), so a race loses the update instead of reaching this. It is answered as a 500, as bugs are.
 * @internal Exported for its tests.
 */
export class InvalidTransitionError extends Error {
  readonly from: SessionStatus;
  readonly to: SessionStatus;

  constructor(from: SessionStatus, to: SessionStatus) {
    super(`a ${from} session cannot become ${to}; only a pending session can change`);
    this.name = 'InvalidTransitionError';
    this.from = from;
    this.to = to;
  }
}

/**
 * Whether the session may go from `from` to `to`: pending → funded, cancelled or expired, nothing else.
 * @internal Exported for its tests.
 */
export function canTransition(from: SessionStatus, to: SessionStatus): boolean {
  return SESSION_TRANSITIONS[from]?.includes(to) ?? false;
}

export function assertTransition(from: SessionStatus, to: SessionStatus): void {
  if (!canTransition(from, to)) throw new InvalidTransitionError(from, to);
}

/**
 * Whether a member's share may go from `from` to `to`: pending → paid → refunded; under on_funded
 * pending → authorized → paid or released, and authorized → pending when the capture fails; pending →
 * authenticating → paid, authorized or pending; refunded → paid when a taken refund fails.
 * @internal Exported for its tests.
 */
export function canMemberTransition(from: MemberStatus, to: MemberStatus): boolean {
  return MEMBER_TRANSITIONS[from]?.includes(to) ?? false;
}

/** Throws for a member move the state machine does not have; like assertTransition, only a bug reaches it. */
export function assertMemberTransition(from: MemberStatus, to: MemberStatus): void {
  if (!canMemberTransition(from, to)) throw new Error(`a ${from} share cannot become ${to}`);
}
