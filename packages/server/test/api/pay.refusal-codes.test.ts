// What the pages translate a refusal by (#19, docs/api.md#errors): a refused set-up names each member it
// is about as data (`problems`: below_minimum, share_fixed) beside its English details, and a share whose
// payment failed says why as a code (`failure_code`) beside the processor's English sentence.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { CARDS, pay, payOk } from '../helpers/payments.ts';
import { createSession, organizerToken, SESSION_ENV } from '../helpers/sessions.ts';

const CART = {
  total: 3750,
  currency: 'eur',
  items: [{ id: 'sku_raclette', name: 'Raclette', quantity: 1, unit_price: 3750 }],
};

for (const dialect of DIALECTS) {
  describe(`refusals as codes on ${dialect.name}`, { skip: dialect.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(dialect, { env: SESSION_ENV });
    });
    after(async () => {
      await t?.close();
    });

    async function group() {
      const created = await createSession(t, { cart: CART });
      const put = (body: unknown) =>
        t.request('PUT', `/api/v1/session/group?access=${organizerToken(created)}`, { body });
      const res = await put({ mode: 'equal', members: [{ name: 'Ann' }, { name: 'Bea' }, { name: 'Cato' }] });
      assert.equal(res.status, 200, res.text);
      const members = res.body.group.members as { id: string; share_id: string }[];
      return { put, shares: members.map((m) => m.share_id), ids: members.map((m) => m.id) };
    }

    test('a share below the smallest card payment: below_minimum, by member, with the amounts', async () => {
      const { put } = await group();
      const res = await put({
        mode: 'custom',
        members: [
          { name: 'Ann', amount_cents: 3710 },
          { name: 'Bea', amount_cents: 20 },
          { name: 'Cato', amount_cents: 20 },
        ],
      });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.code, 'invalid_group');
      assert.match(
        res.body.error,
        /^Bea's share of 0\.20 EUR is below the smallest card payment of 0\.50 EUR$/,
      );
      assert.equal(res.body.details.length, 2);
      assert.deepEqual(res.body.problems, [
        { code: 'below_minimum', member_index: 1, amount_cents: 20, minimum_cents: 50 },
        { code: 'below_minimum', member_index: 2, amount_cents: 20, minimum_cents: 50 },
      ]);
    });

    test('a paid share the set-up would change: share_fixed, with what was paid', async () => {
      const { put, shares, ids } = await group();
      await payOk(t, shares[1] as string);
      const res = await put({
        mode: 'custom',
        members: [
          { id: ids[0], name: 'Ann', amount_cents: 1750 },
          { id: ids[1], name: 'Bea', amount_cents: 1000 },
          { id: ids[2], name: 'Cato', amount_cents: 1000 },
        ],
      });
      assert.equal(res.status, 400, res.text);
      assert.match(res.body.details[0], /^members\[1\] has paid 1250, so amount_cents must stay 1250/);
      assert.deepEqual(res.body.problems, [{ code: 'share_fixed', member_index: 1, amount_cents: 1250 }]);
    });

    test('a declined card: the share says why as a code; a payment that went through clears it', async () => {
      const { shares } = await group();
      const share = shares[2] as string;
      const declined = await pay(t, share, CARDS.insufficientFunds);
      assert.equal(declined.status, 402);
      assert.equal(declined.body.decline_code, 'insufficient_funds');
      const read = await t.request('GET', `/api/v1/shares/${share}`);
      assert.equal(read.body.failure_code, 'insufficient_funds');
      assert.match(read.body.failure, /insufficient funds/, 'the English sentence stays for the API');
      await pay(t, share, CARDS.expired);
      assert.equal((await t.request('GET', `/api/v1/shares/${share}`)).body.failure_code, 'expired_card');
      await payOk(t, share);
      const paid = await t.request('GET', `/api/v1/shares/${share}`);
      assert.deepEqual([paid.body.failure, paid.body.failure_code], [null, null]);
    });
  });
}
