// The dashboard's developers page over HTTP (docs/dashboard.md#pages): secret keys listed by prefix only,
// the publishable key whole (it is public); rolling
// the secret key from the page ends the old one at once and the new one (shown once) works; the
// publishable key and the cart signing secret roll with a grace period; a viewer cannot roll.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import { change, dashboardRequest, dashboardUser, signIn } from '../helpers/dashboard.ts';
import { startPagesApp } from '../helpers/pages.ts';

const shownOnce = (text: string) => /id="new-secret">([^<]+)</.exec(text)?.[1];

describe('dashboard: developers', () => {
  let t: TestApp;
  before(async () => {
    t = await startPagesApp();
  });
  after(() => t.close());

  test('secret keys are listed by prefix, never in full; the publishable key is shown whole', async () => {
    const s = await signIn(t, await dashboardUser(t, 'viewer'));
    const page = await dashboardRequest(t, 'GET', '/dashboard/developers', { cookie: s.cookie });
    assert.equal(page.status, 200);
    assert.ok(page.text.includes(`${t.merchant.secretKey.slice(0, 16)}…`));
    assert.ok(!page.text.includes(t.merchant.secretKey));
    assert.ok(page.text.includes(`id="publishable-key">${t.merchant.publishableKey}<`));
    assert.ok(!page.text.includes(t.merchant.merchant.signingSecret));
    assert.doesNotMatch(page.text, /Roll secret key/, 'a viewer has no roll buttons');
  });

  test("a viewer's roll is 403 and the key still works", async () => {
    const viewer = await signIn(t, await dashboardUser(t, 'viewer'));
    const refused = await change(t, viewer, '/dashboard/developers/roll/secret-key');
    assert.equal(refused.status, 403);
    const me = await t.request('GET', '/v1/merchants/me', { key: t.merchant.secretKey });
    assert.equal(me.status, 200);
  });

  test('rolling the secret key ends the old one at once; the new one, shown once, works', async () => {
    const other = await t.createMerchant({ name: 'Roll Shop' });
    const s = await signIn(t, await dashboardUser(t, 'developer', other));
    const rolled = await change(t, s, '/dashboard/developers/roll/secret-key');
    assert.equal(rolled.status, 200);
    const key = shownOnce(rolled.text);
    assert.match(key ?? '', /^svc_sk_test_/);
    assert.equal((await t.request('GET', '/v1/merchants/me', { key: other.secretKey })).status, 401);
    const me = await t.request('GET', '/v1/merchants/me', { key: key as string });
    assert.equal(me.status, 200);
    assert.equal(me.body.id, other.merchant.id);
    const later = await dashboardRequest(t, 'GET', '/dashboard/developers', { cookie: s.cookie });
    assert.ok(!later.text.includes(key as string), 'never shown again');
    assert.match(later.text, /revoked/);
  });

  test('the publishable key and the cart signing secret roll with 24 hours of grace; an unknown roll is 404', async () => {
    const other = await t.createMerchant({ name: 'Grace Shop' });
    const s = await signIn(t, await dashboardUser(t, 'owner', other));
    const pk = await change(t, s, '/dashboard/developers/roll/publishable-key');
    assert.equal(pk.status, 200);
    const newPk = shownOnce(pk.text) ?? '';
    assert.match(newPk, /^svc_pk_test_/);
    assert.match(pk.text, /works for 24 more hours/);
    assert.match(pk.text, /works until/);
    // The new publishable key is the one to copy from then on; the old one, in its grace, is listed whole.
    const later = await dashboardRequest(t, 'GET', '/dashboard/developers', { cookie: s.cookie });
    assert.ok(later.text.includes(`id="publishable-key">${newPk}<`));
    assert.ok(later.text.includes(`<td class="mono">${other.publishableKey}</td>`));
    const sig = await change(t, s, '/dashboard/developers/roll/signing-secret');
    assert.match(shownOnce(sig.text) ?? '', /^svc_sig_test_/);
    const hook = await change(t, s, '/dashboard/developers/roll/webhook-secret');
    assert.match(shownOnce(hook.text) ?? '', /^whsec_/);
    assert.equal((await change(t, s, '/dashboard/developers/roll/everything')).status, 404);
  });

  test('allowed origins: added as the CLI takes them, removed, refused when not an origin or by a viewer', async () => {
    const other = await t.createMerchant({ name: 'Origin Shop', allowedOrigins: [] });
    const s = await signIn(t, await dashboardUser(t, 'developer', other));
    const origins = async () =>
      (await t.request('GET', '/v1/merchants/me', { key: other.secretKey })).body.allowed_origins as string[];
    const added = await change(t, s, '/dashboard/developers/origins', {
      origin: 'https://Shop.example/cart',
    });
    assert.equal(added.status, 303);
    assert.deepEqual(await origins(), ['https://shop.example']);
    const page = await dashboardRequest(t, 'GET', '/dashboard/developers?done=origin-added', {
      cookie: s.cookie,
    });
    assert.match(page.text, /https:\/\/shop\.example/);
    assert.match(page.text, /Origin added/);
    for (const bad of ['*', 'null', 'ftp://shop.example', 'https://x; report-uri https://evil.example'])
      assert.equal((await change(t, s, '/dashboard/developers/origins', { origin: bad })).status, 400, bad);
    // Each refusal says what is wrong with what was typed.
    for (const [bad, words] of [
      ['javascript:alert(1)', /(&quot;|")javascript:(&quot;|") is not a web address/],
      [`https://${'a'.repeat(64)}.example`, /a part of 64 characters/],
    ] as const) {
      const refused = await change(t, s, '/dashboard/developers/origins', { origin: bad });
      assert.equal(refused.status, 400, bad);
      assert.match(refused.text, words, bad);
      assert.doesNotMatch(refused.text, /sandboxed frame|empty label/, bad);
    }
    const viewer = await signIn(t, await dashboardUser(t, 'viewer', other));
    assert.equal(
      (await change(t, viewer, '/dashboard/developers/origins', { origin: 'https://b.example' })).status,
      403,
    );
    assert.equal(
      (await change(t, viewer, '/dashboard/developers/origins/remove', { origin: 'https://shop.example' }))
        .status,
      403,
    );
    assert.deepEqual(await origins(), ['https://shop.example']);
    const removed = await change(t, s, '/dashboard/developers/origins/remove', {
      origin: 'https://shop.example',
    });
    assert.equal(removed.status, 303);
    assert.deepEqual(await origins(), []);
  });

  test('removing an origin takes it as adding does; one not registered is said so, never "removed"', async () => {
    const other = await t.createMerchant({ name: 'Remove Shop', allowedOrigins: [] });
    const s = await signIn(t, await dashboardUser(t, 'developer', other));
    const origins = async () =>
      (await t.request('GET', '/v1/merchants/me', { key: other.secretKey })).body.allowed_origins as string[];
    const add = (origin: string) => change(t, s, '/dashboard/developers/origins', { origin });
    const remove = (origin: string) => change(t, s, '/dashboard/developers/origins/remove', { origin });
    for (const typed of [
      'https://shop.example/',
      'HTTPS://SHOP.EXAMPLE',
      ' https://Shop.example/cart?x=1 ',
    ]) {
      assert.equal((await add('https://shop.example')).status, 303);
      assert.deepEqual(await origins(), ['https://shop.example']);
      const res = await remove(typed);
      assert.equal(res.status, 303, `${typed}: ${res.text}`);
      assert.deepEqual(await origins(), [], typed);
    }
    assert.equal((await add('https://kept.example')).status, 303);
    for (const typed of ['https://never.example', 'https://kept.example:8443', 'not an origin']) {
      const res = await remove(typed);
      assert.equal(res.status, 400, typed);
      assert.match(res.text, /is not registered/);
      assert.doesNotMatch(res.text, /Origin removed/);
    }
    assert.deepEqual(await origins(), ['https://kept.example']);
    // A row stored as typed, before origins were parsed, is removed by its own value (its Remove button).
    const legacy = await t.createMerchant({
      name: 'Legacy Shop',
      allowedOrigins: ['https://Legacy.example/'],
    });
    const owner = await signIn(t, await dashboardUser(t, 'owner', legacy));
    const page = await dashboardRequest(t, 'GET', '/dashboard/developers', { cookie: owner.cookie });
    assert.match(page.text, /name="origin" value="https:\/\/Legacy\.example\/"/);
    const res = await change(t, owner, '/dashboard/developers/origins/remove', {
      origin: 'https://Legacy.example/',
    });
    assert.equal(res.status, 303, res.text);
    const left = await t.request('GET', '/v1/merchants/me', { key: legacy.secretKey });
    assert.deepEqual(left.body.allowed_origins, []);
  });
});
