// The sandbox processor on its own: deterministic outcomes by test card, the same key answering the
// same result (even racing), holds captured, released or failing at capture, refunds of what was charged;
// the card processor's currency rules, which it applies as Stripe does (processor/currencies.ts).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { systemClock } from '../../src/clock.ts';
import { CARD_CURRENCIES } from '../../src/processor/currencies.ts';
import { createSandboxProcessor } from '../../src/processor/sandbox.ts';
import type { PaymentProcessor } from '../../src/processor/types.ts';
import { type Db, openDb } from '../../src/store/db.ts';
import { migrateToLatest } from '../../src/store/migrations/index.ts';
import { DIALECTS, type TestDatabase } from '../helpers/databases.ts';

for (const dialect of DIALECTS) {
  describe(`sandbox processor on ${dialect.name}`, { skip: dialect.skip }, () => {
    let database: TestDatabase;
    let db: Db;
    let sandbox: PaymentProcessor;
    before(async () => {
      database = await dialect.create();
      db = openDb(database.url);
      await migrateToLatest(db);
      sandbox = createSandboxProcessor(db, systemClock);
    });
    after(async () => {
      await db?.close();
      await database?.drop();
    });

    let k = 0;
    const pay = (number: string, key = `key_${++k}`) => ({
      key,
      sessionId: 'gs_x',
      memberId: 'mem_x',
      amountCents: 5050,
      currency: 'usd',
      source: { card: { number, expMonth: 12, expYear: 2099, cvc: '123' } },
    });
    /** A capture, release or refund of `paymentId`, under `key`. */
    const followUp = (key: string, paymentId: string) => ({
      key,
      sessionId: 'gs_x',
      memberId: 'mem_x',
      paymentId,
      amountCents: 5050,
      currency: 'usd',
    });

    test('the same key answers the same result, also when two calls race; a new key is a new charge', async () => {
      const request = pay('4242424242424242');
      const [a, b] = await Promise.all([sandbox.charge(request), sandbox.charge(request)]);
      assert.deepEqual(a, b);
      assert.equal(a.status, 'succeeded');
      assert.deepEqual(await sandbox.charge({ ...request, amountCents: 1 }), a, 'whatever the request');
      assert.deepEqual(await sandbox.retrieve({ kind: 'charge', ...request }), a);
      const other = await sandbox.charge(pay('4242424242424242'));
      assert.ok(
        other.status === 'succeeded' && a.status === 'succeeded' && other.processorId !== a.processorId,
      );
      assert.equal(
        await sandbox.retrieve({ kind: 'charge', ...pay('4242424242424242', 'never_sent') }),
        undefined,
      );
    });

    test('a declined card is declined again for the same key, with the card facts and nothing made', async () => {
      const request = pay('4000000000009995');
      const first = await sandbox.charge(request);
      assert.equal(first.status, 'declined');
      assert.ok(
        first.status === 'declined' &&
          first.declineCode === 'insufficient_funds' &&
          first.card?.last4 === '9995',
      );
      assert.deepEqual(await sandbox.charge(request), first);
    });

    test('holds: captured once; 0341 fails at capture and its hold is gone; released holds cannot be captured', async () => {
      const hold = await sandbox.authorize(pay('4242424242424242'));
      assert.equal(hold.status, 'succeeded');
      const id = hold.status === 'succeeded' ? hold.processorId : '';
      const follow = (key: string) => followUp(key, id);
      assert.equal((await sandbox.lookup('authorize', id))?.state, 'authorized');
      assert.equal((await sandbox.capture(follow('cap_1'))).status, 'succeeded');
      assert.equal((await sandbox.lookup('authorize', id))?.state, 'captured');
      assert.equal((await sandbox.capture(follow('cap_2'))).status, 'failed', 'not twice');
      assert.equal((await sandbox.refund(follow('ref_1'))).status, 'succeeded');
      assert.equal((await sandbox.lookup('authorize', id))?.state, 'refunded');
      assert.equal((await sandbox.refund(follow('ref_2'))).status, 'failed', 'not refunded twice');

      const bad = await sandbox.authorize(pay('4000000000000341'));
      assert.equal(bad.status, 'succeeded', 'the hold itself succeeds');
      const badId = bad.status === 'succeeded' ? bad.processorId : '';
      const capture = await sandbox.capture({ ...follow('cap_3'), paymentId: badId });
      assert.equal(capture.status, 'declined');
      assert.equal((await sandbox.lookup('authorize', badId))?.state, 'released');

      const released = await sandbox.authorize(pay('4242424242424242'));
      const relId = released.status === 'succeeded' ? released.processorId : '';
      assert.equal((await sandbox.release({ ...follow('rel_1'), paymentId: relId })).status, 'succeeded');
      assert.equal((await sandbox.capture({ ...follow('cap_4'), paymentId: relId })).status, 'failed');
    });

    test('a key answered before moves nothing: what its new try would have done is rolled back', async () => {
      const hold = await sandbox.authorize(pay('4242424242424242'));
      const id = hold.status === 'succeeded' ? hold.processorId : '';
      const follow = (key: string) => followUp(key, id);
      // A refund of a hold fails, and its key keeps that answer.
      const refused = await sandbox.refund(follow('early_refund'));
      assert.equal(refused.status, 'failed');
      assert.equal((await sandbox.capture(follow('late_capture'))).status, 'succeeded');
      // The same key again, once the charge could be refunded: the same failure, and the charge stays
      // captured (the move its try made is rolled back with the record it could not keep).
      assert.deepEqual(await sandbox.refund(follow('early_refund')), refused);
      assert.equal((await sandbox.lookup('authorize', id))?.state, 'captured');
      // A disputed card's charge keeps its record and its scheduled dispute once, whatever the retries.
      const disputed = pay('4000000000000259');
      const [a, b] = await Promise.all([sandbox.charge(disputed), sandbox.charge(disputed)]);
      assert.deepEqual(a, b);
      assert.deepEqual(await sandbox.charge(disputed), a);
      const charged = a.status === 'succeeded' ? a.processorId : '';
      const scheduled = await db.kysely.selectFrom('processor_events').select('payload').execute();
      assert.equal(scheduled.filter((e) => e.payload.includes(charged)).length, 1, 'one dispute scheduled');
    });

    test('0341 charged at once is declined; 0119 is a processing error that made nothing', async () => {
      assert.equal((await sandbox.charge(pay('4000000000000341'))).status, 'declined');
      assert.equal((await sandbox.charge(pay('4000000000000119'))).status, 'failed');
    });

    test('transfers need no account in the sandbox and are listed with everything else', async () => {
      const transfer = await sandbox.transfer({
        key: 'tr_key_1',
        sessionId: 'gs_x',
        amountCents: 9799,
        currency: 'usd',
        destination: null,
      });
      assert.ok(transfer.status === 'succeeded' && transfer.processorId.startsWith('tr_'));
      const records = (await sandbox.listRecords?.()) ?? [];
      assert.ok(records.some((r) => r.kind === 'transfer' && r.amountCents === 9799));
      assert.ok(records.every((r) => /^(ch|re|tr)_/.test(r.processorId)));
    });

    let c = 0;
    const chargeIn = (currency: string, amountCents: number) =>
      sandbox.charge({
        key: `cur_${++c}`,
        sessionId: 'gs_x',
        memberId: 'mem_x',
        amountCents,
        currency,
        source: { card: { number: '4242424242424242', expMonth: 12, expYear: 2099, cvc: '123' } },
      });

    test('currencies: the sandbox answers the same rules as Stripe', () => {
      assert.equal(sandbox.currencies, CARD_CURRENCIES);
    });

    test('currencies: what Stripe would refuse (a currency not offered, off the step, below the minimum) fails, nothing charged', async () => {
      const cases = [
        ['usd', 49, 'Amount must be at least 0.50 USD.'],
        ['jpy', 49, 'Amount must be at least 50 JPY.'],
        ['kwd', 1_235, 'Invalid amount: KWD is charged in steps of 0.010 KWD.'],
        ['irr', 100_000, 'Cards cannot be charged in IRR.'],
      ] as const;
      const succeeded = async () =>
        ((await sandbox.listRecords?.()) ?? []).filter((r) => r.state === 'succeeded').length;
      const before = await succeeded();
      for (const [currency, amount, message] of cases) {
        assert.deepEqual(await chargeIn(currency, amount), { status: 'failed', message }, currency);
      }
      assert.equal(await succeeded(), before);
    });

    test('currencies: the smallest charge and an amount in steps succeed', async () => {
      for (const [currency, amount] of [
        ['usd', 50],
        ['jpy', 50],
        ['kwd', 1_230],
        ['mga', 500_000],
      ] as const) {
        const outcome = await chargeIn(currency, amount);
        assert.equal(outcome.status, 'succeeded', `${currency} ${JSON.stringify(outcome)}`);
      }
    });
  });
}
