// Amounts as a person reads them, for the pages (server and browser) and the mail. Amounts are integer
// minor units: they are turned into an exact decimal string first and only then given to Intl, which
// formats decimal strings exactly, so no float ever touches an amount.
import { formatMinorUnits, minorUnitExponent } from './currencies.ts';

const formats = new Map<string, Intl.NumberFormat>();

/** 7300 usd in en-US → "$73.00"; 7300 jpy → "¥7,300"; 7300 eur in de → "73,00 €". */
export function formatMoney(amount: number, currency: string, locale: string): string {
  const key = `${locale}|${currency}`;
  let format = formats.get(key);
  if (!format) {
    const digits = minorUnitExponent(currency);
    format = new Intl.NumberFormat(locale, {
      style: 'currency',
      currency: currency.toUpperCase(),
      minimumFractionDigits: digits,
      maximumFractionDigits: digits,
    });
    formats.set(key, format);
  }
  return format.format(formatMinorUnits(amount, currency) as Intl.StringNumericLiteral);
}
