// Card rules we check before any processor sees a card (docs/api.md#payments): the Luhn checksum, an
// expiry that has not passed, and the brand and last four digits, which are all we ever keep of a card.

/** Whether `digits` (digits only) passes the Luhn checksum. */
function passesLuhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** The card's brand from its leading digits; 'unknown' when none matches. */
export function cardBrand(digits: string): string {
  if (/^4/.test(digits)) return 'visa';
  if (/^(5[1-5]|2(2[2-9]|[3-6]\d|7[01]|720))/.test(digits)) return 'mastercard';
  if (/^3[47]/.test(digits)) return 'amex';
  if (/^(6011|65|64[4-9])/.test(digits)) return 'discover';
  if (/^35(2[89]|[3-8]\d)/.test(digits)) return 'jcb';
  if (/^3(0[0-5]|[68])/.test(digits)) return 'diners';
  if (/^62/.test(digits)) return 'unionpay';
  return 'unknown';
}

/** Brands as their owners write them; a processor's code is the lowercase key (Stripe's `card.brand`). */
const BRAND_NAMES: Readonly<Record<string, string>> = {
  visa: 'Visa',
  mastercard: 'Mastercard',
  amex: 'American Express',
  discover: 'Discover',
  jcb: 'JCB',
  diners: 'Diners Club',
  unionpay: 'UnionPay',
  cartes_bancaires: 'Cartes Bancaires',
  eftpos_au: 'eftpos',
  interac: 'Interac',
};

/**
 * A card brand as a payer reads it on a page or in a mail ('visa' → 'Visa', 'amex' → 'American
 * Express'); undefined when the processor did not say (or said 'unknown'), so the words say "card".
 */
export function brandName(brand: string | null | undefined): string | undefined {
  if (!brand || brand === 'unknown') return undefined;
  return Object.hasOwn(BRAND_NAMES, brand)
    ? BRAND_NAMES[brand]
    : brand.replace(/_/g, ' ').replace(/^\w/, (c) => c.toUpperCase());
}

export interface CardFields {
  number: string;
  expMonth: number;
  expYear: number;
  cvc: string;
}

/**
 * Every problem with a card as typed, one sentence each naming the field; [] when it may be sent. Spaces
 * and dashes in the number are allowed (people copy them); `now` decides whether the expiry has passed
 * (a card is good through the last day of its expiry month).
 */
export function checkCard(card: CardFields, now: Date): string[] {
  const errors: string[] = [];
  const digits = normalizeCardNumber(card.number);
  if (!/^\d{12,19}$/.test(digits)) errors.push('card.number must be 12 to 19 digits');
  else if (!passesLuhn(digits))
    errors.push('card.number is not a valid card number (it fails the Luhn check); check the digits');
  if (card.expMonth < 1 || card.expMonth > 12) errors.push('card.exp_month must be from 1 to 12');
  const year = card.expYear < 100 ? 2000 + card.expYear : card.expYear;
  const thisMonth = now.getUTCFullYear() * 12 + now.getUTCMonth();
  if (card.expMonth >= 1 && card.expMonth <= 12 && year * 12 + card.expMonth - 1 < thisMonth) {
    errors.push('card.exp_month and card.exp_year are in the past: the card has expired');
  }
  if (!/^\d{3,4}$/.test(card.cvc)) errors.push('card.cvc must be 3 or 4 digits');
  return errors;
}

/** The number without the spaces and dashes people type in it. */
export const normalizeCardNumber = (number: string): string => number.replace(/[\s-]/g, '');
