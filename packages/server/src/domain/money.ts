// Integer money: amounts are minor units (cents for usd) and rates are integer parts per million, so no
// float ever touches an amount. Products and proportions are computed in BigInt and rounded once.

/** The largest cart total (docs/api.md#cart-limits), in minor units. */
export const MAX_AMOUNT = 99_999_999;

/**
 * Rates are integers in parts per million: 0.0201 is 20_100, 0.01 is 10_000, 1 (100 %) is 1_000_000.
 * @internal Exported for its tests.
 */
export const PPM = 1_000_000;

const PPM_BIG = BigInt(PPM);

/** Whether `n` is a non-negative integer amount JavaScript holds exactly. */
export function isMinorUnits(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
}

/** Throws a RangeError unless `n` is a non-negative safe integer; `what` names it in the message. */
export function assertMinorUnits(n: unknown, what = 'amount'): asserts n is number {
  if (!isMinorUnits(n)) {
    throw new RangeError(`${what} must be a non-negative integer in minor units, got ${String(n)}`);
  }
}

/** Throws a RangeError unless `ppm` is an integer rate from 0 to 1,000,000 parts per million. */
function assertRatePpm(ppm: unknown, what = 'rate'): asserts ppm is number {
  if (typeof ppm !== 'number' || !Number.isInteger(ppm) || ppm < 0 || ppm > PPM) {
    throw new RangeError(`${what} must be an integer from 0 to ${PPM} parts per million, got ${String(ppm)}`);
  }
}

/**
 * numerator / denominator rounded half up (an exact half goes up), for a non-negative numerator and a
 * positive denominator. The result must be a safe integer, since it is an amount.
 * @internal Exported for its tests.
 */
export function roundHalfUpDiv(numerator: bigint | number, denominator: bigint | number): number {
  const n = toBigInt(numerator, 'numerator');
  const d = toBigInt(denominator, 'denominator');
  if (n < 0n) throw new RangeError(`roundHalfUpDiv needs a non-negative numerator, got ${n}`);
  if (d <= 0n) throw new RangeError(`roundHalfUpDiv needs a positive denominator, got ${d}`);
  // floor(n / d + 1/2) = floor((2n + d) / 2d), all in integers.
  return toSafeNumber((2n * n + d) / (2n * d));
}

/** Throws a RangeError unless `step` is a positive integer: the step a currency's amounts move in. */
function assertStep(step: unknown): asserts step is number {
  if (typeof step !== 'number' || !Number.isSafeInteger(step) || step < 1) {
    throw new RangeError(`a step must be a positive integer, got ${String(step)}`);
  }
}

/**
 * round_half_up(amount × rate): the fee on an amount at a rate in parts per million, rounded half up to a
 * multiple of `step` (1: to the minor unit; 10 for a currency charged in tens of minor units), so that an
 * amount in steps plus its fee is still in steps.
 */
export function feeFor(amount: number, ratePpm: number, step = 1): number {
  assertMinorUnits(amount);
  assertRatePpm(ratePpm);
  assertStep(step);
  return roundHalfUpDiv(BigInt(amount) * BigInt(ratePpm), PPM_BIG * BigInt(step)) * step;
}

/**
 * The rate as the JSON number the API shows (20_100 → 0.0201). For the API edge only: the quotient of two
 * integers is the double nearest to the decimal, so it prints as exactly that decimal.
 */
export function formatRate(ppm: number): number {
  assertRatePpm(ppm);
  return ppm / PPM;
}

/**
 * A decimal rate as parts per million, read digit by digit so that no float rounding enters:
 * '0.0201' or 0.0201 → 20_100. At most six decimal places, from 0 to 1.
 * @internal Exported for its tests.
 */
export function parseRatePpm(rate: string | number): number {
  const text = typeof rate === 'number' ? String(rate) : rate.trim();
  const match = /^(\d+)(?:\.(\d{1,6}))?$/.exec(text);
  if (!match) {
    throw new RangeError(`a rate must be a decimal from 0 to 1 with at most 6 decimal places, got "${text}"`);
  }
  const ppm = Number(match[1]) * PPM + Number((match[2] ?? '').padEnd(6, '0'));
  assertRatePpm(ppm, `rate ${text}`);
  return ppm;
}

/**
 * The sum of amounts, exactly; throws if any is not minor units or the sum leaves the safe range.
 * @internal Exported for its tests.
 */
export function sumMinorUnits(amounts: readonly number[]): number {
  let sum = 0n;
  for (const [index, amount] of amounts.entries()) {
    assertMinorUnits(amount, `amounts[${index}]`);
    sum += BigInt(amount);
  }
  return toSafeNumber(sum);
}

/**
 * Splits `total` into n = weights.length integer parts proportional to the weights, by the largest
 * remainder method: each part gets floor(total × w / W); the cents left over go one each to the parts
 * with the largest remainders, ties to the earlier part. A part with weight 0 always gets 0.
 * Throws if the weights sum to 0 (the caller decides what "no weight" means).
 */
export function allocateByLargestRemainder(total: number, weights: readonly (number | bigint)[]): number[] {
  assertMinorUnits(total, 'total');
  const w = weights.map((weight, index) => {
    const big = toBigInt(weight, `weights[${index}]`);
    if (big < 0n) throw new RangeError(`weights[${index}] must not be negative, got ${big}`);
    return big;
  });
  const weightSum = w.reduce((a, b) => a + b, 0n);
  if (weightSum === 0n) throw new RangeError('allocateByLargestRemainder needs at least one positive weight');
  const totalBig = BigInt(total);
  const parts = w.map((weight) => (totalBig * weight) / weightSum);
  const remainders = w.map((weight) => (totalBig * weight) % weightSum);
  let leftover = totalBig - parts.reduce((a, b) => a + b, 0n);
  // Largest remainder first; equal remainders keep index order, so the earlier part wins the tie.
  const order = remainders
    .map((remainder, index) => ({ remainder, index }))
    .sort((a, b) => (a.remainder === b.remainder ? a.index - b.index : a.remainder > b.remainder ? -1 : 1));
  for (const { index } of order) {
    if (leftover === 0n) break;
    parts[index]! += 1n;
    leftover -= 1n;
  }
  return parts.map(toSafeNumber);
}

/** floor(total / n) each; the leftover cents go one each to the first parts. */
export function splitEvenly(total: number, n: number): number[] {
  assertMinorUnits(total, 'total');
  if (!Number.isSafeInteger(n) || n < 1)
    throw new RangeError(`splitEvenly needs at least one part, got ${n}`);
  const leftover = total % n;
  // Exact: total − leftover is a multiple of n, so the division has no fraction to round.
  const base = (total - leftover) / n;
  return Array.from({ length: n }, (_, index) => base + (index < leftover ? 1 : 0));
}

function toBigInt(value: bigint | number, what: string): bigint {
  if (typeof value === 'bigint') return value;
  if (!Number.isSafeInteger(value)) throw new RangeError(`${what} must be a safe integer, got ${value}`);
  return BigInt(value);
}

function toSafeNumber(value: bigint): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) {
    throw new RangeError(`${value} is outside the range of exact integers`);
  }
  return Number(value);
}
