// Webhook endpoint URLs in production (docs/api.md#webhook-endpoints): every URL below reaches a range our
// delivery workers must never call — private, loopback, link-local, CGNAT, metadata, documentation,
// multicast, reserved — in one of its many spellings, among them IPv6 forms that carry an IPv4 address
// (mapped, compatible, translated, NAT64, 6to4, Teredo) and IPv4 forms the URL parser rewrites (decimal,
// octal, hex, short). Each is sent over HTTP as a merchant would and must be refused. The check runs
// before anything is stored, so SQLite alone covers it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { sqliteCase } from '../helpers/databases.ts';

const REFUSED: string[] = [
  // IPv4, and the spellings the URL parser turns into dotted decimal.
  'https://127.0.0.1/hooks',
  'https://127.255.255.254/',
  'https://2130706433/',
  'https://0177.0.0.1/',
  'https://0x7f.1/',
  'https://127.1/',
  'https://0x7f000001/',
  'https://017700000001/',
  'https://127.0.0.1./',
  'https://%31%32%37.0.0.1/',
  'https://0.0.0.0/',
  'https://0/',
  'https://10.0.0.1/',
  'https://10.255.255.255/',
  'https://100.64.0.1/',
  'https://100.127.255.254/',
  'https://169.254.169.254/latest/meta-data/',
  'https://0xa9.0xfe.0xa9.0xfe/',
  'https://2852039166/',
  'https://169.254.0.1/',
  'https://172.16.0.1/',
  'https://172.31.255.255/',
  'https://192.0.0.170/',
  'https://192.0.2.1/',
  'https://192.168.0.1/',
  'https://198.18.0.1/',
  'https://198.19.255.255/',
  'https://198.51.100.7/',
  'https://203.0.113.9/',
  'https://224.0.0.1/',
  'https://239.255.255.250/',
  'https://240.0.0.1/',
  'https://255.255.255.255/',
  // IPv6 ranges.
  'https://[::1]/',
  'https://[::]/',
  'https://[0:0:0:0:0:0:0:1]/',
  'https://[fc00::1]/',
  'https://[fd12:3456::1]/',
  'https://[fe80::1]/',
  'https://[febf::1]/',
  'https://[fec0::1]/',
  'https://[ff02::1]/',
  'https://[100::1]/',
  'https://[2001:db8::1]/',
  // IPv4-mapped, in every spelling.
  'https://[::ffff:127.0.0.1]/',
  'https://[::ffff:7f00:1]/',
  'https://[0:0:0:0:0:ffff:7f00:1]/',
  'https://[::FFFF:127.0.0.1]/',
  'https://[::ffff:169.254.169.254]/',
  'https://[::ffff:a9fe:a9fe]/',
  'https://[::ffff:10.0.0.1]/',
  // IPv4-compatible and IPv4-translated.
  'https://[::127.0.0.1]/',
  'https://[::7f00:1]/',
  'https://[::10.0.0.1]/',
  'https://[::ffff:0:127.0.0.1]/',
  'https://[::ffff:0:a9fe:a9fe]/',
  // NAT64: the well-known prefix carrying a private address, and the local-use prefix.
  'https://[64:ff9b::127.0.0.1]/',
  'https://[64:ff9b::a9fe:a9fe]/',
  'https://[64:ff9b::c0a8:101]/',
  'https://[64:ff9b:1::a00:1]/',
  'https://[64:ff9b:1:ffff::808:808]/',
  // 6to4: the IPv4 address in bits 16 to 47.
  'https://[2002:7f00:1::]/',
  'https://[2002:a9fe:a9fe::1]/',
  'https://[2002:c0a8:101:1::1]/',
  'https://[2002:a00:1::]/',
  // Teredo: a public server with the client 127.0.0.1 and 169.254.169.254 (inverted), and a private server.
  'https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/',
  'https://[2001:0:4136:e378:8000:63bf:5601:5601]/',
  'https://[2001:0:a00:1::f7f7:f7f7]/',
  // Not https, and names that resolve to loopback.
  'http://93.184.216.34/hooks',
  'https://localhost/',
  'https://localhost./',
];

// Public addresses, given as literals so that no DNS is needed; some sit just outside a refused range.
const ACCEPTED: string[] = [
  'https://93.184.216.34/hooks',
  'https://8.8.8.8/',
  'https://1.1.1.1:8443/group-checkout',
  'https://134744072/',
  'https://100.63.255.255/',
  'https://100.128.0.1/',
  'https://172.15.255.255/',
  'https://172.32.0.1/',
  'https://198.17.255.255/',
  'https://198.20.0.1/',
  'https://223.255.255.254/',
  'https://[2606:4700:4700::1111]/',
  'https://[2001:4860:4860::8888]/',
  'https://[::ffff:8.8.8.8]/',
  'https://[2002:808:808::1]/',
  'https://[64:ff9b::808:808]/',
  'https://[2001:0:4136:e378:8000:63bf:f7f7:f7f7]/',
];

describe('webhook endpoint URLs in production', () => {
  let prod: TestApp;
  before(async () => {
    prod = await startTestApp(sqliteCase, {
      env: {
        SERVICE_ENV: 'production',
        RATE_LIMIT_WEBHOOKS_WRITE: '10000',
        RATE_LIMIT_WEBHOOKS_READ: '10000',
      },
    });
  });
  after(() => prod?.close());

  test('the corpus is large enough to mean something', () => {
    assert.ok(REFUSED.length >= 40, `${REFUSED.length} refused URLs`);
    assert.equal(new Set(REFUSED).size, REFUSED.length, 'no URL twice');
  });

  test('the URL parser rewrites decimal, octal, hex and short IPv4 to dotted decimal', () => {
    // What the check sees: so these are tested as the loopback address they are.
    for (const raw of ['https://2130706433/', 'https://0177.0.0.1/', 'https://0x7f.1/', 'https://127.1/']) {
      assert.equal(new URL(raw).hostname, '127.0.0.1', raw);
    }
    assert.equal(new URL('https://[::ffff:127.0.0.1]/').hostname, '[::ffff:7f00:1]');
    assert.equal(new URL('https://[::127.0.0.1]/').hostname, '[::7f00:1]');
  });

  test('every non-public address, however spelt, is refused with 400 naming url', async () => {
    const m = await prod.createMerchant({ name: 'SSRF Shop' });
    const wrong: string[] = [];
    for (const url of REFUSED) {
      const res = await prod.request('POST', '/v1/webhooks', {
        key: m.secretKey,
        body: { url, events: ['*'] },
      });
      if (res.status !== 400 || res.body?.code !== 'invalid_request' || !/^url /.test(res.body?.error)) {
        wrong.push(`${url} → ${res.status} ${res.text}`);
      }
    }
    assert.deepEqual(wrong, [], 'accepted, or refused for another reason');
    const list = await prod.request('GET', '/v1/webhooks', { key: m.secretKey });
    assert.deepEqual(list.body.data, []);
  });

  test('https URLs on public addresses, in IPv4, IPv6 and carrying forms, are accepted', async () => {
    const m = await prod.createMerchant({ name: 'Public Shop' });
    const wrong: string[] = [];
    for (const url of ACCEPTED) {
      const res = await prod.request('POST', '/v1/webhooks', {
        key: m.secretKey,
        body: { url, events: ['*'] },
      });
      if (res.status !== 200) {
        wrong.push(`${url} → ${res.status} ${res.text}`);
        continue;
      }
      // At most 16 live endpoints per merchant: make room for the next.
      const gone = await prod.request('DELETE', `/v1/webhooks/${res.body.id}`, { key: m.secretKey });
      assert.equal(gone.status, 200, gone.text);
    }
    assert.deepEqual(wrong, [], 'refused');
  });
});
