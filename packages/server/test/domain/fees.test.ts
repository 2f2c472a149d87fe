import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  chargeAmount,
  consumerFee,
  DEFAULT_CONSUMER_FEE_PPM,
  DEFAULT_FX_FEE_PPM,
  DEFAULT_MERCHANT_FEE_PPM,
  merchantFees,
} from '../../src/domain/fees.ts';
import { MAX_AMOUNT } from '../../src/domain/money.ts';

describe('consumer fee', () => {
  test('is round_half_up(share × 0.01) by default', () => {
    assert.equal(consumerFee(3334, DEFAULT_CONSUMER_FEE_PPM), 33); // 33.34
    assert.equal(consumerFee(50, DEFAULT_CONSUMER_FEE_PPM), 1); // 0.5 goes up
    assert.equal(consumerFee(150, DEFAULT_CONSUMER_FEE_PPM), 2); // 1.5 goes up
    assert.equal(consumerFee(149, DEFAULT_CONSUMER_FEE_PPM), 1); // 1.49
    assert.equal(consumerFee(0, DEFAULT_CONSUMER_FEE_PPM), 0);
  });

  test('the charge is the share plus its fee', () => {
    assert.equal(chargeAmount(3334, DEFAULT_CONSUMER_FEE_PPM), 3367);
    assert.equal(chargeAmount(2500, DEFAULT_CONSUMER_FEE_PPM), 2525);
    assert.equal(chargeAmount(50, DEFAULT_CONSUMER_FEE_PPM), 51);
    assert.equal(chargeAmount(1000, 0), 1000);
  });
});

describe('merchant fees', () => {
  const base = {
    merchantFeePpm: DEFAULT_MERCHANT_FEE_PPM,
    payoutMode: 'checkout' as const,
    payoutCurrency: null,
    checkoutCurrency: 'usd',
  };

  test('checkout payout: merchant fee only', () => {
    // 10000 × 0.0201 = 201
    assert.deepEqual(merchantFees({ ...base, total: 10_000 }), {
      merchantFee: 201,
      fxFee: 0,
      transfer: 9799,
    });
    // 5000 × 0.0201 = 100.5 → 101
    assert.deepEqual(merchantFees({ ...base, total: 5000 }), { merchantFee: 101, fxFee: 0, transfer: 4899 });
  });

  test('preferred payout in another currency adds the FX fee, 0.01 by default', () => {
    const preferred = { ...base, payoutMode: 'preferred' as const, payoutCurrency: 'eur' };
    assert.deepEqual(merchantFees({ ...preferred, total: 10_000 }), {
      merchantFee: 201,
      fxFee: 100,
      transfer: 9699,
    });
    // 7350 × 0.01 = 73.5 → 74; 7350 × 0.0201 = 147.735 → 148
    assert.deepEqual(merchantFees({ ...preferred, total: 7350 }), {
      merchantFee: 148,
      fxFee: 74,
      transfer: 7128,
    });
    assert.equal(merchantFees({ ...preferred, total: 10_000, fxFeePpm: 25_000 }).fxFee, 250);
    assert.equal(DEFAULT_FX_FEE_PPM, 10_000);
  });

  test('no FX fee when the preferred currency is the checkout currency, or none is set', () => {
    assert.equal(
      merchantFees({ ...base, payoutMode: 'preferred', payoutCurrency: 'usd', total: 10_000 }).fxFee,
      0,
    );
    assert.equal(
      merchantFees({ ...base, payoutMode: 'preferred', payoutCurrency: null, total: 10_000 }).fxFee,
      0,
    );
    assert.equal(
      merchantFees({ ...base, payoutMode: 'checkout', payoutCurrency: 'eur', total: 10_000 }).fxFee,
      0,
    );
  });

  test('fees that would exceed the total are refused', () => {
    assert.throws(
      () =>
        merchantFees({
          ...base,
          merchantFeePpm: 1_000_000,
          payoutMode: 'preferred',
          payoutCurrency: 'eur',
          total: 100,
        }),
      RangeError,
    );
  });

  test('transfer + fees = total, with every part a non-negative integer', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: MAX_AMOUNT }),
        fc.integer({ min: 0, max: 100_000 }),
        fc.integer({ min: 0, max: 100_000 }),
        fc.constantFrom('checkout' as const, 'preferred' as const),
        fc.constantFrom(null, 'usd', 'eur'),
        (total, merchantFeePpm, fxFeePpm, payoutMode, payoutCurrency) => {
          const fees = merchantFees({
            total,
            merchantFeePpm,
            fxFeePpm,
            payoutMode,
            payoutCurrency,
            checkoutCurrency: 'usd',
          });
          assert.equal(fees.transfer + fees.merchantFee + fees.fxFee, total);
          for (const part of Object.values(fees)) assert.ok(Number.isSafeInteger(part) && part >= 0);
        },
      ),
    );
  });
});
