// The shop for a test: its webhook endpoint registered with the service through the merchant API first, as
// an operator would (the shop needs the endpoint's secret to start, and the endpoint needs the shop's
// address), and the shop's origin registered, as `group-checkout merchant update --allowed-origin` does (its
// page creates sessions with the publishable key); then the shop started on that port with the test
// merchant's credentials.
import assert from 'node:assert/strict';
import { changeAllowedOrigins } from '../../../packages/server/src/flows/merchants.ts';
import type { TestApp } from '../../../packages/server/test/helpers/app.ts';
import { freePort } from '../../../packages/server/test/helpers/chromium.ts';
import { type Shop, startShop } from '../src/shop.ts';

export type StartedShop = Shop & { url: string; port: number };

export async function startShopFor(t: TestApp, log: (line: string) => void = () => {}): Promise<StartedShop> {
  const port = await freePort();
  const endpoint = await t.request('POST', '/v1/webhooks', {
    key: t.merchant.secretKey,
    body: { url: `http://127.0.0.1:${port}/webhooks/group-checkout`, events: ['*'] },
  });
  assert.equal(endpoint.status, 200, endpoint.text);
  const origins = await changeAllowedOrigins(t.deps.db, t.merchant.merchant.id, {
    add: [`http://localhost:${port}`],
    remove: [],
  });
  assert.ok(origins);
  return startShop({
    merchantId: t.merchant.merchant.id,
    publishableKey: t.merchant.publishableKey,
    signingSecret: t.merchant.merchant.signingSecret,
    webhookSecret: endpoint.body.secret,
    apiBaseUrl: `${t.baseUrl}/v1`,
    payBaseUrl: t.baseUrl,
    port,
    log,
  });
}
