// The dashboard's CLI (docs/dashboard.md#signing-in), run as an operator runs it: `merchant create --email`
// makes the first owner, `dashboard link` prints a one-time link that signs them in on a server sharing the
// database, once.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { RELAXED_LIMITS, startTestApp, type TestApp } from '../helpers/app.ts';
import { assertOneLineError, cli, parseOnlyJson } from '../helpers/cli.ts';
import { dashboardRequest } from '../helpers/dashboard.ts';
import { DIALECTS, type TestDatabase } from '../helpers/databases.ts';

for (const dialect of DIALECTS) {
  describe(`dashboard CLI on ${dialect.name}`, { skip: dialect.skip }, () => {
    let database: TestDatabase;
    let t: TestApp;
    let env: Record<string, string>;
    const payUrl = 'http://127.0.0.1:4999';
    before(async () => {
      database = await dialect.create();
      env = { DATABASE_URL: database.url, PUBLIC_PAY_URL: payUrl };
    });
    after(async () => {
      await t?.close();
      await database?.drop();
    });

    test('merchant create --email makes the owner; dashboard link signs them in once', async () => {
      const created = parseOnlyJson(
        await cli(
          ['merchant', 'create', '--name', 'Link Shop', '--email', 'Owner@Link.Example', '--json'],
          env,
        ),
      );
      assert.equal(created.dashboard_owner, 'owner@link.example');
      const linked = parseOnlyJson(
        await cli(['dashboard', 'link', '--merchant', created.merchant_id as string, '--json'], env),
      );
      assert.equal(linked.email, 'owner@link.example');
      assert.equal(linked.role, 'owner');
      assert.match(
        linked.url as string,
        /^http:\/\/127\.0\.0\.1:4999\/dashboard\/sign-in\?token=dsl_[A-Za-z0-9]+$/,
      );
      const byEmail = parseOnlyJson(
        await cli(
          [
            'dashboard',
            'link',
            '--merchant',
            created.merchant_id as string,
            '--email',
            'owner@link.example',
            '--json',
          ],
          env,
        ),
      );
      assert.notEqual(byEmail.url, linked.url);

      t = await startTestApp(dialect, { database, env: { ...RELAXED_LIMITS, PUBLIC_PAY_URL: payUrl } });
      const token = new URL(linked.url as string).searchParams.get('token') as string;
      const origin = { origin: payUrl };
      const first = await dashboardRequest(t, 'POST', '/dashboard/sign-in', { form: { token }, ...origin });
      assert.equal(first.status, 303, first.text);
      const cookie = (first.headers.get('set-cookie') ?? '').split(';')[0] as string;
      const page = await dashboardRequest(t, 'GET', '/dashboard/settings', { cookie });
      assert.equal(page.status, 200);
      assert.match(page.text, /owner@link\.example/);
      assert.match(page.text, /Link Shop/);
      const again = await dashboardRequest(t, 'POST', '/dashboard/sign-in', { form: { token }, ...origin });
      assert.equal(again.status, 410);
    });

    test('dashboard link names what is missing: the merchant, its owner, the user', async () => {
      assertOneLineError(await cli(['dashboard', 'link'], env), /dashboard link needs --merchant ID/);
      assertOneLineError(
        await cli(['dashboard', 'link', '--merchant', 'svc_merch_nope'], env),
        /: no merchant svc_merch_nope\n$/,
      );
      const bare = parseOnlyJson(await cli(['merchant', 'create', '--name', 'No Owner', '--json'], env));
      assert.equal(bare.dashboard_owner, undefined);
      assertOneLineError(
        await cli(['dashboard', 'link', '--merchant', bare.merchant_id as string], env),
        /has no dashboard owner/,
      );
      assertOneLineError(
        await cli(
          ['dashboard', 'link', '--merchant', bare.merchant_id as string, '--email', 'x@y.example'],
          env,
        ),
        /no dashboard user x@y\.example/,
      );
      assertOneLineError(
        await cli(['merchant', 'create', '--name', 'Bad', '--email', 'not-an-address'], env),
        /--email must be an address/,
      );
    });
  });
}
