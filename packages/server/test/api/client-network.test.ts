// The unit that rate limits and failed-auth limits count: an IPv4 address, or an IPv6 /64.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clientNetwork } from '../../src/api/auth.ts';

test('IPv4 addresses, also IPv4-mapped ones, count alone', () => {
  assert.equal(clientNetwork('203.0.113.7'), '203.0.113.7');
  assert.equal(clientNetwork('::ffff:203.0.113.7'), '203.0.113.7');
});

test('IPv6 addresses count by their /64, however they are written', () => {
  const same = ['2001:db8:1:2::1', '2001:DB8:1:2:ffff::', '2001:0db8:0001:0002:0:0:0:9', 'fe80::1%eth0'];
  assert.deepEqual(new Set(same.slice(0, 3).map(clientNetwork)), new Set(['2001:db8:1:2::/64']));
  assert.equal(clientNetwork('fe80::1%eth0'), 'fe80:0:0:0::/64');
  // Groups after '::' that reach into the first four are kept in place.
  assert.equal(clientNetwork('a::b:c:d:e:f:1'), 'a:0:b:c::/64');
  assert.notEqual(clientNetwork('2001:db8:1:2::1'), clientNetwork('2001:db8:1:3::1'));
});
