// The card processor's currency rules (docs/api.md#currencies, docs/decisions.md#currencies): which
// currencies a card can be charged in, the smallest charge in each, the step amounts move in, and how an
// amount in ISO 4217 minor units becomes the integer Stripe's API takes and back. Stripe's rules, and the
// sandbox follows the same ones so that it rehearses production: both processors answer CARD_CURRENCIES.
//
// Every amount here is an integer; a conversion multiplies by a power of ten, or divides only where the
// division is exact, so no float ever touches an amount.
import { minorUnitExponent } from '../domain/currencies.ts';

/** What a processor can charge, as the flows ask it (processor.currencies). */
export interface CurrencyRules {
  /** Whether a card can be charged in `currency` (lowercase ISO 4217). */
  supports(currency: string): boolean;
  /**
   * The step charged amounts move in, in ISO minor units: every share, fee, charge, refund and transfer
   * in `currency` is a multiple of it (1 for most currencies; 10 for three-decimal ones; 100 for MGA).
   */
  chargeStep(currency: string): number;
  /** The smallest charge in `currency`, in ISO minor units. */
  minimumCharge(currency: string): number;
  /**
   * How many powers of ten Stripe's integer for an amount in `currency` sits above its ISO minor units
   * (ISK +2, MGA −2, most 0): what a page gives Stripe.js's card form, whose amount is Stripe's.
   */
  stripeAmountShift(currency: string): number;
}

/**
 * Stripe's zero-decimal currencies: its amount is whole units. UGX is on Stripe's list too, but its
 * "special cases" table says to send it as a two-decimal value ending in 00, like ISK, and Stripe refuses
 * a UGX amount not divisible by 100; so UGX is left out here (docs/decisions.md#currencies).
 */
const STRIPE_ZERO_DECIMAL: ReadonlySet<string> = new Set([
  'bif',
  'clp',
  'djf',
  'gnf',
  'jpy',
  'kmf',
  'krw',
  'mga',
  'pyg',
  'rwf',
  'vnd',
  'vuv',
  'xaf',
  'xof',
  'xpf',
]);

/** Three-decimal currencies: Stripe takes them in thousandths, the last digit always 0. */
const STRIPE_THREE_DECIMAL: ReadonlySet<string> = new Set(['bhd', 'jod', 'kwd', 'omr', 'tnd']);

/**
 * The currencies offered, each with its smallest charge in ISO minor units. A currency is offered only
 * with a minimum we can stand behind (docs/decisions.md#currencies):
 * - Stripe's published minimum where its table gives one worth about US$0.30 or more;
 * - elsewhere the smallest round amount (1, 2 or 5 times a power of ten) worth at least US$1.00, twice
 *   Stripe's "US$0.50 or equivalent", at 2025 exchange rates taken on the currency's weak side.
 * Currencies Stripe presents but we do not offer: those that lost more than half their value against the
 * dollar in the last five years or trade at split rates (afn, ars, bob, byn, egp, etb, htg, lak, lbp,
 * mmk, mwk, ngn, rub, sle, srd, try, yer), and std (ISO 4217's code is stn).
 */
// biome-ignore format: a table reads better packed
const MINIMUM_CHARGE: Readonly<Record<string, number>> = {
  // Stripe's published minimums.
  usd: 50, aed: 200, aud: 50, bgn: 100, brl: 50, cad: 50, chf: 50, czk: 1500, dkk: 250, eur: 50, gbp: 30,
  hkd: 400, huf: 17500, jpy: 50, mxn: 1000, myr: 200, nok: 300, nzd: 50, pln: 200, ron: 200, sek: 300,
  sgd: 50, thb: 1000,
  // At least US$1.00: two-decimal currencies.
  all: 10000, amd: 50000, ang: 200, aoa: 100000, awg: 200, azn: 200, bam: 200, bbd: 200, bdt: 20000,
  bmd: 100, bnd: 200, bsd: 100, bwp: 2000, bzd: 200, cdf: 500000, cny: 1000, cop: 500000, crc: 100000,
  cve: 20000, dop: 10000, dzd: 20000, fjd: 500, fkp: 100, gel: 500, gip: 100, gmd: 10000, gtq: 1000,
  gyd: 50000, hnl: 5000, idr: 2000000, ils: 500, inr: 10000, jmd: 20000, kes: 20000, kgs: 10000,
  khr: 500000, kyd: 100, kzt: 100000, lkr: 50000, lrd: 20000, lsl: 2000, mad: 2000, mdl: 2000,
  mga: 500000, mkd: 10000, mnt: 500000, mop: 1000, mur: 5000, mvr: 2000, mzn: 10000, nad: 2000, nio: 5000,
  npr: 20000, pab: 100, pen: 500, pgk: 500, php: 10000, pkr: 50000, qar: 500, rsd: 20000, sar: 500,
  sbd: 1000, scr: 2000, shp: 100, sos: 100000, szl: 2000, tjs: 2000, top: 500, ttd: 1000, twd: 5000,
  tzs: 500000, uah: 5000, uyu: 5000, uzs: 2000000, wst: 500, xcd: 500, xcg: 200, zar: 2000, zmw: 5000,
  // At least US$1.00: zero-decimal currencies (ISO minor unit = one whole unit).
  bif: 5000, clp: 1000, djf: 200, gnf: 10000, isk: 200, kmf: 500, krw: 2000, pyg: 10000, rwf: 2000,
  ugx: 5000, vnd: 50000, vuv: 200, xaf: 1000, xof: 1000, xpf: 200,
  // At least US$1.00: three-decimal currencies (a multiple of 10 thousandths).
  bhd: 500, jod: 1000, kwd: 500, omr: 500, tnd: 5000,
};

/** The digits of Stripe's amount in `currency`: 0 for its zero-decimal list, 3 for three-decimal, else 2. */
function stripeExponent(currency: string): number {
  if (STRIPE_ZERO_DECIMAL.has(currency)) return 0;
  if (STRIPE_THREE_DECIMAL.has(currency)) return 3;
  return 2;
}

/** How many powers of ten Stripe's amount sits above the ISO one: ISK +2, MGA −2, most 0. */
const shiftOf = (currency: string) => stripeExponent(currency) - minorUnitExponent(currency);

function chargeStep(currency: string): number {
  const shift = shiftOf(currency);
  // MGA: Stripe counts whole ariary, so only multiples of 100 ISO units can be sent.
  if (shift < 0) return 10 ** -shift;
  // Three-decimal amounts must end in 0 at Stripe, which counts them as ISO does.
  if (STRIPE_THREE_DECIMAL.has(currency)) return 10;
  return 1;
}

/** Stripe's rules: the currencies it presents that we offer, their steps and their minimums. */
export const CARD_CURRENCIES: CurrencyRules = {
  supports: (currency) => Object.hasOwn(MINIMUM_CHARGE, currency),
  chargeStep: (currency) => {
    assertOffered(currency);
    return chargeStep(currency);
  },
  minimumCharge: (currency) => {
    assertOffered(currency);
    return MINIMUM_CHARGE[currency] as number;
  },
  stripeAmountShift: (currency) => {
    assertOffered(currency);
    return shiftOf(currency);
  },
};

function assertOffered(currency: string): void {
  if (!Object.hasOwn(MINIMUM_CHARGE, currency)) {
    throw new RangeError(`${JSON.stringify(currency)} is not a currency cards are charged in`);
  }
}

/**
 * The lowercase codes of every offered currency, in alphabetical order.
 * @internal Exported for the tests and the docs' check.
 */
export const OFFERED_CURRENCIES: readonly string[] = Object.freeze(Object.keys(MINIMUM_CHARGE).sort());

/**
 * Stripe's integer for an amount in ISO minor units: ¥1,500 → 1500, ISK 1,500 → 150000 (Stripe counts
 * ISK in hundredths that are always 00), MGA 1,500.00 → 1500 (whole ariary), KWD 1.230 → 1230.
 * Throws a RangeError for an amount Stripe cannot take exactly (not a multiple of the currency's step).
 */
export function toStripeAmount(currency: string, amount: number): number {
  if (!Number.isSafeInteger(amount) || amount < 0) {
    throw new RangeError(`an amount must be a non-negative integer, got ${amount}`);
  }
  const step = chargeStep(currency);
  if (amount % step !== 0) {
    throw new RangeError(
      `${amount} is not a multiple of ${step}, the step Stripe charges ${currency.toUpperCase()} in`,
    );
  }
  const shift = shiftOf(currency);
  return shift >= 0 ? amount * 10 ** shift : amount / 10 ** -shift;
}

/**
 * The amount in ISO minor units for Stripe's integer, the inverse of toStripeAmount. Throws a RangeError
 * for a Stripe amount with digits ISO cannot hold (an ISK amount not ending in 00).
 */
export function fromStripeAmount(currency: string, amount: number): number {
  if (!Number.isSafeInteger(amount) || amount < 0) {
    throw new RangeError(`Stripe's amount must be a non-negative integer, got ${amount}`);
  }
  const shift = shiftOf(currency);
  if (shift <= 0) return amount * 10 ** -shift;
  const scale = 10 ** shift;
  if (amount % scale !== 0) {
    throw new RangeError(`Stripe's ${currency.toUpperCase()} amount ${amount} is not a multiple of ${scale}`);
  }
  return amount / scale;
}
