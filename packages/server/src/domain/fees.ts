// Fees of docs/api.md#statuses-and-transitions on integer minor units, rates in parts per million (see money.ts): the payer's
// consumer fee on each share, and the merchant and FX fees taken from the transfer.
import { assertMinorUnits, feeFor } from './money.ts';

/** Defaults in parts per million: 0.0201, 0.01 per share, and 0.01 for FX. */
export const DEFAULT_MERCHANT_FEE_PPM = 20_100;
export const DEFAULT_CONSUMER_FEE_PPM = 10_000;
export const DEFAULT_FX_FEE_PPM = 10_000;

/** 'checkout' pays out in the checkout currency; 'preferred' names a payout currency (docs/api.md#merchant-profile). */
type PayoutMode = 'checkout' | 'preferred';

/** round_half_up(share × consumer_fee_rate): what a payer pays on top of their share. */
export function consumerFee(shareCents: number, ratePpm: number): number {
  return feeFor(shareCents, ratePpm);
}

/** What a payer is charged: share + round_half_up(share × consumer_fee_rate). */
export function chargeAmount(shareCents: number, ratePpm: number): number {
  return shareCents + consumerFee(shareCents, ratePpm);
}

export interface MerchantFeesInput {
  total: number;
  merchantFeePpm: number;
  /** Defaults to DEFAULT_FX_FEE_PPM. */
  fxFeePpm?: number;
  payoutMode: PayoutMode;
  /** The preferred payout currency, lowercase; null when none is set. */
  payoutCurrency: string | null;
  checkoutCurrency: string;
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
 * round_half_up(total × fx_fee_rate) when it applies, and the transfer that is left. Preferred mode
 * charges FX but does not change the currency of the transfer (docs/api.md#merchant-profile).
 */
export function merchantFees(input: MerchantFeesInput): MerchantFees {
  assertMinorUnits(input.total, 'total');
  const merchantFee = feeFor(input.total, input.merchantFeePpm);
  const fxFee = fxApplies(input) ? feeFor(input.total, input.fxFeePpm ?? DEFAULT_FX_FEE_PPM) : 0;
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
