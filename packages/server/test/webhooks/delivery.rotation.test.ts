// Secret rotation and delivery (docs/decisions.md#webhook-delivery): for 24 hours after a rotation every
// delivery carries two signatures, space-separated, one made with each secret, so a merchant may deploy
// the new secret at leisure; after the window only the new secret signs. Holds for a registered
// endpoint's own secret and for the merchant's session webhook secret alike.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { verifyWebhook } from '@group-checkout/node';
import { ROTATION_GRACE_MS } from '../../src/domain/rotation.ts';
import { rollMerchantSecret } from '../../src/flows/merchants.ts';
import { rotateWebhookSecret } from '../../src/flows/webhooks.ts';
import { startDispatcher } from '../../src/jobs/dispatcher.ts';
import type { Loop } from '../../src/jobs/loop.ts';
import { RELAXED_LIMITS, startTestApp, type TestApp } from '../helpers/app.ts';
import { manualClock } from '../helpers/clock.ts';
import { sqliteCase } from '../helpers/databases.ts';
import { eventually } from '../helpers/payments.ts';
import { type Received, Receiver } from '../helpers/receiver.ts';
import { createSession } from '../helpers/sessions.ts';

describe('webhook secret rotation', () => {
  const clock = manualClock(Date.now());
  let t: TestApp;
  let dispatcher: Loop;
  let receiver: Receiver;
  before(async () => {
    t = await startTestApp(sqliteCase, {
      clock,
      env: { ...RELAXED_LIMITS, WEBHOOK_POLL_INTERVAL_MS: '100' },
    });
    dispatcher = await startDispatcher(t.deps);
    receiver = await Receiver.start();
  });
  after(async () => {
    await dispatcher?.stop();
    await receiver?.close();
    await t?.close();
  });

  const signatures = (r: Received) => (r.headers['webhook-signature'] ?? '').split(' ');
  const verifies = (r: Received, secret: string) => {
    try {
      verifyWebhook(r.body, r.headers, secret, { now: clock.now() });
      return true;
    } catch {
      return false;
    }
  };
  const next = async (count: number) => {
    await eventually(async () => receiver.received.length === count, 5000, `delivery ${count}`);
    return receiver.received[count - 1] as Received;
  };

  test('an endpoint’s old and new secrets both sign for 24 hours, then only the new one', async () => {
    const m = await t.createMerchant({ name: 'Rotating Shop' });
    const res = await t.request('POST', '/v1/webhooks', {
      key: m.secretKey,
      body: { url: receiver.url, events: ['group.created'] },
    });
    assert.equal(res.status, 200, res.text);
    const oldSecret: string = res.body.secret;

    await createSession({ request: t.request, merchant: m }, { via: 'secret' });
    const before = await next(1);
    assert.equal(signatures(before).length, 1);
    assert.ok(verifies(before, oldSecret));

    const rotated = await rotateWebhookSecret(t.deps, m.merchant.id, res.body.id);
    assert.notEqual(rotated.secret, oldSecret);
    assert.match(rotated.secret, /^whsec_/);

    await createSession({ request: t.request, merchant: m }, { via: 'secret' });
    const during = await next(2);
    const [first, second] = signatures(during);
    assert.match(first ?? '', /^v1,[A-Za-z0-9+/]+=*$/);
    assert.match(second ?? '', /^v1,[A-Za-z0-9+/]+=*$/);
    assert.notEqual(first, second);
    assert.ok(verifies(during, rotated.secret), 'the new secret verifies');
    assert.ok(verifies(during, oldSecret), 'the old secret still verifies during the window');

    clock.advance(ROTATION_GRACE_MS);
    await createSession({ request: t.request, merchant: m }, { via: 'secret' });
    const afterWindow = await next(3);
    assert.equal(signatures(afterWindow).length, 1);
    assert.ok(verifies(afterWindow, rotated.secret));
    assert.ok(!verifies(afterWindow, oldSecret), 'the old secret stops at the end of the window');
  });

  test('the session webhook secret, rolled, signs webhook_url deliveries with both for the window', async () => {
    const m = await t.createMerchant({ name: 'Rolling Shop' });
    const oldSecret = m.merchant.sessionWebhookSecret;
    const rolled = await rollMerchantSecret(t.deps.db, m.merchant.id, 'session_webhook', clock.now());
    assert.ok(rolled);
    const newSecret = rolled.value;
    const start = receiver.received.length;
    await createSession(
      { request: t.request, merchant: m },
      { via: 'secret', extra: { webhook_url: receiver.url } },
    );
    const during = await next(start + 1);
    assert.equal(signatures(during).length, 2);
    assert.ok(verifies(during, newSecret));
    assert.ok(verifies(during, oldSecret));

    clock.advance(ROTATION_GRACE_MS + 1);
    await createSession(
      { request: t.request, merchant: m },
      { via: 'secret', extra: { webhook_url: receiver.url } },
    );
    const afterWindow = await next(start + 2);
    assert.equal(signatures(afterWindow).length, 1);
    assert.ok(verifies(afterWindow, newSecret));
    assert.ok(!verifies(afterWindow, oldSecret));
  });
});
