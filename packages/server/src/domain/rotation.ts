// Rolling a merchant's credentials (docs/operations.md#keys): the cart signing secret, the session webhook
// secret and the publishable key are replaced at once, and the one replaced keeps working for a grace
// period, so that a merchant can deploy the new one without a moment in which nothing works. The secret
// key has no grace period: it is rolled when it may have leaked.

/** How long a rolled credential keeps working: 24 hours (docs/decisions.md#rotation-grace-period). */
export const ROTATION_GRACE_MS = 24 * 60 * 60 * 1000;

/** A credential replaced by a roll, and the moment it stops working. */
export interface PreviousSecret {
  secret: string;
  expiresAt: number;
}

/**
 * The secrets in force at `now`: the current one, then the previous one until its grace period ends
 * (at `expiresAt` exactly, it no longer is). Carts are verified, and webhooks will be signed, with each.
 */
export function secretsInForce(current: string, previous: PreviousSecret | null, now: number): string[] {
  return previous && now < previous.expiresAt ? [current, previous.secret] : [current];
}
