// The dashboard's settings over HTTP (docs/dashboard.md#pages): the name (developer or owner), the payout
// currency (owner only), the processor said as it is (the sandbox says so); the API sees each change.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import { change, dashboardRequest, dashboardUser, signIn } from '../helpers/dashboard.ts';
import { startPagesApp } from '../helpers/pages.ts';

describe('dashboard: settings', () => {
  let t: TestApp;
  before(async () => {
    t = await startPagesApp();
  });
  after(() => t.close());

  test('name by a developer, payout currency by an owner only, as the API then reports', async () => {
    const m = await t.createMerchant({ name: 'Before' });
    const me = async () => (await t.request('GET', '/v1/merchants/me', { key: m.secretKey })).body;
    const viewer = await signIn(t, await dashboardUser(t, 'viewer', m));
    const developer = await signIn(t, await dashboardUser(t, 'developer', m));
    const owner = await signIn(t, await dashboardUser(t, 'owner', m));

    assert.equal((await change(t, viewer, '/dashboard/settings/name', { name: 'Viewer Shop' })).status, 403);
    assert.equal((await change(t, developer, '/dashboard/settings/name', { name: '  After  ' })).status, 303);
    assert.equal((await me()).name, 'After');
    assert.equal((await change(t, developer, '/dashboard/settings/name', { name: '   ' })).status, 400);
    // The name reaches every payer's page and mail: no forged lines, no text reordered.
    for (const name of ['Camp\r\nBcc: x@evil.example', 'Camp \u202eylppuS', 'Camp\u0000']) {
      const bad = await change(t, developer, '/dashboard/settings/name', { name });
      assert.equal(bad.status, 400, JSON.stringify(name));
      assert.match(bad.text, /must not contain control characters/);
    }
    assert.equal((await me()).name, 'After');

    const refused = await change(t, developer, '/dashboard/settings/payout', { currency: 'eur' });
    assert.equal(refused.status, 403);
    assert.match(refused.text, /Only an owner may change the team or payouts/);
    assert.deepEqual((await me()).payout_currency, { mode: 'checkout', currency: null });
    assert.equal((await change(t, owner, '/dashboard/settings/payout', { currency: 'EUR' })).status, 303);
    assert.deepEqual((await me()).payout_currency, { mode: 'preferred', currency: 'eur' });
    assert.equal((await change(t, owner, '/dashboard/settings/payout', { currency: 'xyz' })).status, 400);
    assert.equal((await change(t, owner, '/dashboard/settings/payout', { currency: '' })).status, 303);
    assert.deepEqual((await me()).payout_currency, { mode: 'checkout', currency: null });

    const page = await dashboardRequest(t, 'GET', '/dashboard/settings', { cookie: viewer.cookie });
    assert.match(page.text, /<strong>sandbox<\/strong>, no real money moves/);
    assert.doesNotMatch(page.text, /Save name|Save payout currency/);
  });
});
