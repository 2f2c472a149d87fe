// What a payer types into the sandbox card form, read the way people type it.

/**
 * An expiry as people write it: `12/30`, `12 / 2030`, `12-30`, `1230`, `122030`, `1/30`, `130`. Answers
 * the month and the four-digit year, or undefined when it is not a month and a year.
 */
export function parseExpiry(text: string): { month: number; year: number } | undefined {
  const trimmed = text.trim();
  const separated = /^(\d{1,2})\s*[/\-.\s]\s*(\d{2}|\d{4})$/.exec(trimmed);
  // Digits alone: the year is the last two (or four when six are typed), the month what comes before.
  const digits = /^\d{3,6}$/.test(trimmed) && trimmed.length !== 5 ? trimmed : undefined;
  const [monthText, yearText] = separated
    ? [separated[1], separated[2]]
    : digits
      ? digits.length === 6
        ? [digits.slice(0, 2), digits.slice(2)]
        : [digits.slice(0, -2), digits.slice(-2)]
      : [];
  if (monthText === undefined || yearText === undefined) return undefined;
  const month = Number(monthText);
  if (month < 1 || month > 12) return undefined;
  return { month, year: Number(yearText.length === 2 ? `20${yearText}` : yearText) };
}
