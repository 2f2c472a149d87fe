import assert from 'node:assert/strict';
import { test } from 'node:test';
import { brandName, cardBrand, checkCard } from '../../src/domain/card.ts';

const NOW = new Date('2026-11-22T12:00:00Z');
const card = (over: Partial<Parameters<typeof checkCard>[0]> = {}) => ({
  number: '4242424242424242',
  expMonth: 12,
  expYear: 2030,
  cvc: '123',
  ...over,
});

test('every sandbox test card passes the Luhn check; one digit changed fails it', () => {
  for (const n of [
    '4242424242424242',
    '4000000000000002',
    '4000000000009995',
    '4000000000000069',
    '4000000000000127',
    '4000000000009987',
    '4000000000009979',
    '4000000000000119',
    '4000000000000341',
    '5555555555554444',
    '378282246310005',
  ]) {
    assert.deepEqual(checkCard(card({ number: n }), NOW), [], n);
  }
  assert.match(checkCard(card({ number: '4242424242424241' }), NOW)[0] ?? '', /Luhn/);
  assert.match(checkCard(card({ number: '4242 4242 4242 4241' }), NOW)[0] ?? '', /Luhn/);
});

test('spaces and dashes are allowed; letters and short numbers are not', () => {
  assert.deepEqual(checkCard(card({ number: '4242 4242-4242 4242' }), NOW), []);
  assert.match(checkCard(card({ number: '4242abcd42424242' }), NOW)[0] ?? '', /12 to 19 digits/);
  assert.match(checkCard(card({ number: '42424242' }), NOW)[0] ?? '', /12 to 19 digits/);
});

test('a card is good through the last day of its expiry month', () => {
  assert.deepEqual(checkCard(card({ expMonth: 11, expYear: 2026 }), NOW), []);
  assert.deepEqual(checkCard(card({ expMonth: 11, expYear: 26 }), NOW), [], 'two digits are 20YY');
  assert.match(checkCard(card({ expMonth: 10, expYear: 2026 }), NOW)[0] ?? '', /expired/);
  assert.match(checkCard(card({ expMonth: 13 }), NOW)[0] ?? '', /1 to 12/);
});

test('the CVC is 3 or 4 digits', () => {
  assert.deepEqual(checkCard(card({ cvc: '1234' }), NOW), []);
  assert.match(checkCard(card({ cvc: '12' }), NOW)[0] ?? '', /cvc/);
  assert.match(checkCard(card({ cvc: '12a' }), NOW)[0] ?? '', /cvc/);
});

test('brands by their leading digits', () => {
  assert.equal(cardBrand('4242424242424242'), 'visa');
  assert.equal(cardBrand('5555555555554444'), 'mastercard');
  assert.equal(cardBrand('2223003122003222'), 'mastercard');
  assert.equal(cardBrand('378282246310005'), 'amex');
  assert.equal(cardBrand('6011111111111117'), 'discover');
  assert.equal(cardBrand('9999999999999995'), 'unknown');
});

test('brands as a payer reads them: their owners’ spelling; nothing for an unknown brand', () => {
  assert.equal(brandName('visa'), 'Visa');
  assert.equal(brandName('amex'), 'American Express');
  assert.equal(brandName('jcb'), 'JCB');
  assert.equal(brandName('cartes_bancaires'), 'Cartes Bancaires');
  assert.equal(brandName('link'), 'Link', 'a brand we have no spelling for is capitalized');
  assert.equal(brandName('unknown'), undefined);
  assert.equal(brandName(null), undefined);
});
