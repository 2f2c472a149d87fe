// In production a delivery never connects to an address that is not public (docs/decisions.md#webhook-delivery):
// the check is made on the address the connection would use, whether the URL names it or DNS answers it
// at send time. A TCP server counting connections shows that not even a connection was opened; the same
// targets in the sandbox are connected to, so the count is not zero for want of trying.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startDispatcher } from '../../src/jobs/dispatcher.ts';
import type { Loop } from '../../src/jobs/loop.ts';
import { RELAXED_LIMITS, startTestApp, type TestApp } from '../helpers/app.ts';
import { sqliteCase } from '../helpers/databases.ts';
import { eventually } from '../helpers/payments.ts';
import { createSession } from '../helpers/sessions.ts';

const ENV = {
  ...RELAXED_LIMITS,
  WEBHOOK_RETRY_SCHEDULE: 'none',
  WEBHOOK_TIMEOUT_MS: '1000',
  WEBHOOK_POLL_INTERVAL_MS: '100',
};

/** Counts TCP connections; answers none of them. */
async function connectionCounter() {
  let connections = 0;
  const server = net.createServer((socket) => {
    connections++;
    socket.destroy();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as net.AddressInfo).port,
    count: () => connections,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

for (const env of ['production', 'sandbox'] as const) {
  describe(`delivery to a loopback address in ${env}`, () => {
    let t: TestApp;
    let dispatcher: Loop;
    let counter: Awaited<ReturnType<typeof connectionCounter>>;
    before(async () => {
      t = await startTestApp(sqliteCase, { env: { ...ENV, SERVICE_ENV: env } });
      dispatcher = await startDispatcher(t.deps);
      counter = await connectionCounter();
    });
    after(async () => {
      await dispatcher?.stop();
      await counter?.close();
      await t?.close();
    });

    const attemptsOf = async (sessionId: string) =>
      t.deps.db.kysely
        .selectFrom('delivery_attempts')
        .innerJoin('deliveries', 'deliveries.id', 'delivery_attempts.delivery_id')
        .innerJoin('events', 'events.id', 'deliveries.event_id')
        .select([
          'events.type',
          'delivery_attempts.status_code',
          'delivery_attempts.error',
          'deliveries.state',
        ])
        .where('events.session_id', '=', sessionId)
        .execute();

    for (const host of ['localhost', '127.0.0.1', '[::ffff:127.0.0.1]']) {
      test(`a webhook_url on ${host}`, async () => {
        const before = counter.count();
        // The session was made with a target that passed the check then; by the time its next event goes
        // out, the name leads to 127.0.0.1 (DNS rebinding). The row is given that target directly: the
        // check at creation is not what this test is about, the one at send time is.
        const url = `https://${host}:${counter.port}/hooks`;
        const created = await createSession(t, { via: 'secret' });
        await t.deps.db.kysely
          .updateTable('sessions')
          .set({ webhook_url: url })
          .where('id', '=', created.session_id)
          .execute();
        const cancelled = await t.request('POST', `/v1/sessions/${created.session_id}/cancel`, {
          key: t.merchant.secretKey,
        });
        assert.equal(cancelled.status, 200, cancelled.text);
        // The cancellation's delivery goes there; so does the creation's when the dispatcher fanned it out
        // after the change. Within a second or two; a machine loaded by other suites has taken more than ten.
        await eventually(async () => {
          const attempts = await attemptsOf(created.session_id);
          return (
            attempts.some((a) => a.type === 'group.cancelled') && attempts.every((a) => a.state === 'failed')
          );
        }, 30_000);
        const attempts = await attemptsOf(created.session_id);
        assert.ok(attempts.length <= 2, JSON.stringify(attempts));
        for (const attempt of attempts) {
          assert.equal(attempt.status_code, null);
          if (env === 'production')
            assert.match(attempt.error ?? '', /^refused: .*(127\.0\.0\.1|::ffff:7f00:1).* public address/);
          else assert.doesNotMatch(attempt.error ?? '', /refused/);
        }
        if (env === 'production') {
          assert.equal(counter.count(), before, 'no connection was opened');
        } else {
          // IPv4-mapped IPv6 is loopback in the sandbox too; what matters is that it was tried.
          await eventually(async () => counter.count() > before, 30_000);
        }
      });
    }
  });
}
