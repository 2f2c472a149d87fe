// How the dashboard writes amounts and times: amounts in the currency's minor-unit exponent with its
// code (never a float), times in UTC to the minute.
import { formatMinorUnits } from '../domain/currencies.ts';

export const money = (cents: number, currency: string): string =>
  `${formatMinorUnits(cents, currency)} ${currency.toUpperCase()}`;

export const when = (ms: number | null | undefined): string =>
  ms === null || ms === undefined ? '—' : `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

export const whenSeconds = (ms: number): string =>
  `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
