// Idempotency claims are fenced (docs/decisions.md#crash-safety-of-idempotent-requests): a request
// whose claim was taken over by a retry (after the abandon minute) can neither answer nor free the key,
// and its change is rolled back with its answer; an answered key is never freed or taken over.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  type AnswerSpec,
  claimKey,
  type IdempotencyClaim,
  recordAnswer,
  releaseKey,
} from '../../src/flows/idempotency.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { manualClock } from '../helpers/clock.ts';
import { DIALECTS } from '../helpers/databases.ts';

for (const dialect of DIALECTS) {
  describe(`idempotency claims on ${dialect.name}`, { skip: dialect.skip }, () => {
    let t: TestApp;
    const clock = manualClock(Date.now());
    before(async () => {
      t = await startTestApp(dialect, { clock });
    });
    after(() => t?.close());

    const spec = (claim: IdempotencyClaim, body: string): AnswerSpec<string> => ({
      claim,
      render: () => body,
    });
    const answerIn = (claim: IdempotencyClaim, body: string) =>
      t.deps.db.kysely.transaction().execute(async (trx) => {
        // A change of the flow's, to see whether it commits with the answer or rolls back with it.
        await trx
          .insertInto('events')
          .values({
            id: `evt_fence_${body}`,
            merchant_id: t.merchant.merchant.id,
            session_id: null,
            type: 'group.created',
            payload: '{}',
            created_at: clock.now(),
          })
          .execute();
        await recordAnswer(trx, spec(claim, body), body);
      });
    const changeMade = async (body: string) =>
      (
        await t.deps.db.kysely
          .selectFrom('events')
          .select('id')
          .where('id', '=', `evt_fence_${body}`)
          .execute()
      ).length === 1;

    test('a claim taken over after a minute cannot answer: its change rolls back, the retry’s counts', async () => {
      const first: IdempotencyClaim = { scope: 'test', key: 'fenced-1' };
      assert.equal(await claimKey(t.deps, first, 'hash'), undefined);
      clock.advance(61_000);
      const retry: IdempotencyClaim = { scope: 'test', key: 'fenced-1' };
      assert.equal(
        await claimKey(t.deps, retry, 'hash'),
        undefined,
        'the retry took the abandoned claim over',
      );
      await assert.rejects(answerIn(first, 'stale'), { code: 'idempotency_in_progress' });
      assert.equal(await changeMade('stale'), false, 'the stale request changed nothing');
      await releaseKey(t.deps, first);
      await answerIn(retry, 'fresh');
      assert.equal(await changeMade('fresh'), true);
      const replay = await claimKey(t.deps, { scope: 'test', key: 'fenced-1' }, 'hash');
      assert.equal(replay?.responseBody, 'fresh', 'the stale release did not free the retry’s key');
    });

    test('an answered key is neither freed by a late failure nor taken over after a minute', async () => {
      const claim: IdempotencyClaim = { scope: 'test', key: 'fenced-2' };
      assert.equal(await claimKey(t.deps, claim, 'hash'), undefined);
      await answerIn(claim, 'kept');
      await releaseKey(t.deps, claim);
      clock.advance(61_000);
      const later = await claimKey(t.deps, { scope: 'test', key: 'fenced-2' }, 'hash');
      assert.equal(later?.statusCode, 200);
      assert.equal(later?.responseBody, 'kept');
    });
  });
}
