// Stripe Connect onboarding from the dashboard's settings page (docs/dashboard.md#payouts-with-stripe), over
// HTTP against the local fake of Stripe's API, on SQLite and PostgreSQL: an owner's press makes the Express
// account once (Stripe's Accounts API, under the merchant's idempotency key), keeps it as the merchant's
// processor account, and answers a one-time Account Link whose return and refresh URLs are our pages (which
// need no cookie: Stripe's pages are another site). A developer or viewer is refused and Stripe is not
// called; a refusal from Stripe is a 503 in words; the sandbox has no button and says why.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import { change, dashboardRequest, dashboardUser, signIn } from '../helpers/dashboard.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { FAKE_SECRET_KEY, type FakeStripe, startFakeStripe } from '../helpers/fake-stripe.ts';
import { startPagesApp } from '../helpers/pages.ts';

const linkOf = (page: string) =>
  /id="onboarding-link" href="([^"]+)"/.exec(page)?.[1]?.replace(/&amp;/g, '&');

for (const dialect of DIALECTS) {
  describe(`dashboard: Stripe Connect onboarding on ${dialect.name}`, { skip: dialect.skip }, () => {
    let fake: FakeStripe;
    let t: TestApp;
    before(async () => {
      fake = await startFakeStripe();
      t = await startPagesApp(
        { env: { STRIPE_SECRET_KEY: FAKE_SECRET_KEY, STRIPE_API_URL: `http://${fake.host}:${fake.port}` } },
        dialect,
      );
    });
    after(async () => {
      await t?.close();
      await fake?.close();
    });

    const accountOf = async (merchantId: string) =>
      (
        await t.deps.db.kysely
          .selectFrom('merchants')
          .select('processor_account_id')
          .where('id', '=', merchantId)
          .executeTakeFirstOrThrow()
      ).processor_account_id;

    test("an owner's press makes the account once and answers a one-time onboarding link back to our pages", async () => {
      const shop = await t.createMerchant({ name: 'Payout Shop' });
      const s = await signIn(t, await dashboardUser(t, 'owner', shop));
      const before = await dashboardRequest(t, 'GET', '/dashboard/settings', { cookie: s.cookie });
      assert.match(before.text, /<strong>Stripe<\/strong>, no connected account yet/);
      assert.match(before.text, />Set up payouts with Stripe</);

      const pressed = await change(t, s, '/dashboard/settings/payouts/stripe');
      assert.equal(pressed.status, 200, pressed.text);
      const [account] = fake.all('account');
      assert.ok(account);
      assert.equal(account.type, 'express');
      assert.deepEqual(account.capabilities, { transfers: { requested: 'true' } });
      assert.deepEqual(account.metadata, { merchant_id: shop.merchant.id });
      const create = fake.requests.find((r) => r.path === '/v1/accounts');
      assert.equal(create?.idempotencyKey, `gc-connect-account-${shop.merchant.id}`);
      const [link] = fake.all('account_link');
      assert.equal(link?.account, account.id);
      assert.equal(link?.type, undefined, 'the fake keeps what Stripe answers; the request says the type');
      const linkRequest = fake.requests.find((r) => r.path === '/v1/account_links');
      assert.equal(linkRequest?.params.type, 'account_onboarding');
      assert.equal(linkRequest?.params.return_url, `${t.baseUrl}/dashboard/payouts/return`);
      assert.equal(linkRequest?.params.refresh_url, `${t.baseUrl}/dashboard/payouts/refresh`);
      assert.equal(linkOf(pressed.text), link?.url);
      assert.match(pressed.text, new RegExp(`id="connected-account">${account.id}<`));
      assert.equal(await accountOf(shop.merchant.id), account.id, "kept as the merchant's processor account");

      // Pressed again: a new link to the same account; no second account.
      const again = await change(t, s, '/dashboard/settings/payouts/stripe');
      assert.equal(again.status, 200);
      assert.match(again.text, />Continue onboarding with Stripe</);
      assert.equal(fake.all('account').length, 1);
      assert.equal(fake.all('account_link').length, 2);
      assert.notEqual(linkOf(again.text), linkOf(pressed.text));
      assert.equal(fake.requests.at(-1)?.params.account, account.id);

      // The person's way back: Stripe's page links to our return page, which needs no cookie.
      const stripePage = await (await fetch(linkOf(again.text) as string)).text();
      const back = /href="([^"]+)"/.exec(stripePage)?.[1] as string;
      assert.equal(back, `${t.baseUrl}/dashboard/payouts/return`);
      const returned = await fetch(back, { redirect: 'manual' });
      assert.equal(returned.status, 200);
      const returnedText = await returned.text();
      assert.match(returnedText, /Back from Stripe/);
      assert.match(returnedText, /href="\/dashboard\/settings"/);
      const refreshed = await fetch(`${t.baseUrl}/dashboard/payouts/refresh`, { redirect: 'manual' });
      assert.equal(refreshed.status, 200);
      assert.match(await refreshed.text(), /The Stripe link has expired/);
      assert.equal((await fetch(`${t.baseUrl}/dashboard/payouts/elsewhere`)).status, 404);
    });

    test('an account an operator set is onboarded as it is, never replaced', async () => {
      const shop = await t.createMerchant({ name: 'Operator Shop' });
      await t.deps.db.kysely
        .updateTable('merchants')
        .set({ processor_account_id: 'acct_setByOperator' })
        .where('id', '=', shop.merchant.id)
        .execute();
      const made = fake.all('account').length;
      const s = await signIn(t, await dashboardUser(t, 'owner', shop));
      // The fake has no such account: made by hand at Stripe, it would; here Stripe's 404 shows as words.
      const refused = await change(t, s, '/dashboard/settings/payouts/stripe');
      assert.equal(refused.status, 503);
      assert.match(
        refused.text,
        /Stripe did not make an onboarding link \(No such account: &#39;acct_setByOperator&#39;\)/,
      );
      assert.equal(fake.all('account').length, made, 'no account made over it');
      assert.equal(await accountOf(shop.merchant.id), 'acct_setByOperator');
    });

    test('a developer or a viewer is refused and Stripe is not called', async () => {
      const shop = await t.createMerchant({ name: 'Team Shop' });
      const calls = fake.requests.length;
      for (const role of ['developer', 'viewer'] as const) {
        const s = await signIn(t, await dashboardUser(t, role, shop));
        const page = await dashboardRequest(t, 'GET', '/dashboard/settings', { cookie: s.cookie });
        assert.doesNotMatch(page.text, /Set up payouts with Stripe/);
        assert.match(page.text, /An owner sets payouts up with Stripe/);
        assert.equal((await change(t, s, '/dashboard/settings/payouts/stripe')).status, 403, role);
      }
      assert.equal(fake.requests.length, calls);
      assert.equal(await accountOf(shop.merchant.id), null);
    });
  });
}

describe('dashboard: payouts in the sandbox', () => {
  let t: TestApp;
  before(async () => {
    t = await startPagesApp();
  });
  after(() => t.close());

  test('the sandbox says no real money moves, has no onboarding button, and refuses one in words', async () => {
    const s = await signIn(t, await dashboardUser(t, 'owner'));
    const page = await dashboardRequest(t, 'GET', '/dashboard/settings', { cookie: s.cookie });
    assert.match(page.text, /<strong>sandbox<\/strong>, no real money moves/);
    assert.doesNotMatch(page.text, /payouts\/stripe/);
    const refused = await change(t, s, '/dashboard/settings/payouts/stripe');
    assert.equal(refused.status, 400);
    assert.match(refused.text, /The sandbox moves no real money/);
  });
});
