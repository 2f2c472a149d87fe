// The browser SDK's builds at {pay_url}/sdk/v1/ (docs/sdk.md#serving): the bytes of the package's dist/
// with the service's addresses written in, compressed as the client accepts, cacheable for 5 minutes with an ETag, open to every origin.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { sqliteCase } from '../helpers/databases.ts';

const dist = join(
  dirname(createRequire(import.meta.url).resolve('@group-checkout/sdk/package.json')),
  'dist',
);
const sdkVersion: string = createRequire(import.meta.url)('@group-checkout/sdk/package.json').version;

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A GET that leaves the body as sent (fetch would decompress it). */
function get(baseUrl: string, path: string, headers: Record<string, string> = {}): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(`${baseUrl}${path}`, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('SDK assets at /sdk/v1/', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(sqliteCase, {
      env: { PUBLIC_PAY_URL: 'https://pay.example.test', PUBLIC_BASE_URL: 'https://api.example.test/v1' },
    });
  });
  after(() => t?.close());

  for (const file of ['group-checkout.js', 'group-checkout.mjs']) {
    // The package's build with this service's addresses over the placeholder, %-encoded JSON.
    const built = () =>
      Buffer.from(
        readFileSync(join(dist, file), 'utf8').replace(
          '__GROUP_CHECKOUT_SERVED_BY__',
          encodeURIComponent(
            JSON.stringify({ pay: t.deps.config.publicPayUrl, api: t.deps.config.publicBaseUrl }),
          ),
        ),
      );

    test(`${file}: carries the service's own PUBLIC_PAY_URL and PUBLIC_BASE_URL, for init()'s defaults`, async () => {
      const text = (await get(t.baseUrl, `/sdk/v1/${file}`)).body.toString();
      assert.ok(!text.includes('__GROUP_CHECKOUT_SERVED_BY__'), 'the placeholder is written over');
      const encoded = /"(%7B[^"]*)"/.exec(text)?.[1] as string;
      assert.deepEqual(JSON.parse(decodeURIComponent(encoded)), {
        pay: 'https://pay.example.test',
        api: 'https://api.example.test/v1',
      });
      assert.ok(readFileSync(join(dist, file), 'utf8').includes('"__GROUP_CHECKOUT_SERVED_BY__"'));
    });

    test(`${file}: gzip when accepted, as JavaScript, cacheable, for every origin`, async () => {
      const res = await get(t.baseUrl, `/sdk/v1/${file}`, { 'accept-encoding': 'gzip, deflate' });
      assert.equal(res.status, 200);
      assert.equal(res.headers['content-type'], 'text/javascript; charset=utf-8');
      assert.equal(res.headers['content-encoding'], 'gzip');
      assert.equal(res.headers['access-control-allow-origin'], '*');
      assert.equal(res.headers['cache-control'], 'public, max-age=300');
      assert.match(String(res.headers.vary), /Accept-Encoding/i);
      assert.match(String(res.headers.etag), /^W\/"[A-Za-z0-9_-]+"$/);
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
      assert.deepEqual(gunzipSync(res.body), built());
      assert.ok(res.body.length < built().length / 2, 'compressed');
      assert.ok(
        gunzipSync(res.body).toString().includes(JSON.stringify(sdkVersion)),
        'the SDK, with its version',
      );
    });

    test(`${file}: brotli preferred when accepted, the plain file otherwise`, async () => {
      const br = await get(t.baseUrl, `/sdk/v1/${file}`, { 'accept-encoding': 'gzip, deflate, br' });
      assert.equal(br.headers['content-encoding'], 'br');
      assert.deepEqual(brotliDecompressSync(br.body), built());
      const refused = await get(t.baseUrl, `/sdk/v1/${file}`, { 'accept-encoding': 'br;q=0, gzip' });
      assert.equal(refused.headers['content-encoding'], 'gzip');
      const plain = await get(t.baseUrl, `/sdk/v1/${file}`);
      assert.equal(plain.status, 200);
      assert.equal(plain.headers['content-encoding'], undefined);
      assert.deepEqual(plain.body, built());
    });

    test(`${file}: If-None-Match with the ETag answers 304 without a body`, async () => {
      const first = await get(t.baseUrl, `/sdk/v1/${file}`, { 'accept-encoding': 'gzip' });
      const etag = String(first.headers.etag);
      const again = await get(t.baseUrl, `/sdk/v1/${file}`, {
        'if-none-match': etag,
        'accept-encoding': 'gzip',
      });
      assert.equal(again.status, 304);
      assert.equal(again.body.length, 0);
      assert.equal(again.headers.etag, etag);
      assert.equal(again.headers['cache-control'], 'public, max-age=300');
      const other = await get(t.baseUrl, `/sdk/v1/${file}`, { 'if-none-match': 'W/"something-else"' });
      assert.equal(other.status, 200);
      assert.deepEqual(other.body, built());
    });
  }

  test('the two builds have different ETags; an unknown file under /sdk/v1/ is 404', async () => {
    const js = await get(t.baseUrl, '/sdk/v1/group-checkout.js');
    const mjs = await get(t.baseUrl, '/sdk/v1/group-checkout.mjs');
    assert.notEqual(js.headers.etag, mjs.headers.etag);
    const missing = await get(t.baseUrl, '/sdk/v1/index.d.ts');
    assert.equal(missing.status, 404);
    assert.equal(JSON.parse(missing.body.toString()).code, 'route_not_found');
    const openapi = await t.request('GET', '/v1/openapi.json');
    assert.deepEqual(
      Object.keys(openapi.body.paths).filter((path) => path.startsWith('/sdk')),
      [],
      'not an API operation',
    );
  });
});
