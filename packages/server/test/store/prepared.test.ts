// Statements built once (store/prepared.ts): on each database they answer what the same query built on
// every call answers, run inside the caller's transaction, are counted like any query, and refuse a
// plugin that would rewrite them. The group sums the record step reads (store/members.ts sumGroup) are
// held to the domain's own counting (domain/settling.ts countGroup, domain/members.ts paidAmountOf).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import type { KyselyPlugin } from 'kysely';
import { paidAmountOf } from '../../src/domain/members.ts';
import type { MemberStatus } from '../../src/domain/session-state.ts';
import { countGroup } from '../../src/domain/settling.ts';
import { openDb } from '../../src/store/db.ts';
import { listMembers, sumGroup } from '../../src/store/members.ts';
import { prepared } from '../../src/store/prepared.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { equalGroup } from '../helpers/payments.ts';

const STATUSES: MemberStatus[] = ['pending', 'authenticating', 'authorized', 'paid', 'refunded', 'released'];

const membersOf = prepared((db, p: { sessionId: string; from: number }) =>
  db
    .selectFrom('members')
    .select(['id', 'name', 'position'])
    .where('session_id', '=', p.sessionId)
    .where('position', '>=', p.from)
    .orderBy('position'),
);

const rename = prepared((db, p: { id: string; name: string }) =>
  db.updateTable('members').set({ name: p.name }).where('id', '=', p.id),
);

for (const dialect of DIALECTS) {
  describe(`statements built once on ${dialect.name}`, { skip: dialect.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(dialect);
    });
    after(() => t?.close());

    test('answer what the query built on every call answers, for each set of values', async () => {
      const group = await equalGroup(t, ['Ada', 'Ben', 'Cy', 'Dee']);
      const sessionId = group.created.session_id;
      for (const from of [0, 2, 9]) {
        const built = await t.deps.db.kysely
          .selectFrom('members')
          .select(['id', 'name', 'position'])
          .where('session_id', '=', sessionId)
          .where('position', '>=', from)
          .orderBy('position')
          .execute();
        assert.deepEqual(await membersOf.all(t.deps.db.kysely, { sessionId, from }), built);
      }
      assert.deepEqual(
        (await membersOf.all(t.deps.db.kysely, { sessionId, from: 2 })).map((m) => m.name),
        ['Cy', 'Dee'],
      );
      assert.equal(await membersOf.first(t.deps.db.kysely, { sessionId: 'ses_none', from: 0 }), undefined);
    });

    test("run in the caller's transaction, and are counted as queries", async () => {
      const group = await equalGroup(t, ['Ada', 'Ben']);
      const ben = group.shares[1].id;
      // A handle of its own: the app's workers query the app's handle meanwhile.
      const own = openDb(t.deps.config.databaseUrl);
      try {
        await assert.rejects(
          own.kysely.transaction().execute(async (trx) => {
            // The plugins see each statement's result too (on SQLite the statement runs on the
            // transaction's connection directly, and its result is still handed to them).
            const results: unknown[] = [];
            const watched = trx.withPlugin({
              transformQuery: ({ node }) => node,
              transformResult: async ({ result }) => {
                results.push(result.numAffectedRows ?? result.rows.length);
                return result;
              },
            });
            assert.equal(await rename.affected(watched, { id: ben, name: 'Benedict' }), 1);
            const inside = await membersOf.all(watched, { sessionId: group.created.session_id, from: 1 });
            assert.deepEqual(
              inside.map((m) => m.name),
              ['Benedict'],
              'a read in the transaction sees its write',
            );
            assert.deepEqual(results, [1n, 1]);
            throw new Error('roll back');
          }),
          /roll back/,
        );
        assert.equal(own.queryCount(), 2, 'both statements counted');
      } finally {
        await own.close();
      }
      const after = await listMembers(t.deps.db.kysely, group.created.session_id);
      assert.equal(after[1]?.name, 'Ben', 'the rename was rolled back with its transaction');
      assert.equal(await rename.affected(t.deps.db.kysely, { id: ben, name: 'Benedict' }), 1);
      assert.equal((await listMembers(t.deps.db.kysely, group.created.session_id))[1]?.name, 'Benedict');
    });

    test('refuse to run under a plugin that rewrites queries', async () => {
      const rewriting: KyselyPlugin = {
        transformQuery: ({ node }) => ({ ...node }),
        transformResult: async ({ result }) => result,
      };
      await assert.rejects(
        membersOf.all(t.deps.db.kysely.withPlugin(rewriting), { sessionId: 'ses_x', from: 0 }),
        /rewrites queries/,
      );
    });

    test("a group's sums in SQL are the domain's counts of its members", async () => {
      const group = await equalGroup(t, ['Ada', 'Ben', 'Cy', 'Dee', 'Eve']);
      const sessionId = group.created.session_id;
      const db = t.deps.db.kysely;
      const member = fc.record({
        status: fc.constantFrom(...STATUSES),
        amount: fc.constantFrom(0, 1, 2500),
        paying: fc.boolean(),
      });
      await fc.assert(
        fc.asyncProperty(fc.array(member, { minLength: 5, maxLength: 5 }), async (states) => {
          // Written straight into the rows: the sums must hold for any state, not only reachable ones.
          for (const [i, s] of states.entries()) {
            await db
              .updateTable('members')
              .set({
                status: s.status,
                amount_cents: s.amount,
                paying_attempt_id: s.paying ? `att_${i}` : null,
              })
              .where('id', '=', group.shares[i]?.id as string)
              .execute();
          }
          const members = await listMembers(db, sessionId);
          assert.deepEqual(await sumGroup(db, sessionId), {
            ...countGroup(members),
            paidCents: paidAmountOf(members),
            size: members.length,
          });
        }),
        { numRuns: 40 },
      );
    });
  });
}
