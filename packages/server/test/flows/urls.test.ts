// The address rule behind webhook URLs (docs/api.md#webhook-endpoints), on addresses as a resolver answers
// them: a host name whose DNS answer is any spelling of a non-public address is refused like the literal.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isPublicAddress } from '../../src/domain/addresses.ts';
import { checkWebhookEndpointUrl } from '../../src/flows/urls.ts';

test('addresses carrying a non-public IPv4 address are not public, in every spelling', () => {
  for (const address of [
    '127.0.0.1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '0:0:0:0:0:ffff:7f00:1',
    '0000:0000:0000:0000:0000:ffff:127.0.0.1',
    '::127.0.0.1',
    '::7f00:1',
    '::ffff:0:127.0.0.1',
    '::ffff:0:a9fe:a9fe',
    '64:ff9b::127.0.0.1',
    '64:ff9b::a00:1',
    '64:ff9b:1::808:808',
    '2002:7f00:1::',
    '2002:a9fe:a9fe:ffff:ffff:ffff:ffff:ffff',
    '2001:0:4136:e378:8000:63bf:80ff:fffe',
    '2001::a00:1:0:0:f7f7:f7f7',
    '::',
    '::1',
    '100::ffff',
    '3fff::1',
    'fec0::1',
    '169.254.169.254',
    '255.255.255.255',
  ]) {
    assert.equal(isPublicAddress(address), false, address);
  }
});

test('public addresses, and the forms that carry one, are public', () => {
  for (const address of [
    '8.8.8.8',
    '::ffff:8.8.8.8',
    '::ffff:808:808',
    '64:ff9b::8.8.8.8',
    '2002:808:808::1',
    '2001:0:4136:e378:8000:63bf:f7f7:f7f7',
    '2606:4700:4700::1111',
    '100:0:0:1::1',
  ]) {
    assert.equal(isPublicAddress(address), true, address);
  }
});

test('what is not an IP address is not public', () => {
  for (const address of ['', 'localhost', '1.2.3', '1.2.3.256', '::ffff:1.2.3.4:5', 'fe80::1%eth0', '::g']) {
    assert.equal(isPublicAddress(address), false, address);
  }
});

test('a host name is judged by every address it resolves to', async () => {
  const answers: Record<string, string[]> = {
    'mapped.example': ['::ffff:127.0.0.1'],
    'six-to-four.example': ['93.184.216.34', '2002:a9fe:a9fe::1'],
    'teredo.example': ['2001:0:4136:e378:8000:63bf:80ff:fffe'],
    'nat64.example': ['64:ff9b::c0a8:101'],
    'public.example': ['93.184.216.34', '2606:4700:4700::1111', '64:ff9b::808:808'],
  };
  const resolve = async (host: string) => answers[host] ?? [];
  for (const host of ['mapped.example', 'six-to-four.example', 'teredo.example', 'nat64.example']) {
    assert.equal(
      await checkWebhookEndpointUrl('url', `https://${host}/h`, 'production', resolve),
      'url must resolve to public addresses only',
      host,
    );
  }
  assert.equal(
    await checkWebhookEndpointUrl('url', 'https://public.example/h', 'production', resolve),
    undefined,
  );
});
