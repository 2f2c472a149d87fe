import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { assertError } from '../helpers/errors.ts';

for (const dialect of DIALECTS) {
  describe(`GET /v1/merchants/me on ${dialect.name}`, { skip: dialect.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(dialect);
    });
    after(() => t?.close());

    test('answers the profile of the secret key’s merchant', async () => {
      const res = await t.request('GET', '/v1/merchants/me', { key: t.merchant.secretKey });
      assert.equal(res.status, 200);
      assert.match(res.body.request_id, /^req_/);
      assert.equal(res.headers.get('x-request-id'), res.body.request_id);
      assert.deepEqual(
        { ...res.body, request_id: undefined },
        {
          request_id: undefined,
          id: t.merchant.merchant.id,
          name: 'Test Shop',
          sandbox: true,
          merchant_fee_rate: 0.0201,
          consumer_fee_rate: 0.01,
          fx_fee_rate: 0.01,
          processor_connected: false,
          headless_api_enabled: true,
          payout_currency: { mode: 'checkout', currency: null },
          allowed_origins: ['https://shop.example'],
        },
      );
    });

    test('shows preferred payout currency and the headless flag as created', async () => {
      const other = await t.createMerchant({ name: 'Euro Shop', headless: false, payoutCurrency: 'eur' });
      const res = await t.request('GET', '/v1/merchants/me', { key: other.secretKey });
      assert.equal(res.status, 200);
      assert.equal(res.body.id, other.merchant.id);
      assert.equal(res.body.headless_api_enabled, false);
      assert.deepEqual(res.body.payout_currency, { mode: 'preferred', currency: 'eur' });
    });

    test('refuses a publishable key with 403', async () => {
      const res = await t.request('GET', '/v1/merchants/me', { key: t.merchant.publishableKey });
      assertError(res, 403, 'secret_key_required');
    });

    test('refuses a missing key with 401', async () => {
      const res = await t.request('GET', '/v1/merchants/me');
      assertError(res, 401, 'missing_api_key');
    });
  });
}
