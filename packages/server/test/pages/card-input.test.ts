// The sandbox card form reads an expiry as people type it (#19: `1230` was refused, only `12/30` taken).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseExpiry } from '../../src/pages/card-input.ts';

test('an expiry with or without a separator, two or four digits of year', () => {
  for (const typed of ['12/30', '1230', '12 / 30', '12-30', '12.30', '12 30', '12/2030', '122030', ' 1230 '])
    assert.deepEqual(parseExpiry(typed), { month: 12, year: 2030 }, typed);
  for (const typed of ['1/30', '130', '01/30', '0130', '012030'])
    assert.deepEqual(parseExpiry(typed), { month: 1, year: 2030 }, typed);
});

test('what is not a month and a year is refused', () => {
  for (const typed of ['', '12', '1330', '0030', '13/30', '12/3', '12/303', '12345', 'ab/cd', '1234567'])
    assert.equal(parseExpiry(typed), undefined, typed);
});
