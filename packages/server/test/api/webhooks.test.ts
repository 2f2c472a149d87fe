// Webhook endpoints (docs/api.md#webhook-endpoints; docs/api.md#events): register with a one-time whsec_ secret, list
// without it, revoke; known event types only, at most 16 per merchant, and in production only https URLs
// that resolve to public addresses.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { RELAXED_LIMITS, startTestApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { assertError } from '../helpers/errors.ts';

const EVENT_TYPES = [
  'group.created',
  'group.share_paid',
  'group.funded',
  'group.expired',
  'group.cancelled',
  'group.share_refunded',
];

for (const dialect of DIALECTS) {
  describe(`webhook endpoints on ${dialect.name}`, { skip: dialect.skip }, () => {
    let t: TestApp;
    before(async () => {
      // Route limits are tested elsewhere; these suites send more than a minute's worth.
      t = await startTestApp(dialect, { env: RELAXED_LIMITS });
    });
    after(() => t?.close());

    const create = (key: string, body: unknown, headers: Record<string, string> = {}) =>
      t.request('POST', '/v1/webhooks', { key, body, headers });
    const list = async (key: string) => {
      const res = await t.request('GET', '/v1/webhooks', { key });
      assert.equal(res.status, 200, res.text);
      return res.body.data as { id: string; url: string; events: string[]; created_at: string }[];
    };

    describe('happy path', () => {
      test('POST registers an endpoint and answers its whsec_ secret once', async () => {
        const m = await t.createMerchant({ name: 'Hooks Shop' });
        const res = await create(m.secretKey, {
          url: 'https://hooks.example/group-checkout',
          events: ['group.funded', 'group.cancelled'],
        });
        assert.equal(res.status, 200, res.text);
        assert.match(res.body.request_id, /^req_/);
        assert.match(res.body.id, /^we_[0-9A-Za-z]{16,}$/);
        assert.equal(res.body.url, 'https://hooks.example/group-checkout');
        assert.deepEqual(res.body.events, ['group.funded', 'group.cancelled']);
        assert.ok(Math.abs(Date.parse(res.body.created_at) - Date.now()) < 60_000);
        // Standard Webhooks: whsec_ + base64 of the 32-byte key.
        const secret: string = res.body.secret;
        assert.match(secret, /^whsec_[A-Za-z0-9+/]+={0,2}$/);
        const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
        assert.equal(key.length, 32);
        assert.equal(key.toString('base64'), secret.slice('whsec_'.length));

        const second = await create(m.secretKey, { url: 'https://hooks.example/two', events: ['*'] });
        assert.notEqual(second.body.secret, secret, 'each endpoint has its own secret');
      });

      test('GET lists the endpoints, without secrets', async () => {
        const m = await t.createMerchant({ name: 'Listing Shop' });
        assert.deepEqual(await list(m.secretKey), []);
        const a = await create(m.secretKey, { url: 'https://a.example/hook', events: ['group.funded'] });
        const b = await create(m.secretKey, { url: 'https://b.example/hook', events: ['*'] });
        // Oldest first; two made in the same millisecond may come in either order.
        const data = (await list(m.secretKey)).sort((x, y) => x.url.localeCompare(y.url));
        assert.deepEqual(data, [
          {
            id: a.body.id,
            url: 'https://a.example/hook',
            events: ['group.funded'],
            created_at: a.body.created_at,
            disabled_at: null,
          },
          {
            id: b.body.id,
            url: 'https://b.example/hook',
            events: ['*'],
            created_at: b.body.created_at,
            disabled_at: null,
          },
        ]);
        const text = (await t.request('GET', '/v1/webhooks', { key: m.secretKey })).text;
        assert.ok(!text.includes('whsec_'), 'no secret in the list');
        assert.ok(!text.includes(a.body.secret));
      });

      test('"*" alone subscribes to every event type; beside a type it is 400 and registers nothing', async () => {
        const m = await t.createMerchant({ name: 'Star Shop' });
        const star = await create(m.secretKey, { url: 'https://hooks.example/all', events: ['*'] });
        assert.equal(star.status, 200, star.text);
        assert.deepEqual(star.body.events, ['*']);
        const mixed = await create(m.secretKey, {
          url: 'https://hooks.example/m',
          events: ['group.funded', '*'],
        });
        assertError(mixed, 400, 'invalid_request');
        assert.match(mixed.body.error, /\["\*"\] alone/);
        const listed = await t.request('GET', '/v1/webhooks', { key: m.secretKey });
        assert.deepEqual(
          listed.body.data.map((e: { url: string }) => e.url),
          ['https://hooks.example/all'],
        );
        const every = await create(m.secretKey, { url: 'https://hooks.example/e', events: EVENT_TYPES });
        assert.equal(every.status, 200, every.text);
        assert.deepEqual(every.body.events, EVENT_TYPES);
      });

      test('DELETE revokes the endpoint; a second DELETE is 404', async () => {
        const m = await t.createMerchant({ name: 'Revoking Shop' });
        const keep = await create(m.secretKey, { url: 'https://hooks.example/keep', events: ['*'] });
        const gone = await create(m.secretKey, { url: 'https://hooks.example/gone', events: ['*'] });
        const res = await t.request('DELETE', `/v1/webhooks/${gone.body.id}`, { key: m.secretKey });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.id, gone.body.id);
        assert.equal(res.body.deleted, true);
        assert.match(res.body.request_id, /^req_/);
        assert.deepEqual(
          (await list(m.secretKey)).map((e) => e.id),
          [keep.body.id],
        );
        const again = await t.request('DELETE', `/v1/webhooks/${gone.body.id}`, { key: m.secretKey });
        assertError(again, 404, 'webhook_not_found');
      });
    });

    describe('errors', () => {
      test('an unknown event type is 400 and the message names it', async () => {
        const res = await create(t.merchant.secretKey, {
          url: 'https://hooks.example/x',
          events: ['group.funded', 'group.exploded'],
        });
        assertError(res, 400, 'invalid_request');
        assert.match(res.body.error, /group\.exploded/);
        assert.match(res.body.error, /events\[1\]/);
      });

      test('url and events are required, and nothing else is accepted', async () => {
        const cases: [unknown, RegExp][] = [
          [{ events: ['*'] }, /url is required/],
          [{ url: 'https://hooks.example/x' }, /events is required/],
          [{ url: 'https://hooks.example/x', events: [] }, /events must have at least 1/],
          [
            { url: 'https://hooks.example/x', events: ['*'], secret: 'whsec_x' },
            /secret is not a known field/,
          ],
          [{ url: 'not a url', events: ['*'] }, /url/],
          [
            { url: 'https://hooks.example/x', events: ['group.funded', '*', 'group.funded'] },
            /^events must not contain duplicates \(events\[0\] and events\[2\] are the same\)$/,
          ],
        ];
        for (const [body, message] of cases) {
          const res = await create(t.merchant.secretKey, body);
          assertError(res, 400, 'invalid_request', JSON.stringify(body));
          assert.match(res.body.error, message);
        }
      });

      test('a merchant may have at most 16 live endpoints', async () => {
        const m = await t.createMerchant({ name: 'Busy Shop' });
        const ids: string[] = [];
        for (let i = 0; i < 16; i++) {
          const res = await create(m.secretKey, { url: `https://hooks.example/${i}`, events: ['*'] });
          assert.equal(res.status, 200, res.text);
          ids.push(res.body.id);
        }
        const seventeenth = await create(m.secretKey, { url: 'https://hooks.example/16', events: ['*'] });
        assertError(seventeenth, 400, 'webhook_limit_reached');
        assert.equal((await list(m.secretKey)).length, 16);
        // Another merchant's count is its own.
        const other = await t.createMerchant({ name: 'Quiet Shop' });
        assert.equal(
          (await create(other.secretKey, { url: 'https://q.example/', events: ['*'] })).status,
          200,
        );
        // A revoked endpoint frees its place.
        await t.request('DELETE', `/v1/webhooks/${ids[0]}`, { key: m.secretKey });
        const replacement = await create(m.secretKey, { url: 'https://hooks.example/16', events: ['*'] });
        assert.equal(replacement.status, 200, replacement.text);
      });

      test('concurrent creates never pass the cap', async () => {
        const m = await t.createMerchant({ name: 'Racing Shop' });
        const answers = await Promise.all(
          Array.from({ length: 40 }, (_, i) =>
            create(m.secretKey, { url: `https://hooks.example/race/${i}`, events: ['*'] }),
          ),
        );
        const statuses = answers.map((a) => a.status);
        assert.equal(statuses.filter((s) => s === 200).length, 16, statuses.join(','));
        for (const refused of answers.filter((a) => a.status !== 200)) {
          assertError(refused, 400, 'webhook_limit_reached');
        }
        assert.equal((await list(m.secretKey)).length, 16);
      });
    });

    describe('security', () => {
      test('another merchant’s endpoint is not found, and stays', async () => {
        const owner = await t.createMerchant({ name: 'Owner' });
        const intruder = await t.createMerchant({ name: 'Intruder' });
        const hook = await create(owner.secretKey, { url: 'https://owner.example/hook', events: ['*'] });
        assert.deepEqual(await list(intruder.secretKey), []);
        const res = await t.request('DELETE', `/v1/webhooks/${hook.body.id}`, { key: intruder.secretKey });
        assertError(res, 404, 'webhook_not_found');
        assert.deepEqual(
          (await list(owner.secretKey)).map((e) => e.id),
          [hook.body.id],
        );
      });

      test('an id too long to exist is simply not found (docs/decisions.md), up to the router limit', async () => {
        const m = await t.createMerchant({ name: 'Long Id Shop' });
        for (const id of ['we_unknown', `we_${'x'.repeat(70)}`, `we_${'x'.repeat(97)}`]) {
          const res = await t.request('DELETE', `/v1/webhooks/${id}`, { key: m.secretKey });
          assertError(res, 404, 'webhook_not_found', `${id.length} characters`);
        }
      });

      test('a publishable key may not list, create or revoke', async () => {
        const m = await t.createMerchant({ name: 'Public Shop' });
        const hook = await create(m.secretKey, { url: 'https://hooks.example/p', events: ['*'] });
        const pk = m.publishableKey;
        for (const res of [
          await t.request('GET', '/v1/webhooks', { key: pk }),
          await create(pk, { url: 'https://evil.example/steal', events: ['*'] }),
          await t.request('DELETE', `/v1/webhooks/${hook.body.id}`, { key: pk }),
        ]) {
          assertError(res, 403, 'secret_key_required');
        }
        assert.deepEqual(
          (await list(m.secretKey)).map((e) => e.url),
          ['https://hooks.example/p'],
        );
      });

      test('the sandbox accepts http and local URLs, for development', async () => {
        const m = await t.createMerchant({ name: 'Dev Shop' });
        for (const url of [
          'http://localhost:3000/hooks',
          'http://127.0.0.1:8080/hooks',
          'http://10.0.0.5/hook',
        ]) {
          const res = await create(m.secretKey, { url, events: ['*'] });
          assert.equal(res.status, 200, `${url} ${res.text}`);
        }
      });
    });

    describe('in production', () => {
      let prod: TestApp;
      before(async () => {
        prod = await startTestApp(dialect, { env: { ...RELAXED_LIMITS, SERVICE_ENV: 'production' } });
      });
      after(() => prod?.close());

      test('URLs that are not https, or reach private, loopback or link-local addresses, are refused', async () => {
        const m = await prod.createMerchant({ name: 'Live Shop' });
        assert.match(m.secretKey, /^svc_sk_live_/);
        assert.equal(m.merchant.environment, 'live');
        const refused = [
          'http://93.184.216.34/hooks',
          'https://127.0.0.1/',
          'https://127.1.2.3:8443/hooks',
          'https://10.1.2.3/',
          'https://172.16.5.4/',
          'https://192.168.1.1/',
          'https://100.64.0.1/',
          'https://169.254.169.254/latest/meta-data',
          'https://0.0.0.0/',
          'https://[::1]/',
          'https://[::]/',
          'https://[::ffff:127.0.0.1]/',
          'https://[::ffff:a9fe:a9fe]/',
          'https://[::127.0.0.1]/',
          'https://[fd00::1]/',
          'https://[fe80::1]/',
          'https://2130706433/',
          'https://0x7f.1/',
          'https://localhost/',
          'https://localhost./',
        ];
        for (const url of refused) {
          const res = await prod.request('POST', '/v1/webhooks', {
            key: m.secretKey,
            body: { url, events: ['*'] },
          });
          assertError(res, 400, 'invalid_request', url);
          assert.match(res.body.error, /^url /);
        }
        const list = await prod.request('GET', '/v1/webhooks', { key: m.secretKey });
        assert.deepEqual(list.body.data, []);
      });

      test('an https URL on a public address is accepted', async () => {
        const m = await prod.createMerchant({ name: 'Public Live Shop' });
        const res = await prod.request('POST', '/v1/webhooks', {
          key: m.secretKey,
          body: { url: 'https://93.184.216.34/hooks', events: ['group.funded'] },
        });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.url, 'https://93.184.216.34/hooks');
        assert.match(res.body.secret, /^whsec_/);
      });
    });
  });
}
