// Trust at the browser boundary (docs/api.md#origins): a publishable-key create takes its Origin only when it
// is a web origin, registered when the merchant registered any; what such a create may set beyond the cart
// (no webhook_url, redirects on its own origin, public https images in production); and no Origin value,
// sent or stored, ever reaches Access-Control-Allow-Origin, the pages' Content-Security-Policy or the
// target their events are posted to unparsed.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { signCart } from '@group-checkout/node';
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { assertError } from '../helpers/errors.ts';
import { rawHttp } from '../helpers/raw-http.ts';
import { listedSessionIds, organizerToken, SESSION_ENV, sampleCart } from '../helpers/sessions.ts';

/** Origin values no browser page has: each is 400 invalid_origin, and nothing is recorded. */
const BAD_ORIGINS: [string, string | undefined][] = [
  ['missing', undefined],
  ['empty', ''],
  ['star', '*'],
  ['null', 'null'],
  ['a path', 'https://shop.example/checkout'],
  ['a trailing slash', 'https://shop.example/'],
  ['a query', 'https://shop.example?x=1'],
  ['a directive after ;', 'https://shop.example; report-uri https://evil.example/r'],
  ['a list', 'https://shop.example https://evil.example'],
  ['a comma list', 'https://shop.example,https://evil.example'],
  // (Spaces around a header value are not part of it, RFC 9110 §5.5: only spaces inside count.)
  ['a space before the port', 'https://shop.example :8443'],
  ['a space in the host', 'https://shop .example'],
  ['a quote', "https://shop.example'"],
  ['a unicode host', 'https://bücher.example'],
  ['a unicode host (CJK)', 'https://例え.jp'],
  ['credentials', 'https://user@shop.example'],
  ['another scheme', 'javascript:alert(1)'],
  ['a data URL', 'data:text/html,x'],
  ['plain http off loopback', 'http://shop.example'],
  ['a default port spelled out', 'https://shop.example:443'],
  ['an IPv4 literal in hex', 'https://0x7f.1'],
];

/** The session's recorded origins as the organizer's page in embed mode is allowed to be framed by. */
function frameAncestors(res: { headers: Headers }): string {
  const policy = res.headers.get('content-security-policy') ?? '';
  const directive = policy.split('; ').find((d) => d.startsWith('frame-ancestors '));
  assert.ok(directive, policy);
  return directive.slice('frame-ancestors '.length);
}

function pageData(html: string) {
  const match = /<script type="application\/json" id="page-data">(.*?)<\/script>/s.exec(html);
  assert.ok(match, 'the page carries its data');
  return JSON.parse(match[1] as string);
}

for (const dialect of DIALECTS) {
  describe(`browser trust on ${dialect.name}: origins in the sandbox`, { skip: dialect.skip }, () => {
    let t: TestApp;
    let open: TestMerchant;
    before(async () => {
      t = await startTestApp(dialect, { env: SESSION_ENV });
      open = await t.createMerchant({ name: 'No Origins Yet', allowedOrigins: [] });
    });
    after(() => t?.close());

    /** A signed publishable-key create with exactly this Origin header (raw bytes: fetch mends some). */
    async function createFrom(merchant: TestMerchant, origin: string | undefined, extra = {}) {
      const cart = sampleCart();
      const body = JSON.stringify({
        cart,
        signature: signCart(cart, merchant.merchant.signingSecret),
        ...extra,
      });
      return rawHttp(t.baseUrl, {
        method: 'POST',
        path: '/v1/sessions',
        headers: {
          Authorization: `Bearer ${merchant.publishableKey}`,
          'Content-Type': 'application/json',
          ...(origin === undefined ? {} : { Origin: origin }),
        },
        body,
      });
    }

    test('every Origin that is not scheme://host[:port] is 400 invalid_origin, with no CORS echo and nothing recorded', async () => {
      for (const merchant of [t.merchant, open]) {
        for (const [name, origin] of BAD_ORIGINS) {
          const res = await createFrom(merchant, origin);
          assertError(res, 400, 'invalid_origin', name);
          assert.match(res.body.error, /^The Origin header is not a web origin: /, name);
          // No Origin at all is a server's request: it is told which key a server uses.
          assert.equal(
            /From a server, create sessions with the secret key/.test(res.body.error),
            !origin,
            name,
          );
          assert.equal(res.headers.get('access-control-allow-origin'), null, `${name}: no CORS echo`);
          // Nothing the request sent comes back in any header.
          if (origin && origin.length > 3) assert.ok(!res.raw.split('\r\n\r\n')[0]?.includes(origin), name);
        }
        assert.deepEqual(await listedSessionIds(t, merchant), [], 'no session was recorded');
      }
    });

    test('a registered origin is accepted and recorded canonically; another one is 403 origin_not_allowed', async () => {
      const ok = await createFrom(t.merchant, 'https://SHOP.example');
      assert.equal(ok.status, 200, ok.text);
      assert.equal(ok.headers.get('access-control-allow-origin'), 'https://shop.example');
      const row = await t.deps.db.kysely
        .selectFrom('sessions')
        .select('embed_origins')
        .where('id', '=', ok.body.session_id)
        .executeTakeFirstOrThrow();
      assert.deepEqual(JSON.parse(row.embed_origins), ['https://shop.example']);

      const other = await createFrom(t.merchant, 'https://evil.example');
      assertError(other, 403, 'origin_not_allowed');
      assert.equal(
        other.body.error,
        // The merchant's other origins are not told to whoever holds its public key.
        "Origin https://evil.example is not one of this merchant's registered origins. " +
          `Register it with: group-checkout merchant update --merchant ${t.merchant.merchant.id} --allowed-origin https://evil.example`,
      );
    });

    test('an Idempotency-Key replays only to the origin that sent it; from another it meets the origin check', async () => {
      const cart = sampleCart();
      const body = JSON.stringify({ cart, signature: signCart(cart, t.merchant.merchant.signingSecret) });
      const send = (origin: string | undefined) =>
        rawHttp(t.baseUrl, {
          method: 'POST',
          path: '/v1/sessions',
          headers: {
            Authorization: `Bearer ${t.merchant.publishableKey}`,
            'Content-Type': 'application/json',
            'Idempotency-Key': 'replay-by-origin',
            ...(origin === undefined ? {} : { Origin: origin }),
          },
          body,
        });
      const first = await send('https://shop.example');
      assert.equal(first.status, 200, first.text);
      for (const [origin, status, code] of [
        ['https://evil.example', 403, 'origin_not_allowed'],
        ['null', 400, 'invalid_origin'],
        ['*', 400, 'invalid_origin'],
        [undefined, 400, 'invalid_origin'],
      ] as const) {
        const res = await send(origin);
        assertError(res, status, code, String(origin));
        assert.equal(res.headers.get('idempotent-replayed'), null, String(origin));
        assert.ok(!res.text.includes(first.body.session_id), `${origin}: the session is not given away`);
      }
      const again = await send('https://shop.example');
      assert.equal(again.status, 200, again.text);
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.equal(again.body.session_id, first.body.session_id);
    });

    test('the sandbox takes any web origin until the merchant registers one (http on loopback included)', async () => {
      for (const origin of ['https://anything.example', 'http://localhost:4100', 'http://127.0.0.1:8080']) {
        const res = await createFrom(open, origin);
        assert.equal(res.status, 200, `${origin}: ${res.text}`);
      }
    });

    test('a punycode host, as browsers send a unicode one, is an origin', async () => {
      const merchant = await t.createMerchant({ allowedOrigins: ['https://xn--bcher-kva.example'] });
      const res = await createFrom(merchant, 'https://xn--bcher-kva.example');
      assert.equal(res.status, 200, res.text);
    });

    test('the page CSP and the postMessage target: only the recorded origin, whatever parent_origin says', async () => {
      const created = await createFrom(t.merchant, 'https://shop.example');
      assert.equal(created.status, 200, created.text);
      const path = `/session/${created.body.session_id}?access=${organizerToken(created.body)}&embed=1`;
      for (const [name, parent] of BAD_ORIGINS) {
        const query = parent === undefined ? '' : `&parent_origin=${encodeURIComponent(parent)}`;
        const page = await t.request('GET', path + query);
        assert.equal(page.status, 200, name);
        assert.equal(frameAncestors(page), 'https://shop.example', name);
        assert.equal(pageData(page.text).ctx.parentOrigin, undefined, `${name}: no target to post to`);
      }
      const page = await t.request(
        'GET',
        `${path}&parent_origin=${encodeURIComponent('https://shop.example')}`,
      );
      assert.equal(pageData(page.text).ctx.parentOrigin, 'https://shop.example');
    });

    test('a row recorded before origins were parsed never reaches the policy or the page as stored', async () => {
      const created = await createFrom(t.merchant, 'https://shop.example');
      const stored = ['*', 'https://x; report-uri https://evil.example/r', 'null', 'https://shop.example'];
      await t.deps.db.kysely
        .updateTable('sessions')
        .set({ embed_origins: JSON.stringify(stored) })
        .where('id', '=', created.body.session_id)
        .execute();
      const path = `/session/${created.body.session_id}?access=${organizerToken(created.body)}&embed=1`;
      for (const parent of ['*', 'https://x; report-uri https://evil.example/r', 'https://shop.example']) {
        const page = await t.request('GET', `${path}&parent_origin=${encodeURIComponent(parent)}`);
        assert.equal(frameAncestors(page), 'https://shop.example');
        assert.ok(!(page.headers.get('content-security-policy') ?? '').includes('report-uri'));
        const target = pageData(page.text).ctx.parentOrigin;
        assert.equal(target, parent === 'https://shop.example' ? parent : undefined);
      }
    });

    test('CORS echoes only a parsed origin, in the preflight and the answer', async () => {
      for (const [name, origin] of BAD_ORIGINS) {
        if (origin === undefined) continue;
        const preflight = await rawHttp(t.baseUrl, {
          method: 'OPTIONS',
          path: '/v1/sessions',
          headers: { Origin: origin, 'Access-Control-Request-Method': 'POST' },
        });
        assert.equal(preflight.status, 204, name);
        assert.equal(preflight.headers.get('access-control-allow-origin'), null, name);
      }
      const preflight = await rawHttp(t.baseUrl, {
        method: 'OPTIONS',
        path: '/v1/sessions',
        headers: { Origin: 'https://shop.example', 'Access-Control-Request-Method': 'POST' },
      });
      assert.equal(preflight.headers.get('access-control-allow-origin'), 'https://shop.example');
      const read = await t.request('GET', '/v1/sessions/gs_unknown0000000000', {
        key: t.merchant.publishableKey,
        headers: { origin: 'null' },
      });
      assertError(read, 404, 'session_not_found');
      assert.equal(read.headers.get('access-control-allow-origin'), null);
    });

    test('a publishable key may not set webhook_url (400), nor redirect off its own origin', async () => {
      const hook = await createFrom(t.merchant, 'https://shop.example', {
        webhook_url: 'https://attacker.example/hooks',
      });
      assertError(hook, 400, 'not_allowed_with_publishable_key');
      assert.match(
        hook.body.error,
        /webhook_url cannot be set with a publishable key: register your endpoint/,
      );
      for (const field of ['success_url', 'cancel_url']) {
        const away = await createFrom(t.merchant, 'https://shop.example', {
          [field]: 'https://attacker.example/landing',
        });
        assertError(away, 400, 'invalid_request', field);
        assert.deepEqual(away.body.details, [
          `${field} must be on the page's own origin (https://shop.example) when the session is created with a publishable key`,
        ]);
      }
      const own = await createFrom(t.merchant, 'https://shop.example', {
        success_url: 'https://shop.example/thanks',
        cancel_url: 'https://shop.example/cart',
      });
      assert.equal(own.status, 200, own.text);
      // The secret key (the merchant's server) still sets all three.
      const cart = sampleCart();
      const server = await t.request('POST', '/v1/sessions', {
        key: t.merchant.secretKey,
        body: {
          cart,
          signature: signCart(cart, t.merchant.merchant.signingSecret),
          webhook_url: 'https://hooks.shop.example/group-checkout',
          success_url: 'https://www.shop.example/thanks',
        },
      });
      assert.equal(server.status, 200, server.text);
    });
  });

  describe(`browser trust on ${dialect.name}: origins and images in production`, {
    skip: dialect.skip,
  }, () => {
    let t: TestApp;
    let none: TestMerchant;
    before(async () => {
      t = await startTestApp(dialect, { env: { ...SESSION_ENV, SERVICE_ENV: 'production' } });
      none = await t.createMerchant({ name: 'Unregistered', allowedOrigins: [] });
    });
    after(() => t?.close());

    const post = (merchant: TestMerchant, origin: string, cart = sampleCart()) =>
      t.request('POST', '/v1/sessions', {
        key: merchant.publishableKey,
        headers: { origin },
        body: { cart, signature: signCart(cart, merchant.merchant.signingSecret) },
      });

    test('a merchant with no registered origin creates no browser session; http is refused even on localhost', async () => {
      const res = await post(none, 'https://shop.example');
      assertError(res, 403, 'origin_not_allowed');
      assert.match(res.body.error, /^Origin https:\/\/shop\.example is not registered: in production/);
      assert.ok(res.body.error.includes(`merchant update --merchant ${none.merchant.id} --allowed-origin`));
      assertError(await post(none, 'http://localhost:4100'), 400, 'invalid_origin');
      assert.equal((await post(t.merchant, 'https://shop.example')).status, 200);
    });

    test('image_url must be https on a public host name: no IP literal, no loopback or local name', async () => {
      const withImage = (image_url: string) => {
        const cart = sampleCart();
        cart.items = cart.items.map((item, i) => (i === 0 ? { ...item, image_url } : item));
        return cart;
      };
      for (const url of [
        'https://127.0.0.1:9/a.png',
        'https://10.0.0.8/a.png',
        'https://[::1]/a.png',
        'https://0x7f.1/a.png',
        'https://2130706433/a.png',
        'https://localhost/a.png',
        'https://printer.local/a.png',
        'https://files.internal/a.png',
        'https://intranet/a.png',
        'https://metadata.google.internal/a.png',
      ]) {
        const res = await post(t.merchant, 'https://shop.example', withImage(url));
        assertError(res, 400, 'invalid_request', url);
        assert.deepEqual(
          res.body.details,
          ['cart.items[0].image_url must be https on a public host name (no IP address, no local name)'],
          url,
        );
      }
      const ok = await post(
        t.merchant,
        'https://shop.example',
        withImage('https://cdn.shopimages.com/a.png'),
      );
      assert.equal(ok.status, 200, ok.text);
    });
  });
}
