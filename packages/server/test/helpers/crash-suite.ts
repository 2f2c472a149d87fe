// Idempotency across a crash: the server process is killed (SIGKILL) right after a session's transaction
// commits and before it answers — reached with the sandbox crash switch (SANDBOX_CRASH_AT), not a sleep.
// After a restart, the retry with the same Idempotency-Key must replay the first answer: one order, one
// session, one group.created event (docs/api.md#idempotency).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { CreatedMerchant } from '../../src/flows/merchants.ts';
import { sha256 } from '../../src/ids.ts';
import type { Db } from '../../src/store/db.ts';
import type { DialectCase } from './databases.ts';
import { type CrashFixture, crashFixture, type ServerProcess } from './server-process.ts';
import { sampleCart } from './sessions.ts';

/** The crash suite on one database, `rounds` times: every round is one kill and one restart. */
export function describeCrashSuite(dialect: DialectCase, rounds: number) {
  describe(`idempotency across a crash on ${dialect.name}`, { skip: dialect.skip }, () => {
    let fixture: CrashFixture;
    let db: Db;
    let merchant: CreatedMerchant;
    let server: ServerProcess;

    before(async () => {
      fixture = await crashFixture(dialect, {
        SANDBOX_CRASH_AT: 'session-created',
        RATE_LIMIT_SESSIONS_CREATE: '100000',
      });
      ({ db, merchant, server } = fixture);
    });
    after(() => fixture?.close());

    const create = (orderRef: string) =>
      fetch(`${server.baseUrl}/v1/sessions`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${merchant.secretKey}`,
          'content-type': 'application/json',
          'idempotency-key': `crash-${orderRef}`,
        },
        body: JSON.stringify({ cart: sampleCart({ metadata: { order_ref: orderRef } }) }),
      });

    const sessionsOf = (orderRef: string) =>
      db.kysely
        .selectFrom('sessions')
        .select(['id', 'organizer_token_hash'])
        .where('order_ref', '=', orderRef)
        .execute();

    before(() => server.start());

    for (let round = 0; round < rounds; round++) {
      test(`crash ${round + 1} of ${rounds}: killed after the commit, the retry replays; one session`, async () => {
        const orderRef = `ORD-CRASH-${dialect.name}-${round}`;
        // The process dies between the commit and the answer: the client sees the connection drop.
        await assert.rejects(create(orderRef), 'the first request got no answer');
        assert.equal(await server.exited, 'SIGKILL', 'the server was killed');
        assert.equal((await sessionsOf(orderRef)).length, 1, 'the session was committed');

        await server.start();
        const retry = await create(orderRef);
        const body = (await retry.json()) as { session_id: string; session_url: string };
        assert.equal(retry.status, 200, JSON.stringify(body));
        assert.equal(retry.headers.get('idempotent-replayed'), 'true');
        const rows = await sessionsOf(orderRef);
        assert.equal(rows.length, 1, 'exactly one session');
        assert.equal(body.session_id, rows[0]?.id);
        // The replayed link is the organizer's real one: its token hashes to the stored hash.
        const token = new URL(body.session_url).searchParams.get('access') ?? '';
        assert.equal(sha256(token), rows[0]?.organizer_token_hash);
        const events = await db.kysely
          .selectFrom('events')
          .select('type')
          .where('session_id', '=', body.session_id)
          .execute();
        assert.deepEqual(
          events.map((e) => e.type),
          ['group.created'],
        );
      });
    }

    test('the stored answer holds no organizer token in clear', async () => {
      const rows = await db.kysely.selectFrom('idempotency_keys').select(['key', 'response_body']).execute();
      assert.ok(rows.length >= 1);
      for (const row of rows) {
        assert.doesNotMatch(row.response_body ?? '', /at_[0-9A-Za-z]{10}/);
        assert.doesNotMatch(row.key, /^crash-/, 'the Idempotency-Key itself is stored only as a hash');
      }
    });
  });
}
