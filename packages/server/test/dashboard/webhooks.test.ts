// The dashboard's webhooks page over HTTP (docs/dashboard.md#pages): an endpoint made there is the API's
// endpoint, its secret shown on that answer only; rotate shows the new secret once and the old one keeps
// signing; delete; a viewer is refused; another merchant's endpoint is 404.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import { change, dashboardRequest, dashboardUser, signIn } from '../helpers/dashboard.ts';
import { startPagesApp } from '../helpers/pages.ts';

describe('dashboard: webhooks', () => {
  let t: TestApp;
  before(async () => {
    t = await startPagesApp();
  });
  after(() => t.close());

  const endpoints = async (key = t.merchant.secretKey) =>
    (await t.request('GET', '/v1/webhooks', { key })).body.data as {
      id: string;
      url: string;
      events: string[];
    }[];

  test('create shows the secret once; rotate shows a new one; delete removes the endpoint', async () => {
    const s = await signIn(t, await dashboardUser(t, 'developer'));
    const created = await change(t, s, '/dashboard/webhooks', {
      url: 'https://shop.example/hooks',
      events: 'group.funded',
    });
    assert.equal(created.status, 200, created.text);
    const secret = /id="new-secret">(whsec_[A-Za-z0-9+/=]+)</.exec(created.text)?.[1];
    assert.ok(secret, 'the secret is on the answer');
    const [endpoint] = (await endpoints()).filter((e) => e.url === 'https://shop.example/hooks');
    assert.ok(endpoint);
    assert.deepEqual(endpoint.events, ['group.funded']);
    const page = await dashboardRequest(t, 'GET', '/dashboard/webhooks', { cookie: s.cookie });
    assert.match(page.text, new RegExp(endpoint.id));
    assert.doesNotMatch(page.text, /whsec_/, 'never shown again');

    const rotated = await change(t, s, `/dashboard/webhooks/${endpoint.id}/rotate`);
    assert.equal(rotated.status, 200);
    const next = /id="new-secret">(whsec_[A-Za-z0-9+/=]+)</.exec(rotated.text)?.[1];
    assert.ok(next && next !== secret);
    assert.match(rotated.text, /previous secret signs until/);

    const deleted = await change(t, s, `/dashboard/webhooks/${endpoint.id}/delete`);
    assert.equal(deleted.status, 303);
    assert.equal(deleted.location, '/dashboard/webhooks?done=deleted');
    assert.equal((await endpoints()).filter((e) => e.id === endpoint.id).length, 0);
    assert.equal((await change(t, s, `/dashboard/webhooks/${endpoint.id}/delete`)).status, 404);
  });

  test("the API's rules hold: a bad URL or event list is 400 and makes nothing", async () => {
    const s = await signIn(t, await dashboardUser(t, 'owner'));
    const before = (await endpoints()).length;
    const badUrl = await change(t, s, '/dashboard/webhooks', { url: 'not a url', events: '*' });
    assert.equal(badUrl.status, 400);
    const badEvents = await change(t, s, '/dashboard/webhooks', {
      url: 'https://shop.example/x',
      events: 'group.nothing',
    });
    assert.equal(badEvents.status, 400);
    assert.equal((await endpoints()).length, before);
  });

  test("a URL longer than the API's 2,048 characters is refused as the API refuses it", async () => {
    const s = await signIn(t, await dashboardUser(t, 'owner'));
    const before = (await endpoints()).length;
    const long = `https://shop.example/${'a'.repeat(2048 - 'https://shop.example/'.length + 1)}`;
    const api = await t.request('POST', '/v1/webhooks', {
      key: t.merchant.secretKey,
      body: { url: long, events: ['*'] },
    });
    assert.equal(api.status, 400);
    assert.equal(api.body.code, 'invalid_request');
    assert.equal(api.body.error, 'url must be at most 2048 characters');
    assert.deepEqual(api.body.details, ['url must be at most 2048 characters']);
    const page = await change(t, s, '/dashboard/webhooks', { url: long, events: '*' });
    assert.equal(page.status, 400);
    assert.match(page.text, /url must be at most 2048 characters/);
    assert.equal((await endpoints()).length, before);
    // Exactly 2,048 is taken, on both.
    const longest = long.slice(0, 2048);
    assert.equal((await change(t, s, '/dashboard/webhooks', { url: longest, events: '*' })).status, 200);
    assert.equal((await endpoints()).length, before + 1);
  });

  test("a viewer cannot add, rotate or delete; another merchant's endpoint is 404", async () => {
    const other = await t.createMerchant({ name: 'Other' });
    const theirs = await t.request('POST', '/v1/webhooks', {
      key: other.secretKey,
      body: { url: 'https://other.example/hooks', events: ['*'] },
    });
    assert.equal(theirs.status, 200);
    const viewer = await signIn(t, await dashboardUser(t, 'viewer'));
    const owner = await signIn(t, await dashboardUser(t, 'owner'));
    const before = (await endpoints()).length;
    assert.equal(
      (await change(t, viewer, '/dashboard/webhooks', { url: 'https://shop.example/v', events: '*' })).status,
      403,
    );
    assert.equal((await endpoints()).length, before);
    const viewerPage = await dashboardRequest(t, 'GET', '/dashboard/webhooks', { cookie: viewer.cookie });
    assert.doesNotMatch(viewerPage.text, /Add endpoint|Rotate secret/);
    for (const action of ['rotate', 'delete'])
      assert.equal((await change(t, owner, `/dashboard/webhooks/${theirs.body.id}/${action}`)).status, 404);
    assert.equal((await endpoints(other.secretKey)).length, 1);
    const page = await dashboardRequest(t, 'GET', '/dashboard/webhooks', { cookie: owner.cookie });
    assert.doesNotMatch(page.text, new RegExp(theirs.body.id));
  });
});
