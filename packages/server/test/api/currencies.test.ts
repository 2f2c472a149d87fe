// Currencies over HTTP (docs/api.md#currencies), on SQLite and PostgreSQL with the sandbox processor, which
// applies the card processor's rules: a currency cards cannot be charged in is refused at create, as is a
// total off the currency's step or below the smallest card payment; a group set-up, join or cover whose
// share (with its fee) is below the minimum is refused naming the member; shares of KWD and MGA come out in
// their steps, with fees to match, and are paid so.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Cart } from '@group-checkout/node';
import { createSandboxProcessor } from '../../src/processor/sandbox.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { assertError } from '../helpers/errors.ts';
import { payOk } from '../helpers/payments.ts';
import { type Created, createSession, organizerToken, SESSION_ENV } from '../helpers/sessions.ts';

const cartOf = (currency: string, total: number): Cart => ({
  total,
  currency,
  items: [{ id: 'sku', name: 'Dinner', quantity: 1, unit_price: total }],
});

interface PageMember {
  name: string;
  amount_cents: number;
  amount_due_cents: number;
  share_id: string;
}

for (const dialect of DIALECTS) {
  describe(`currencies on ${dialect.name}`, { skip: dialect.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(dialect, { env: SESSION_ENV });
    });
    after(() => t?.close());

    const create = (cart: Cart) =>
      t.request('POST', '/v1/sessions', { key: t.merchant.secretKey, body: { cart } });
    const sessionCount = async () =>
      (
        await t.deps.db.kysely
          .selectFrom('sessions')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n;
    const put = (created: Created, body: unknown) =>
      t.request('PUT', `/api/v1/session/group?access=${organizerToken(created)}`, { body });
    async function setUp(created: Created, body: unknown): Promise<PageMember[]> {
      const res = await put(created, body);
      assert.equal(res.status, 200, res.text);
      return res.body.group.members;
    }
    const members = (...names: string[]) => names.map((name) => ({ name }));
    const merchantGroup = async (created: Created) =>
      (await t.request('GET', `/v1/sessions/${created.session_id}`, { key: t.merchant.secretKey })).body
        .group;

    test('the app runs the sandbox, which answers the same rules as Stripe', () => {
      assert.equal(t.deps.processor.name, 'sandbox');
      assert.equal(t.deps.processor.currencies, createSandboxProcessor(t.deps.db, t.deps.clock).currencies);
    });

    test('a currency cards cannot be charged in is 400 currency_not_supported naming it; nothing is made', async () => {
      const before = await sessionCount();
      for (const currency of ['irr', 'kpw', 'ars']) {
        const res = await create(cartOf(currency, 100_000));
        assertError(res, 400, 'currency_not_supported', currency);
        assert.match(res.body.error, new RegExp(`\\b${currency.toUpperCase()}\\b`));
      }
      assert.equal(await sessionCount(), before);
    });

    test('a total off the currency’s step is 400 invalid_cart saying why (KWD in 0.010, MGA in whole ariary)', async () => {
      const kwd = await create(cartOf('kwd', 12_345));
      assertError(kwd, 400, 'invalid_cart');
      assert.equal(
        kwd.body.error,
        'cart.total 12.345 KWD is not a whole number of 0.010 KWD: cards are charged in KWD in steps of 0.010 KWD, so every share must be one',
      );
      const mga = await create(cartOf('mga', 1_000_050));
      assertError(mga, 400, 'invalid_cart');
      assert.match(mga.body.error, /steps of 1\.00 MGA/);
    });

    test('a total that no card could pay even whole is 400 invalid_cart: JPY 10 is below ¥50', async () => {
      const res = await create(cartOf('jpy', 10));
      assertError(res, 400, 'invalid_cart');
      assert.equal(res.body.error, 'cart.total 10 JPY is below the smallest card payment of 50 JPY');
      assert.deepEqual(res.body.details, [res.body.error]);
    });

    test('USD: a share below US$0.50 is refused at set-up, naming each member and the minimum; nothing changes', async () => {
      const created = await createSession(t, { cart: cartOf('usd', 100) });
      const before = await merchantGroup(created);
      const res = await put(created, { mode: 'equal', members: members('Ada', 'Bob', 'Cy') });
      assertError(res, 400, 'invalid_group');
      assert.deepEqual(res.body.details, [
        "Ada's share of 0.34 USD is below the smallest card payment of 0.50 USD",
        "Bob's share of 0.33 USD is below the smallest card payment of 0.50 USD",
        "Cy's share of 0.33 USD is below the smallest card payment of 0.50 USD",
      ]);
      assert.equal(res.body.error, res.body.details[0]);
      assert.deepEqual(await merchantGroup(created), before);
      // Two shares of 0.50 pass; so does a share of 0 (nothing to charge), host-pays.
      assert.deepEqual(
        (await setUp(created, { mode: 'equal', members: members('Ada', 'Bob') })).map((m) => m.amount_cents),
        [50, 50],
      );
      const hostPays = await setUp(created, {
        mode: 'host-pays',
        members: [{ name: 'Ada' }, { name: 'Bob', amount_cents: 0 }],
      });
      assert.deepEqual(
        hostPays.map((m) => m.amount_cents),
        [100, 0],
      );
    });

    test('the fee counts: a HUF share of 173.30 is below Ft 175.00 alone, but charged 175.03 with its fee', async () => {
      const created = await createSession(t, { cart: cartOf('huf', 34_660) });
      const shares = await setUp(created, { mode: 'equal', members: members('Ada', 'Bob') });
      assert.deepEqual(
        shares.map((m) => [m.amount_cents, m.amount_due_cents]),
        [
          [17_330, 17_503],
          [17_330, 17_503],
        ],
      );
      const refused = await put(created, {
        mode: 'custom',
        members: [
          { name: 'Ada', amount_cents: 17_340 },
          { name: 'Bob', amount_cents: 17_320 },
        ],
      });
      assertError(refused, 400, 'invalid_group');
      assert.deepEqual(refused.body.details, [
        "Bob's share of 173.20 HUF (174.93 HUF with the service fee) is below the smallest card payment of 175.00 HUF",
      ]);
    });

    test('joining an equal group is refused when it would cut the shares below the minimum', async () => {
      const created = await createSession(t, { cart: cartOf('usd', 120) });
      await setUp(created, { mode: 'equal', members: members('Ada', 'Bob') });
      const res = await t.request('POST', `/api/v1/session/join?access=${created.group_access_token}`, {
        body: { name: 'Cy' },
      });
      assertError(res, 400, 'invalid_group');
      assert.equal(
        res.body.error,
        "Cy cannot join: Ada's share of 0.40 USD is below the smallest card payment of 0.50 USD",
      );
      assert.equal((await merchantGroup(created)).members.length, 2);
    });

    test('JPY: ¥1,000 split three ways is ¥334, ¥333, ¥333, each with its ¥3 fee; ISK shares below 200 kr are refused', async () => {
      const jpy = await createSession(t, { cart: cartOf('jpy', 1_000) });
      const shares = await setUp(jpy, { mode: 'equal', members: members('Ada', 'Bob', 'Cy') });
      assert.deepEqual(
        shares.map((m) => [m.amount_cents, m.amount_due_cents]),
        [
          [334, 337],
          [333, 336],
          [333, 336],
        ],
      );
      const isk = await createSession(t, { cart: cartOf('isk', 1_500) });
      const res = await put(isk, { mode: 'equal', members: members('A', 'B', 'C', 'D', 'E', 'F', 'G', 'H') });
      assertError(res, 400, 'invalid_group');
      assert.equal(res.body.details.length, 8);
      assert.equal(
        res.body.details[0],
        "A's share of 188 ISK (190 ISK with the service fee) is below the smallest card payment of 200 ISK",
      );
    });

    test('KWD: shares and fees in steps of 0.010, custom amounts off the step refused, a share paid in steps', async () => {
      const created = await createSession(t, { cart: cartOf('kwd', 10_000) });
      const shares = await setUp(created, { mode: 'equal', members: members('Ada', 'Bob', 'Cy') });
      // 10.000 in three: 3.340, 3.330, 3.330; 1 % fees of 0.0334 and 0.0333 round to 0.030.
      assert.deepEqual(
        shares.map((m) => [m.amount_cents, m.amount_due_cents]),
        [
          [3_340, 3_370],
          [3_330, 3_360],
          [3_330, 3_360],
        ],
      );
      const refused = await put(created, {
        mode: 'custom',
        members: [
          { name: 'Ada', amount_cents: 5_005 },
          { name: 'Bob', amount_cents: 4_995 },
        ],
      });
      assertError(refused, 400, 'invalid_group');
      assert.match(refused.body.details[0], /^members\[0\]\.amount_cents \(Ada\) must be a multiple of 10/);
      // The page shows, and the card is charged, the same whole number of steps.
      const bob = shares[1] as PageMember;
      const share = await t.request('GET', `/api/v1/shares/${bob.share_id}`);
      assert.equal(share.body.consumer_fee_cents, 30);
      assert.equal(share.body.amount_due_cents, 3_360);
      await payOk(t, bob.share_id);
      const records = (await t.deps.processor.listRecords?.()) ?? [];
      const charges = records.filter((r) => r.kind === 'charge' && r.currency === 'kwd');
      assert.deepEqual(
        charges.map((r) => [r.amountCents, r.state]),
        [[3_360, 'succeeded']],
      );
    });

    test('MGA: equal shares in whole ariary', async () => {
      const created = await createSession(t, { cart: cartOf('mga', 2_000_000) });
      const shares = await setUp(created, { mode: 'equal', members: members('Ada', 'Bob', 'Cy') });
      assert.deepEqual(
        shares.map((m) => m.amount_cents),
        [666_700, 666_700, 666_600],
      );
      for (const m of shares) assert.equal(m.amount_due_cents % 100, 0);
    });
  });
}
