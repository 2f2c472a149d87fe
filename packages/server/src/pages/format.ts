// Amounts and times as a person reads them, for the pages on the server and in the browser. Amounts are
// integer minor units: they are turned into an exact decimal string first and only then given to Intl,
// which formats decimal strings exactly, so no float ever touches an amount.
import { formatMinorUnits, minorUnitExponent } from '../domain/currencies.ts';

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

/** What is left before `expiresAt`, in words of the page's language: "2 days 3 hours", "45 Minuten", "3日 2時間". */
export function timeLeft(
  expiresAt: string,
  nowMs: number,
  locale: string,
  t: (key: 'progress.noTime' | 'progress.underAMinute') => string,
): string {
  const ms = Date.parse(expiresAt) - nowMs;
  if (ms <= 0) return t('progress.noTime');
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 1) return t('progress.underAMinute');
  const days = Math.floor(minutes / 1440);
  const hours = Math.floor((minutes % 1440) / 60);
  const mins = minutes % 60;
  const unit = (n: number, name: 'day' | 'hour' | 'minute') =>
    new Intl.NumberFormat(locale, { style: 'unit', unit: name, unitDisplay: 'long' }).format(n);
  if (days > 0) return hours > 0 ? `${unit(days, 'day')} ${unit(hours, 'hour')}` : unit(days, 'day');
  if (hours > 0) return mins > 0 ? `${unit(hours, 'hour')} ${unit(mins, 'minute')}` : unit(hours, 'hour');
  return unit(mins, 'minute');
}
