// Origins parsed strictly (docs/api.md#origins): only scheme://host[:port] in canonical spelling, https (http
// on loopback in the sandbox); a page's address typed by an operator gives its origin; images in production
// only from public host names.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  canonicalOrigins,
  isPublicImageUrl,
  originOfAddress,
  parseOrigin,
} from '../../src/domain/origins.ts';

test('web origins are taken in canonical spelling; everything else is refused with a reason', () => {
  for (const [raw, origin] of [
    ['https://shop.example', 'https://shop.example'],
    ['https://SHOP.Example', 'https://shop.example'],
    ['HTTPS://shop.example', 'https://shop.example'],
    ['https://shop.example:8443', 'https://shop.example:8443'],
    ['https://xn--bcher-kva.example', 'https://xn--bcher-kva.example'],
    ['https://my-shop.example', 'https://my-shop.example'],
    [`https://${'a'.repeat(63)}.example`, `https://${'a'.repeat(63)}.example`],
    ['http://localhost:4100', 'http://localhost:4100'],
    ['http://127.0.0.1:4100', 'http://127.0.0.1:4100'],
    ['http://[::1]:4100', 'http://[::1]:4100'],
  ] as const) {
    assert.deepEqual(parseOrigin(raw, 'sandbox'), { ok: true, origin }, raw);
  }
  for (const raw of [
    undefined,
    '',
    '*',
    'null',
    'https://shop.example/',
    'https://shop.example/path',
    'https://shop.example; report-uri https://evil.example',
    'https://shop.example https://evil.example',
    'https://bücher.example',
    'https://shop.example:443',
    'https://shop.example:0',
    'https://shop.example:00',
    'https://0x7f.1',
    'http://shop.example',
    'ws://shop.example',
    'https://a@shop.example',
    `https://${'a'.repeat(260)}.example`,
    'https://shop..example',
    'https://.shop.example',
    'https://-shop.example',
    'https://shop-.example:8443',
    `https://${'a'.repeat(64)}.example`,
  ]) {
    const parsed = parseOrigin(raw, 'sandbox');
    assert.equal(parsed.ok, false, String(raw));
  }
  assert.equal(parseOrigin('http://localhost:4100', 'production').ok, false, 'no http in production');
});

test('a refused origin is told what is actually wrong with it', () => {
  const reason = (parsed: ReturnType<typeof parseOrigin>) => (parsed.ok ? '' : parsed.reason);
  for (const raw of [
    'javascript:alert(1)',
    'ftp://shop.example',
    'data:text/html,hi',
    'file:///etc/passwd',
  ]) {
    const why = reason(originOfAddress(raw, 'sandbox'));
    assert.match(why, /https:\/\//, raw);
    assert.ok(why.includes(`"${new URL(raw).protocol}"`), `${raw}: ${why}`);
    assert.doesNotMatch(why, /sandboxed frame/, raw);
  }
  assert.doesNotMatch(reason(originOfAddress('javascript:alert(1)', 'production')), /localhost/);
  const long = reason(parseOrigin(`https://${'a'.repeat(64)}.example`, 'sandbox'));
  assert.match(long, /64 characters/);
  assert.match(long, /at most 63/);
  assert.doesNotMatch(long, /empty|starts or ends/);
  assert.match(reason(parseOrigin('https://shop..example', 'sandbox')), /empty part/);
  assert.match(reason(parseOrigin('https://shop.example.', 'sandbox')), /empty part/);
  assert.match(reason(parseOrigin('https://-shop.example', 'sandbox')), /"-shop" starts or ends with "-"/);
  assert.doesNotMatch(reason(parseOrigin('https://-shop.example', 'sandbox')), /empty/);
  // The Origin header a sandboxed frame sends is still named as such.
  assert.match(reason(parseOrigin('null', 'sandbox')), /sandboxed frame/);
});

test('whatever string comes in, an accepted origin holds no character a header or a policy could split on', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 60 }), (tail) => {
      for (const raw of [tail, `https://${tail}`, `https://shop.example${tail}`]) {
        const parsed = parseOrigin(raw, 'sandbox');
        if (parsed.ok) {
          assert.match(parsed.origin, /^https?:\/\/[a-z0-9.\-[\]:]+$/);
          assert.equal(parseOrigin(parsed.origin, 'sandbox').ok, true, 'canonical is stable');
        }
      }
    }),
  );
});

test('an operator may paste a page address; stored values that are not canonical are dropped', () => {
  assert.deepEqual(originOfAddress('https://Shop.example/cart?x=1', 'production'), {
    ok: true,
    origin: 'https://shop.example',
  });
  assert.deepEqual(originOfAddress('https://bücher.example', 'production'), {
    ok: true,
    origin: 'https://xn--bcher-kva.example',
  });
  for (const raw of ['*', 'null', 'not a url', 'https://u:p@shop.example', 'ftp://shop.example'])
    assert.equal(originOfAddress(raw, 'sandbox').ok, false, raw);
  assert.deepEqual(canonicalOrigins(['*', 'https://x; report-uri https://e/r', 'https://shop.example']), [
    'https://shop.example',
  ]);
});

test('images in production: https on a public host name only', () => {
  assert.equal(isPublicImageUrl('https://cdn.shopimages.com/a.png'), true);
  for (const url of [
    'http://cdn.shopimages.com/a.png',
    'https://127.0.0.1/a.png',
    'https://2130706433/a.png',
    'https://[::1]/a.png',
    'https://localhost/a.png',
    'https://nas/a.png',
    'https://printer.local/a.png',
    'https://db.internal/a.png',
    'https://router.home.arpa/a.png',
    'https://u:p@cdn.shopimages.com/a.png',
  ])
    assert.equal(isPublicImageUrl(url), false, url);
});
