// `group-checkout listen --forward-to URL` (docs/api.md#local-development): run as a developer runs it,
// against a real server over HTTP, it forwards each new event of the merchant, signed with the secret it
// printed, to a receiver on this machine, and prints each forward; what happened before it started is not
// forwarded, and usage mistakes are one line on stderr.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { verifyWebhook } from '@group-checkout/node';
import { RELAXED_LIMITS, startTestApp, type TestApp } from './helpers/app.ts';
import { assertOneLineError, cli } from './helpers/cli.ts';
import { sqliteCase } from './helpers/databases.ts';
import { eventually } from './helpers/payments.ts';
import { Receiver } from './helpers/receiver.ts';
import { createSession } from './helpers/sessions.ts';

const BIN = fileURLToPath(new URL('../bin/group-checkout.js', import.meta.url));

describe('group-checkout listen', () => {
  let t: TestApp;
  let receiver: Receiver;
  let child: ChildProcess | undefined;
  let output = '';
  before(async () => {
    t = await startTestApp(sqliteCase, { env: RELAXED_LIMITS });
    receiver = await Receiver.start();
  });
  after(async () => {
    child?.kill('SIGTERM');
    await receiver?.close();
    await t?.close();
  });

  test('forwards new events, signed with the secret it printed, and prints each', async () => {
    const before = await createSession(t, { via: 'secret' });
    child = spawn(
      process.execPath,
      [BIN, 'listen', '--forward-to', receiver.url, '--api-base', `${t.baseUrl}/v1`, '--interval-ms', '100'],
      {
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '/tmp',
          GROUP_CHECKOUT_API_KEY: t.merchant.secretKey,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    child.stdout?.on('data', (chunk) => (output += chunk));
    child.stderr?.on('data', (chunk) => (output += chunk));
    // A few seconds; a minute on a machine loaded by the other suites.
    await eventually(async () => output.includes('Webhook signing secret'), 60_000, 'the ready line');
    const secret = /Webhook signing secret: (whsec_\S+)/.exec(output)?.[1] as string;
    assert.ok(secret, output);
    assert.match(output, /Forwarding Test Shop's events to http:\/\/127\.0\.0\.1:\d+\/hooks/);

    const created = await createSession(t, { via: 'secret' });
    const cancelled = await t.request('POST', `/v1/sessions/${created.session_id}/cancel`, {
      key: t.merchant.secretKey,
    });
    assert.equal(cancelled.status, 200, cancelled.text);
    await eventually(async () => receiver.received.length === 2, 10_000, 'two forwards');
    assert.deepEqual(
      receiver.received.map((r) => r.event.type),
      ['group.created', 'group.cancelled'],
      'in the order they happened',
    );
    for (const got of receiver.received) {
      assert.equal(got.event.data.session_id, created.session_id, 'nothing from before it started');
      const verified = verifyWebhook<{ id: string }>(got.body, got.headers, secret);
      assert.equal(verified.id, got.id);
      assert.match(got.id, /^evt_/);
    }
    assert.ok(!receiver.received.some((r) => r.event.data.session_id === before.session_id));
    await eventually(async () => (output.match(/→ 200/g) ?? []).length === 2, 5000, 'two printed lines');
    assert.match(output, new RegExp(`group\\.created\\s+${receiver.received[0]?.id} +→ 200 \\(\\d+ ms\\)`));
  });

  test('usage mistakes are one line on stderr', async () => {
    assertOneLineError(await cli(['listen'], {}), /--forward-to/);
    assertOneLineError(
      await cli(['listen', '--forward-to', 'http://localhost:3000/hooks'], {}),
      /secret key \(svc_sk_…\)/,
    );
    assertOneLineError(
      await cli(['listen', '--forward-to', 'http://localhost:3000/hooks', '--events', 'group.paid'], {
        GROUP_CHECKOUT_API_KEY: 'svc_sk_test_x',
      }),
      /unknown event type group\.paid/,
    );
    assertOneLineError(
      await cli(['listen', '--forward-to', 'http://localhost:3000/hooks', '--api-base', t.baseUrl + '/v1'], {
        GROUP_CHECKOUT_API_KEY: 'svc_sk_test_wrong',
      }),
      /API key/i,
    );
    // Without --api-base the API is the server's own default address, on its PORT: a refused key there
    // proves the request reached this test's server.
    assertOneLineError(
      await cli(['listen', '--forward-to', 'http://localhost:3000/hooks'], {
        GROUP_CHECKOUT_API_KEY: 'svc_sk_test_wrong',
        PORT: new URL(t.baseUrl).port,
      }),
      /API key/i,
    );
  });
});
