// Fees in a currency charged in steps (domain/fees.ts): each fee rounds half up to the step, so a share in
// steps plus its fee is still a chargeable amount, and so is the transfer. Step 1 is the plain rule.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  chargeAmount,
  consumerFee,
  DEFAULT_CONSUMER_FEE_PPM,
  DEFAULT_MERCHANT_FEE_PPM,
  merchantFees,
} from '../../src/domain/fees.ts';

test('consumer fee to the step, half up: KWD in tens of fils, MGA in whole ariary', () => {
  // 1 % of KWD 3.340 is 0.0334 → 0.030; of 4.500 is 0.045, a half → 0.050.
  assert.equal(consumerFee(3_340, DEFAULT_CONSUMER_FEE_PPM, 10), 30);
  assert.equal(consumerFee(4_500, DEFAULT_CONSUMER_FEE_PPM, 10), 50);
  assert.equal(chargeAmount(3_340, DEFAULT_CONSUMER_FEE_PPM, 10), 3_370);
  // 1 % of MGA 3,333.00 is 33.33 → 33.00.
  assert.equal(consumerFee(333_300, DEFAULT_CONSUMER_FEE_PPM, 100), 3_300);
  // Step 1 is the fee to the minor unit.
  assert.equal(consumerFee(3_334, DEFAULT_CONSUMER_FEE_PPM, 1), consumerFee(3_334, DEFAULT_CONSUMER_FEE_PPM));
});

test('merchant and FX fees to the step leave a transfer in steps', () => {
  const fees = merchantFees({
    total: 10_000,
    merchantFeePpm: DEFAULT_MERCHANT_FEE_PPM,
    payoutMode: 'preferred',
    payoutCurrency: 'usd',
    checkoutCurrency: 'kwd',
    step: 10,
  });
  // 2.01 % of KWD 10.000 is 0.201 → 0.200; 1 % FX is 0.100.
  assert.deepEqual(fees, { merchantFee: 200, fxFee: 100, transfer: 9_700 });
});

test('property: a share in steps plus its fee is in steps, the fee within half a step of the exact one', () => {
  fc.assert(
    fc.property(
      fc.constantFrom(1, 10, 100),
      fc.integer({ min: 0, max: 999_999 }),
      fc.integer({ min: 0, max: 100_000 }),
      (step, units, ppm) => {
        const share = units * step;
        const fee = consumerFee(share, ppm, step);
        assert.equal(fee % step, 0);
        assert.equal(chargeAmount(share, ppm, step) % step, 0);
        // |fee − share × rate| ≤ step / 2, in integers: |fee × 10⁶ − share × ppm| × 2 ≤ step × 10⁶.
        const error = BigInt(fee) * 1_000_000n - BigInt(share) * BigInt(ppm);
        assert.ok((error < 0n ? -error : error) * 2n <= BigInt(step) * 1_000_000n);
      },
    ),
  );
});
