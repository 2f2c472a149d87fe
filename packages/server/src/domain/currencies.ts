// ISO 4217 currencies a cart can be priced in, lowercase, with the digits of their minor unit: the one table
// of minor units (docs/decisions.md#currencies says why it is ours, not a package's or Intl's). Amounts are
// always integers in the minor unit; the exponent places the decimal point for people, and tells the card
// processor's rules (processor/currencies.ts) how an amount becomes the processor's own integer.

// From ISO 4217 list one: the currencies, without fund codes (bov, che, chw, clf, cou, mxv, usn, uyi,
// uyw), precious metals and units of account (xau, xdr, xts, …), which no shopper pays in. Codes in
// their withdrawal period (ang → xcg, cuc, sll → sle, zwl → zwg) stay until it ends, so a merchant
// still pricing in them is not refused; hrk ended in 2023 and is gone.
// biome-ignore format: a table reads better packed than one code per line
const CODES_BY_EXPONENT: Readonly<Record<0 | 2 | 3, readonly string[]>> = {
  0: [
    'bif', 'clp', 'djf', 'gnf', 'isk', 'jpy', 'kmf', 'krw', 'pyg', 'rwf', 'ugx', 'vnd', 'vuv', 'xaf', 'xof',
    'xpf',
  ],
  2: [
    'aed', 'afn', 'all', 'amd', 'ang', 'aoa', 'ars', 'aud', 'awg', 'azn', 'bam', 'bbd', 'bdt', 'bgn', 'bmd',
    'bnd', 'bob', 'brl', 'bsd', 'btn', 'bwp', 'byn', 'bzd', 'cad', 'cdf', 'chf', 'cny', 'cop', 'crc', 'cuc',
    'cup', 'cve', 'czk', 'dkk', 'dop', 'dzd', 'egp', 'ern', 'etb', 'eur', 'fjd', 'fkp', 'gbp', 'gel', 'ghs',
    'gip', 'gmd', 'gtq', 'gyd', 'hkd', 'hnl', 'htg', 'huf', 'idr', 'ils', 'inr', 'irr', 'jmd', 'kes', 'kgs',
    'khr', 'kpw', 'kyd', 'kzt', 'lak', 'lbp', 'lkr', 'lrd', 'lsl', 'mad', 'mdl', 'mga', 'mkd', 'mmk', 'mnt',
    'mop', 'mru', 'mur', 'mvr', 'mwk', 'mxn', 'myr', 'mzn', 'nad', 'ngn', 'nio', 'nok', 'npr', 'nzd', 'pab',
    'pen', 'pgk', 'php', 'pkr', 'pln', 'qar', 'ron', 'rsd', 'rub', 'sar', 'sbd', 'scr', 'sdg', 'sek', 'sgd',
    'shp', 'sle', 'sll', 'sos', 'srd', 'ssp', 'stn', 'svc', 'syp', 'szl', 'thb', 'tjs', 'tmt', 'top', 'try',
    'ttd', 'twd', 'tzs', 'uah', 'usd', 'uyu', 'uzs', 'ved', 'ves', 'wst', 'xcd', 'xcg', 'yer', 'zar', 'zmw',
    'zwg', 'zwl',
  ],
  3: ['bhd', 'iqd', 'jod', 'kwd', 'lyd', 'omr', 'tnd'],
};

const EXPONENTS: ReadonlyMap<string, number> = new Map(
  Object.entries(CODES_BY_EXPONENT).flatMap(([exponent, codes]) =>
    codes.map((code) => [code, Number(exponent)] as const),
  ),
);

/**
 * Every accepted currency code, lowercase, in alphabetical order.
 * @internal Exported for its tests.
 */
export const CURRENCY_CODES: readonly string[] = Object.freeze([...EXPONENTS.keys()].sort());

/** Whether `code` is an accepted ISO 4217 code written in lowercase ('usd' yes; 'USD' and 'xyz' no). */
export function isCurrencyCode(code: unknown): code is string {
  return typeof code === 'string' && EXPONENTS.has(code);
}

/** Digits after the decimal point of the currency's minor unit: jpy 0, usd 2, kwd 3. */
export function minorUnitExponent(code: string): number {
  const exponent = EXPONENTS.get(code);
  if (exponent === undefined) throw new RangeError(`${JSON.stringify(code)} is not a known currency code`);
  return exponent;
}

/** An amount in minor units as a plain decimal string for display: (123456, 'usd') → '1234.56'. */
export function formatMinorUnits(amount: number, code: string): string {
  if (!Number.isSafeInteger(amount)) throw new RangeError(`amount must be an integer, got ${amount}`);
  const exponent = minorUnitExponent(code);
  const sign = amount < 0 ? '-' : '';
  const digits = String(Math.abs(amount)).padStart(exponent + 1, '0');
  if (exponent === 0) return sign + digits;
  return `${sign}${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`;
}
