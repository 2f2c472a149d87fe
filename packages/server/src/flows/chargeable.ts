// What the configured processor can charge (docs/api.md#currencies), asked where a session is made and
// where its group is set up, so that no session is made in a currency no card can pay and no share is set
// that no card could pay: the checks behind currency_not_supported and the refusals naming a member.
import { formatMinorUnits } from '../domain/currencies.ts';
import { chargeAmount } from '../domain/fees.ts';
import { type Problem, ServiceError } from '../errors.ts';
import type { CurrencyRules } from '../processor/currencies.ts';

/** An amount as a person reads it in a message: (1230, 'kwd') → '1.230 KWD'. */
const inWords = (amount: number, currency: string): string =>
  `${formatMinorUnits(amount, currency)} ${currency.toUpperCase()}`;

/**
 * The step a new session in `cart.currency` is charged in. Refuses a currency the processor cannot charge
 * (currency_not_supported), a total not in that step, and a total that even paid by one person is below the
 * smallest card payment (invalid_cart): no group could ever be funded.
 */
export function chargeStepOf(
  rules: CurrencyRules,
  cart: { total: number; currency: string },
  consumerFeePpm: number,
): number {
  const { total, currency } = cart;
  const code = currency.toUpperCase();
  if (!rules.supports(currency)) {
    throw new ServiceError('currency_not_supported', {
      message: `Cards cannot be charged in ${code} here: price the cart in a currency the payment processor takes (docs/api.md#currencies).`,
    });
  }
  const step = rules.chargeStep(currency);
  if (total % step !== 0) {
    const message =
      `cart.total ${inWords(total, currency)} is not a whole number of ${inWords(step, currency)}: ` +
      `cards are charged in ${code} in steps of ${inWords(step, currency)}, so every share must be one`;
    throw new ServiceError('invalid_cart', { message, details: [message] });
  }
  const minimum = rules.minimumCharge(currency);
  if (chargeAmount(total, consumerFeePpm, step) < minimum) {
    const message = `cart.total ${inWords(total, currency)} is below the smallest card payment of ${inWords(minimum, currency)}`;
    throw new ServiceError('invalid_cart', { message, details: [message] });
  }
  return step;
}

/** A share as the set-up check reads it. */
interface ShareToCheck {
  name: string;
  amountCents: number;
  /** Paid, held or being paid: no longer set up, so not checked. */
  fixed: boolean;
}

/**
 * Refuses (invalid_group, one line per member) a group in which a pending share, with its consumer fee,
 * is below the smallest card payment in the session's currency. A share of 0 asks for no payment and
 * passes (host-pays). `prefix` says what was being done, for a join.
 */
export function assertSharesChargeable(
  rules: CurrencyRules,
  session: { currency: string; consumerFeePpm: number; chargeStep: number },
  shares: readonly ShareToCheck[],
  prefix = '',
): void {
  const { currency } = session;
  if (!rules.supports(currency)) return; // a session made before the rules: its payments fail at the processor
  const minimum = rules.minimumCharge(currency);
  const errors: string[] = [];
  const problems: Problem[] = [];
  for (const [memberIndex, share] of shares.entries()) {
    if (share.fixed || share.amountCents === 0) continue;
    const charge = chargeAmount(share.amountCents, session.consumerFeePpm, session.chargeStep);
    if (charge >= minimum) continue;
    const withFee =
      charge === share.amountCents ? '' : ` (${inWords(charge, currency)} with the service fee)`;
    errors.push(
      `${prefix}${share.name}'s share of ${inWords(share.amountCents, currency)}${withFee} is below ` +
        `the smallest card payment of ${inWords(minimum, currency)}`,
    );
    problems.push({ code: 'below_minimum', memberIndex, amountCents: charge, minimumCents: minimum });
  }
  if (errors.length > 0)
    throw new ServiceError('invalid_group', { message: errors[0], details: errors, problems });
}
