// verifyWebhook and generateTestHeaders against the Standard Webhooks reference package, used as a
// merchant would: what one signs the other verifies, both ways, including two signatures during a
// rotation; and every refusal says what is wrong.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { generateTestHeaders, signWebhook, verifyWebhook, WebhookVerificationError } from '../src/index.ts';

const secret = () => `whsec_${randomBytes(32).toString('base64')}`;
const event = { id: 'evt_1', type: 'group.funded', data: { session_id: 'gs_1', order_ref: 'ORD-1001' } };

test('a webhook signed by the Standard Webhooks package verifies, and answers the event', () => {
  const key = secret();
  const body = JSON.stringify(event);
  const at = new Date();
  const headers = {
    'webhook-id': 'evt_1',
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(key).sign('evt_1', at, body),
  };
  assert.deepEqual(verifyWebhook(body, headers, key), event);
  assert.deepEqual(
    verifyWebhook(Buffer.from(body), new Headers(headers), key),
    event,
    'Buffer body, Fetch Headers',
  );
});

test('generateTestHeaders signs what the Standard Webhooks package verifies', () => {
  const key = secret();
  const { body, headers } = generateTestHeaders(event, key);
  assert.deepEqual(new Webhook(key).verify(body, headers), event);
  assert.deepEqual(verifyWebhook(body, headers, key), event);
});

test("generateTestHeaders: webhook-id is the payload's id, as in a real delivery; else a new one each call", () => {
  const key = secret();
  assert.equal(generateTestHeaders(event, key).headers['webhook-id'], 'evt_1');
  assert.equal(
    generateTestHeaders(JSON.stringify(event), key).headers['webhook-id'],
    'evt_1',
    'a string payload',
  );
  assert.equal(generateTestHeaders(event, key, { id: 'evt_other' }).headers['webhook-id'], 'evt_other');
  // Without an id of its own, each call has its own, even many in the same millisecond.
  for (const payload of [{ type: 'group.funded' }, { id: 7 }, 'not json', null]) {
    const made = Array.from({ length: 50 }, () => generateTestHeaders(payload, key).headers['webhook-id']);
    assert.equal(new Set(made).size, made.length, `${JSON.stringify(payload)}: ${made[0]}`);
    assert.match(made[0] as string, /^evt_test_[0-9a-f]{32}$/);
  }
  const at = Math.floor(Date.now() / 1000) - 60;
  const { body, headers } = generateTestHeaders(event, key, { timestamp: at });
  assert.equal(headers['webhook-timestamp'], String(at));
  assert.deepEqual(verifyWebhook(body, headers, key), event);
});

test('during a rotation two signatures come space-separated: either secret verifies', () => {
  const [oldKey, newKey] = [secret(), secret()];
  const { body, headers } = generateTestHeaders(event, oldKey, { id: 'evt_2' });
  const both = generateTestHeaders(event, newKey, {
    id: 'evt_2',
    timestamp: Number(headers['webhook-timestamp']),
  });
  const rotated = {
    ...headers,
    'webhook-signature': `${headers['webhook-signature']} ${both.headers['webhook-signature']}`,
  };
  assert.deepEqual(verifyWebhook(body, rotated, oldKey), event);
  assert.deepEqual(verifyWebhook(body, rotated, newKey), event);
  assert.deepEqual(new Webhook(newKey).verify(body, rotated), event);
});

test('signWebhook signs with every secret given, space-separated: the Standard Webhooks package verifies each', () => {
  const [oldKey, newKey] = [secret(), secret()];
  const body = JSON.stringify(event);
  const timestamp = Math.floor(Date.now() / 1000);
  const signature = signWebhook('evt_3', timestamp, body, [oldKey, newKey]);
  assert.equal(signature.split(' ').length, 2);
  const headers = {
    'webhook-id': 'evt_3',
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signature,
  };
  assert.deepEqual(new Webhook(oldKey).verify(body, headers), event);
  assert.deepEqual(new Webhook(newKey).verify(body, headers), event);
  assert.throws(() => new Webhook(secret()).verify(body, headers), 'a third secret verifies nothing');
  assert.equal(
    signWebhook('evt_3', timestamp, body, oldKey),
    signature.split(' ')[0],
    'one secret, one signature',
  );
});

test('each refusal says what is wrong', () => {
  const key = secret();
  const { body, headers } = generateTestHeaders(event, key);
  const refused = (b: string, h: Record<string, string>, k: string, message: RegExp, options = {}) =>
    assert.throws(
      () => verifyWebhook(b, h, k, options),
      (e: unknown) => e instanceof WebhookVerificationError && message.test(e.message),
    );
  refused(body, { 'webhook-id': 'x' }, key, /missing headers webhook-timestamp, webhook-signature/);
  refused(body, headers, secret(), /no signature matches/);
  refused(`${body} `, headers, key, /no signature matches.*raw body/);
  refused(body, { ...headers, 'webhook-id': 'evt_other' }, key, /no signature matches/);
  const old = generateTestHeaders(event, key, { timestamp: Math.floor(Date.now() / 1000) - 301 });
  refused(old.body, old.headers, key, /too old: 30\d s ago/);
  const ahead = generateTestHeaders(event, key, { timestamp: Math.floor(Date.now() / 1000) + 400 });
  refused(ahead.body, ahead.headers, key, /too new/);
  // A wider tolerance lets the old one through.
  assert.deepEqual(verifyWebhook(old.body, old.headers, key, { tolerance: 600 }), event);
  refused(body, { ...headers, 'webhook-timestamp': '12abc' }, key, /whole seconds/);
  refused(body, { ...headers, 'webhook-signature': 'v2,abc' }, key, /no signature matches/);
});

test('Node IncomingMessage-style headers (lowercase, arrays) are read too', () => {
  const key = secret();
  const { body, headers } = generateTestHeaders(event, key);
  const node = { ...headers, 'webhook-signature': [headers['webhook-signature']] };
  assert.deepEqual(verifyWebhook(body, node, key), event);
});
