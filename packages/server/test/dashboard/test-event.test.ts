// "Send a test event" on the dashboard's webhooks page (docs/api.md#test-events), over HTTP, on SQLite and
// PostgreSQL, with the dispatcher running and receivers on loopback: the endpoint chosen, and no other,
// gets one webhook.test event signed with its secret (the Standard Webhooks reference verifier accepts it);
// its delivery and attempt show under Recent deliveries; the events API does not list it; a viewer is
// refused, another merchant's endpoint is 404, and an endpoint disabled by a 410 is refused in words.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { startDispatcher } from '../../src/jobs/dispatcher.ts';
import type { Loop } from '../../src/jobs/loop.ts';
import type { TestApp } from '../helpers/app.ts';
import { change, dashboardRequest, dashboardUser, signIn } from '../helpers/dashboard.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { startPagesApp } from '../helpers/pages.ts';
import { eventually } from '../helpers/payments.ts';
import { Receiver } from '../helpers/receiver.ts';

const FAST = { WEBHOOK_RETRY_SCHEDULE: '50ms,50ms', WEBHOOK_POLL_INTERVAL_MS: '200' };

for (const dialect of DIALECTS) {
  describe(`dashboard: send a test event on ${dialect.name}`, { skip: dialect.skip }, () => {
    let t: TestApp;
    let dispatcher: Loop;
    let receiver: Receiver;
    before(async () => {
      receiver = await Receiver.start();
      t = await startPagesApp({ env: FAST }, dialect);
      dispatcher = await startDispatcher(t.deps);
    });
    after(async () => {
      await dispatcher?.stop();
      await t?.close();
      await receiver?.close();
    });

    const register = async (path: string, key = t.merchant.secretKey) => {
      const res = await t.request('POST', '/v1/webhooks', {
        key,
        body: { url: `http://127.0.0.1:${receiver.port}${path}`, events: ['*'] },
      });
      assert.equal(res.status, 200, res.text);
      return res.body as { id: string; secret: string };
    };

    test('the chosen endpoint alone gets a signed webhook.test; it shows under Recent deliveries, not in the events API', async () => {
      const chosen = await register('/chosen');
      await register('/other');
      const s = await signIn(t, await dashboardUser(t, 'developer'));
      const sent = await change(t, s, `/dashboard/webhooks/${chosen.id}/test`);
      assert.equal(sent.status, 303, sent.text);
      assert.equal(sent.location, '/dashboard/webhooks?done=test-sent');
      await eventually(
        async () => receiver.received.some((r) => r.path === '/chosen'),
        5000,
        'the test event',
      );
      const got = receiver.received.find((r) => r.path === '/chosen');
      assert.ok(got);
      const verified = new Webhook(chosen.secret.slice('whsec_'.length)).verify(got.body, got.headers) as {
        id: string;
        type: string;
        timestamp: string;
        data: Record<string, unknown>;
      };
      assert.equal(verified.type, 'webhook.test');
      assert.deepEqual(verified.data, { webhook_id: chosen.id });
      assert.equal(got.headers['webhook-id'], verified.id);
      assert.match(verified.id, /^evt_/);

      // The page shows the delivery and its attempt, once recorded.
      await eventually(
        async () => {
          const page = await dashboardRequest(t, 'GET', '/dashboard/webhooks?done=test-sent', {
            cookie: s.cookie,
          });
          return (
            page.text.includes('A signed webhook.test event is on its way') &&
            /<strong>webhook\.test<\/strong> to <span class="mono small">http:\/\/127\.0\.0\.1:\d+\/chosen<\/span> <span class="status delivered">delivered/.test(
              page.text,
            ) &&
            /attempt 1 at [^:]+:\d\d:\d\d UTC: HTTP 200/.test(page.text)
          );
        },
        5000,
        'the delivery on the page',
      );
      // A moment for any other delivery to arrive: none does.
      await new Promise((r) => setTimeout(r, 400));
      assert.equal(
        receiver.received.filter((r) => r.path === '/other').length,
        0,
        'no other endpoint gets it',
      );
      assert.equal(receiver.received.filter((r) => r.path === '/chosen').length, 1);

      const listed = await t.request('GET', '/v1/events', { key: t.merchant.secretKey });
      assert.equal(listed.status, 200);
      assert.ok(!listed.body.data.some((e: { id: string }) => e.id === verified.id), 'not in the events API');
      const one = await t.request('GET', `/v1/events/${verified.id}`, { key: t.merchant.secretKey });
      assert.equal(one.status, 404);
    });

    test("a viewer is refused; another merchant's endpoint is 404; a disabled endpoint is refused in words", async () => {
      const endpoint = await register('/gone');
      const viewer = await signIn(t, await dashboardUser(t, 'viewer'));
      assert.equal((await change(t, viewer, `/dashboard/webhooks/${endpoint.id}/test`)).status, 403);
      const other = await t.createMerchant({ name: 'Other' });
      const theirs = await register('/theirs', other.secretKey);
      const s = await signIn(t, await dashboardUser(t, 'owner'));
      assert.equal((await change(t, s, `/dashboard/webhooks/${theirs.id}/test`)).status, 404);
      assert.equal((await change(t, s, '/dashboard/webhooks/we_nothing/test')).status, 404);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(receiver.received.filter((r) => ['/gone', '/theirs'].includes(r.path)).length, 0);

      // The receiver answers 410 Gone: the endpoint is disabled, and a test to it is refused.
      receiver.byPath.set('/gone', { kind: 'status', status: 410 });
      assert.equal((await change(t, s, `/dashboard/webhooks/${endpoint.id}/test`)).status, 303);
      await eventually(
        async () => {
          const page = await dashboardRequest(t, 'GET', '/dashboard/webhooks', { cookie: s.cookie });
          return page.text.includes('after a 410');
        },
        5000,
        'the endpoint disabled',
      );
      const refused = await change(t, s, `/dashboard/webhooks/${endpoint.id}/test`);
      assert.equal(refused.status, 400);
      assert.match(refused.text, /This endpoint is disabled/);
      const page = await dashboardRequest(t, 'GET', '/dashboard/webhooks', { cookie: s.cookie });
      assert.ok(
        !page.text.includes(`Send test event to ${endpoint.id}`),
        'no test button on a disabled endpoint',
      );
    });
  });
}
