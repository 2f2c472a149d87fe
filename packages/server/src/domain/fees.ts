// Fees of docs/api.md#statuses-and-transitions on integer minor units, rates in parts per million (see money.ts): the payer's
// consumer fee on each share, and the merchant and FX fees taken from the transfer.
import { assertMinorUnits, feeFor } from './money.ts';

/** Defaults in parts per million: 0.0201, 0.01 per share, and 0.01 for FX. */
export const DEFAULT_MERCHANT_FEE_PPM = 20_100;
export const DEFAULT_CONSUMER_FEE_PPM = 10_000;
export const DEFAULT_FX_FEE_PPM = 10_000;

/** 'checkout' pays out in the checkout currency; 'preferred' names a payout currency (docs/api.md#merchant-profile). */
type PayoutMode = 'checkout' | 'preferred';

/**
 * round_half_up(share × consumer_fee_rate), to a multiple of the currency's charge step (the session's
 * chargeStep; 1 charges to the minor unit): what a payer pays on top of their share.
 */
export function consumerFee(shareCents: number, ratePpm: number, step = 1): number {
  return feeFor(shareCents, ratePpm, step);
}

/** What a payer is charged: share + the consumer fee. */
export function chargeAmount(shareCents: number, ratePpm: number, step = 1): number {
  return shareCents + consumerFee(shareCents, ratePpm, step);
}

interface MerchantFeesInput {
  total: number;
  merchantFeePpm: number;
  /** Defaults to DEFAULT_FX_FEE_PPM. */
  fxFeePpm?: number;
  payoutMode: PayoutMode;
  /** The preferred payout currency, lowercase; null when none is set. */
  payoutCurrency: string | null;
  checkoutCurrency: string;
  /** The step the checkout currency is charged in; each fee rounds to it, so the transfer can be sent. */
  step?: number;
}

export interface MerchantFees {
  merchantFee: number;
  /** 0 unless payout mode is 'preferred' with a currency other than the checkout currency. */
  fxFee: number;
  /** total − merchantFee − fxFee, paid in the checkout currency when the session is funded. */
  transfer: number;
}

/**
 * The merchant's side of a funded session: round_half_up(total × merchant_fee_rate), the FX fee
 * round_half_up(total × fx_fee_rate) when it applies (each to the currency's step), and the transfer that
 * is left. Preferred mode
 * charges FX but does not change the currency of the transfer (docs/api.md#merchant-profile).
 * @internal Exported for its tests; the flows go through sessionFees.
 */
export function merchantFees(input: MerchantFeesInput): MerchantFees {
  assertMinorUnits(input.total, 'total');
  const step = input.step ?? 1;
  const merchantFee = feeFor(input.total, input.merchantFeePpm, step);
  const fxFee = fxApplies(input) ? feeFor(input.total, input.fxFeePpm ?? DEFAULT_FX_FEE_PPM, step) : 0;
  const transfer = input.total - merchantFee - fxFee;
  if (transfer < 0) {
    throw new RangeError(`the fees (${merchantFee} + ${fxFee}) are more than the total ${input.total}`);
  }
  return { merchantFee, fxFee, transfer };
}

function fxApplies(input: MerchantFeesInput): boolean {
  return (
    input.payoutMode === 'preferred' &&
    input.payoutCurrency !== null &&
    input.payoutCurrency.toLowerCase() !== input.checkoutCurrency.toLowerCase()
  );
}

/** A session's side of its fees: what it sells, at what merchant fee rate, in what steps. */
interface FeeSession {
  totalCents: number;
  merchantFeePpm: number;
  currency: string;
  chargeStep: number;
}

/** A merchant's payout settings (undefined: a merchant since removed pays out in the checkout currency). */
export interface FeeMerchant {
  fxFeePpm: number;
  payoutMode: PayoutMode;
  payoutCurrency: string | null;
}

/**
 * The merchant and FX fees of a session and its transfer: the one mapping from a session and its merchant
 * to merchantFees, used by the funding that books them and by reconcile that checks them.
 */
export function sessionFees(session: FeeSession, merchant: FeeMerchant | undefined): MerchantFees {
  return merchantFees({
    total: session.totalCents,
    merchantFeePpm: session.merchantFeePpm,
    fxFeePpm: merchant?.fxFeePpm,
    payoutMode: merchant?.payoutMode ?? 'checkout',
    payoutCurrency: merchant?.payoutCurrency ?? null,
    checkoutCurrency: session.currency,
    step: session.chargeStep,
  });
}
