// The card processor's currency rules (processor/currencies.ts): the currencies offered, each one's step and
// smallest charge, and the conversion between ISO 4217 minor units and Stripe's integers.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import fc from 'fast-check';
import { formatMinorUnits, isCurrencyCode, minorUnitExponent } from '../../src/domain/currencies.ts';
import {
  CARD_CURRENCIES,
  fromStripeAmount,
  OFFERED_CURRENCIES,
  toStripeAmount,
} from '../../src/processor/currencies.ts';

const { supports, chargeStep, minimumCharge } = CARD_CURRENCIES;

test('the steps: 1 for most, 10 for three-decimal currencies, 100 for MGA', () => {
  for (const code of ['usd', 'eur', 'jpy', 'isk', 'ugx', 'huf', 'twd', 'krw'])
    assert.equal(chargeStep(code), 1, code);
  for (const code of ['bhd', 'jod', 'kwd', 'omr', 'tnd']) assert.equal(chargeStep(code), 10, code);
  assert.equal(chargeStep('mga'), 100);
});

test("the minimums: Stripe's table where it gives one, about US$1.00 elsewhere", () => {
  const table = {
    usd: 50,
    eur: 50,
    gbp: 30,
    jpy: 50,
    huf: 17_500,
    hkd: 400,
    czk: 1_500,
    mxn: 1_000,
    thb: 1_000,
  };
  for (const [code, minimum] of Object.entries(table)) assert.equal(minimumCharge(code), minimum, code);
  assert.equal(minimumCharge('kwd'), 500); // KWD 0.500
  assert.equal(minimumCharge('isk'), 200); // ISK 200
  assert.equal(minimumCharge('mga'), 500_000); // MGA 5,000.00
});

test('every offered currency is an ISO 4217 code, with a minimum in its step', () => {
  assert.ok(OFFERED_CURRENCIES.length > 100);
  for (const code of OFFERED_CURRENCIES) {
    assert.ok(isCurrencyCode(code), code);
    assert.ok(supports(code), code);
    assert.equal(minimumCharge(code) % chargeStep(code), 0, code);
    assert.ok(minimumCharge(code) > 0, code);
  }
});

test('currencies not offered: outside Stripe, fast-moving, or not ISO codes', () => {
  for (const code of [
    'irr',
    'kpw',
    'cup',
    'syp',
    'iqd',
    'lyd',
    'ars',
    'try',
    'ngn',
    'std',
    'xau',
    'xyz',
    'USD',
  ]) {
    assert.equal(supports(code), false, code);
  }
  assert.throws(() => minimumCharge('irr'), RangeError);
  assert.throws(() => chargeStep('irr'), RangeError);
});

test('toStripeAmount: JPY as is, ISK and UGX ×100, MGA ÷100, KWD as is ending in 0, USD as is', () => {
  assert.equal(toStripeAmount('jpy', 1_500), 1_500);
  assert.equal(toStripeAmount('isk', 1_500), 150_000);
  assert.equal(toStripeAmount('ugx', 5_000), 500_000);
  assert.equal(toStripeAmount('mga', 500_000), 5_000);
  assert.equal(toStripeAmount('kwd', 1_230), 1_230);
  assert.equal(toStripeAmount('usd', 2_550), 2_550);
  assert.equal(toStripeAmount('huf', 17_550), 17_550);
  assert.throws(() => toStripeAmount('kwd', 1_235), /not a multiple of 10/);
  assert.throws(() => toStripeAmount('mga', 150), /not a multiple of 100/);
  assert.throws(() => toStripeAmount('usd', -1), RangeError);
  assert.throws(() => toStripeAmount('usd', 1.5), RangeError);
});

test('fromStripeAmount: the inverse, refusing an ISK amount with hundredths', () => {
  assert.equal(fromStripeAmount('isk', 150_000), 1_500);
  assert.equal(fromStripeAmount('mga', 5_000), 500_000);
  assert.equal(fromStripeAmount('kwd', 1_230), 1_230);
  assert.throws(() => fromStripeAmount('isk', 150_050), /not a multiple of 100/);
});

test('property: every amount in its currency’s step goes to Stripe and back unchanged, as an integer', () => {
  fc.assert(
    fc.property(
      fc.constantFrom(...OFFERED_CURRENCIES),
      fc.integer({ min: 0, max: 99_999_999 }),
      (code, n) => {
        const step = chargeStep(code);
        const amount = n - (n % step);
        const sent = toStripeAmount(code, amount);
        assert.ok(Number.isSafeInteger(sent));
        assert.equal(fromStripeAmount(code, sent), amount);
        // The unit Stripe counts in is ISO's shifted: the same money.
        const stripeDigits = ['isk', 'ugx'].includes(code) ? 2 : code === 'mga' ? 0 : minorUnitExponent(code);
        assert.equal(sent * 10 ** minorUnitExponent(code), amount * 10 ** stripeDigits);
      },
    ),
  );
});

test('docs/api.md lists exactly the offered currencies with their smallest card payments', () => {
  const api = readFileSync(new URL('../../../../docs/api.md', import.meta.url), 'utf8');
  const listed = api.split('\n').find((line) => line.startsWith('AED '));
  const expected = OFFERED_CURRENCIES.map(
    (code) => `${code.toUpperCase()} ${formatMinorUnits(minimumCharge(code), code)}`,
  ).join(' · ');
  assert.equal(listed, expected);
});
