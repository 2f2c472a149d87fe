// Times as a person reads them, for the pages on the server and in the browser; amounts are
// domain/money-format.ts's.
export { formatMoney } from '../domain/money-format.ts';

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
