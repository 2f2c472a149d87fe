import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  allocateByLargestRemainder,
  assertMinorUnits,
  feeFor,
  formatRate,
  MAX_AMOUNT,
  PPM,
  parseRatePpm,
  roundHalfUpDiv,
  splitEvenly,
  sumMinorUnits,
} from '../../src/domain/money.ts';

describe('roundHalfUpDiv', () => {
  test('rounds an exact half up and everything else to the nearest integer', () => {
    assert.equal(roundHalfUpDiv(5, 2), 3);
    assert.equal(roundHalfUpDiv(7, 2), 4);
    assert.equal(roundHalfUpDiv(4, 2), 2);
    assert.equal(roundHalfUpDiv(1, 3), 0);
    assert.equal(roundHalfUpDiv(2, 3), 1);
    assert.equal(roundHalfUpDiv(0, 7), 0);
    assert.equal(roundHalfUpDiv(500_000n, 1_000_000n), 1);
    assert.equal(roundHalfUpDiv(499_999n, 1_000_000n), 0);
  });

  test('refuses a negative numerator or a denominator that is not positive', () => {
    assert.throws(() => roundHalfUpDiv(-1, 2), RangeError);
    assert.throws(() => roundHalfUpDiv(1, 0), RangeError);
    assert.throws(() => roundHalfUpDiv(1.5, 2), RangeError);
  });

  test('is the nearest integer, halves going up', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 15n }), fc.bigInt({ min: 1n, max: 10n ** 7n }), (n, d) => {
        const q = BigInt(roundHalfUpDiv(n, d));
        // n / d − q lies in [−1/2, 1/2): an exact half was rounded up, to q = n / d + 1/2.
        const twiceError = 2n * (n - q * d);
        assert.ok(twiceError >= -d && twiceError < d, `${n} / ${d} gave ${q}`);
      }),
    );
  });
});

describe('fees on amounts', () => {
  test('feeFor rounds half up in integers', () => {
    assert.equal(feeFor(50, 10_000), 1); // 0.5 → 1
    assert.equal(feeFor(49, 10_000), 0); // 0.49 → 0
    assert.equal(feeFor(250, 10_000), 3); // 2.5 → 3
    assert.equal(feeFor(5000, 20_100), 101); // 100.5 → 101
    assert.equal(feeFor(2500, 20_100), 50); // 50.25 → 50
    assert.equal(feeFor(MAX_AMOUNT, PPM), MAX_AMOUNT);
    assert.equal(feeFor(MAX_AMOUNT, 0), 0);
  });

  test('feeFor refuses rates outside 0 to 1,000,000 ppm and amounts that are not minor units', () => {
    assert.throws(() => feeFor(100, -1), RangeError);
    assert.throws(() => feeFor(100, PPM + 1), RangeError);
    assert.throws(() => feeFor(100, 0.5), RangeError);
    assert.throws(() => feeFor(1.5, 10_000), RangeError);
    assert.throws(() => feeFor(-1, 10_000), RangeError);
  });
});

describe('rates', () => {
  test('formatRate gives the number the API shows', () => {
    assert.equal(formatRate(20_100), 0.0201);
    assert.equal(formatRate(10_000), 0.01);
    assert.equal(formatRate(0), 0);
    assert.equal(formatRate(PPM), 1);
    assert.equal(JSON.stringify({ rate: formatRate(20_100) }), '{"rate":0.0201}');
  });

  test('parseRatePpm reads decimals without float rounding', () => {
    assert.equal(parseRatePpm('0.0201'), 20_100);
    assert.equal(parseRatePpm(0.0201), 20_100);
    assert.equal(parseRatePpm('0.01'), 10_000);
    assert.equal(parseRatePpm(' 0.1 '), 100_000);
    assert.equal(parseRatePpm('1'), PPM);
    assert.equal(parseRatePpm(0), 0);
    assert.equal(parseRatePpm('0.000001'), 1);
  });

  test('parseRatePpm refuses what it cannot hold exactly', () => {
    for (const bad of ['0.0000001', '1.5', '-0.01', 'abc', '', '.5', '1e-3', 1e-7, 2]) {
      assert.throws(() => parseRatePpm(bad), RangeError, String(bad));
    }
  });

  test('formatRate and parseRatePpm round-trip every rate', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: PPM }), (ppm) => {
        assert.equal(parseRatePpm(formatRate(ppm)), ppm);
      }),
    );
  });
});

describe('amount helpers', () => {
  test('assertMinorUnits accepts non-negative safe integers only', () => {
    assertMinorUnits(0);
    assertMinorUnits(MAX_AMOUNT);
    for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, '5', null]) {
      assert.throws(() => assertMinorUnits(bad, 'share'), /share must be a non-negative integer/);
    }
  });

  test('sumMinorUnits adds exactly', () => {
    assert.equal(sumMinorUnits([]), 0);
    assert.equal(sumMinorUnits([1, 2, 3]), 6);
    assert.throws(() => sumMinorUnits([1, -2]), /amounts\[1\]/);
  });

  test('splitEvenly: floor each, leftover to the first parts', () => {
    assert.deepEqual(splitEvenly(1000, 3), [334, 333, 333]);
    assert.deepEqual(splitEvenly(1001, 3), [334, 334, 333]);
    assert.deepEqual(splitEvenly(2, 4), [1, 1, 0, 0]);
    assert.deepEqual(splitEvenly(0, 2), [0, 0]);
    assert.throws(() => splitEvenly(100, 0), RangeError);
  });

  test('allocateByLargestRemainder: worked examples', () => {
    // 1000 × 1/3 each: 333.33 each, one cent left for the first of the tied remainders.
    assert.deepEqual(allocateByLargestRemainder(1000, [1, 1, 1]), [334, 333, 333]);
    // Quotas 166.67, 333.33, 500: the largest remainder is the first part's.
    assert.deepEqual(allocateByLargestRemainder(1000, [1, 2, 3]), [167, 333, 500]);
    assert.deepEqual(allocateByLargestRemainder(10, [0, 5, 0]), [0, 10, 0]);
    assert.deepEqual(allocateByLargestRemainder(7, [3333, 3333, 3334]), [2, 2, 3]);
    assert.throws(() => allocateByLargestRemainder(10, [0, 0]), RangeError);
  });

  test('allocateByLargestRemainder: parts add up and each is within one cent of its quota', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: MAX_AMOUNT }),
        fc.array(fc.integer({ min: 0, max: 1_000_000 }), { minLength: 1, maxLength: 60 }),
        (total, weights) => {
          fc.pre(weights.some((w) => w > 0));
          const parts = allocateByLargestRemainder(total, weights);
          const weightSum = BigInt(weights.reduce((a, b) => a + b, 0));
          assert.equal(
            parts.reduce((a, b) => a + b, 0),
            total,
          );
          for (const [index, part] of parts.entries()) {
            const floor = (BigInt(total) * BigInt(weights[index]!)) / weightSum;
            assert.ok(BigInt(part) === floor || BigInt(part) === floor + 1n);
            if (weights[index] === 0) assert.equal(part, 0);
          }
        },
      ),
    );
  });
});
