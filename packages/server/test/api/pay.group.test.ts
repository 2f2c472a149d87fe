// Group set-up (PUT /session/group) and joining (POST /session/join) through the pay-page API: the five
// split modes with worked amounts, their refusals, and share links that survive a re-split.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Cart } from '@group-checkout/node';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { assertError } from '../helpers/errors.ts';
import { type Created, createSession, eventRows, organizerToken, SESSION_ENV } from '../helpers/sessions.ts';

interface PageMember {
  id: string;
  name: string;
  email: string | null;
  amount_cents: number;
  share_id: string;
  share_url: string;
  status: string;
}

const amountsOf = (members: PageMember[]) => members.map((m) => m.amount_cents);

for (const dialect of DIALECTS) {
  describe(`pay-page API on ${dialect.name}: group set-up and joining`, { skip: dialect.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(dialect, { env: SESSION_ENV });
    });
    after(() => t?.close());

    const put = (created: Created, body: unknown, token = organizerToken(created)) =>
      t.request('PUT', `/api/v1/session/group?access=${token}`, { body });
    const join = (created: Created, body: unknown, token = created.group_access_token) =>
      t.request('POST', `/api/v1/session/join?access=${token}`, { body });
    const merchantView = async (created: Created) =>
      (await t.request('GET', `/v1/sessions/${created.session_id}`, { key: t.merchant.secretKey })).body;

    async function setUp(created: Created, body: unknown): Promise<PageMember[]> {
      const res = await put(created, body);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.role, 'organizer');
      return res.body.group.members;
    }

    async function refusedGroup(created: Created, body: unknown, details: string[]) {
      const before = await merchantView(created);
      const res = await put(created, body);
      assertError(res, 400, 'invalid_group');
      assert.deepEqual(res.body.details, details);
      assert.equal(res.body.error, details[0]);
      // Nothing changed.
      const afterwards = await merchantView(created);
      assert.deepEqual(afterwards.group, before.group);
    }

    test('equal: 100.00 over three is 33.34, 33.33, 33.33', async () => {
      const created = await createSession(t);
      const members = await setUp(created, {
        mode: 'equal',
        members: [{ name: 'Ada' }, { name: 'Ben' }, { name: 'Cy' }],
      });
      assert.deepEqual(amountsOf(members), [3334, 3333, 3333]);
      const shown = await merchantView(created);
      assert.equal(shown.group.mode, 'equal');
      assert.deepEqual(
        shown.group.members.map((m: PageMember) => [m.id, m.name, m.amount_cents]),
        members.map((m) => [m.id, m.name, m.amount_cents]),
      );
    });

    test('itemized: each takes units; tax and shipping are spread by item subtotal, largest remainder', async () => {
      const created = await createSession(t);
      // Items 2 × 40.00 and 1 × 10.00, plus 10.00 of tax and shipping. Subtotals 40, 40, 10 of 90:
      // extras 4.444…, 4.444…, 1.111… → 4.44, 4.44, 1.11 and the last cent to the first of the tie.
      const members = await setUp(created, {
        mode: 'itemized',
        members: [
          { name: 'Ada', items: [{ item_index: 0, quantity: 1 }] },
          { name: 'Ben', items: [{ item_index: 0, quantity: 1 }] },
          { name: 'Cy', items: [{ item_index: 1, quantity: 1 }] },
        ],
      });
      assert.deepEqual(amountsOf(members), [4445, 4444, 1111]);
      assert.deepEqual((members[2] as unknown as { items: unknown }).items, [{ item_index: 1, quantity: 1 }]);
    });

    test('itemized with fee lines: fees are spread too', async () => {
      const cart: Cart = {
        total: 1300,
        currency: 'usd',
        items: [
          { id: 'a', name: 'A', quantity: 1, unit_price: 600 },
          { id: 'b', name: 'B', quantity: 1, unit_price: 300 },
        ],
        fees: [{ id: 'svc', label: 'Service', amount: 100 }],
        tax: 300,
      };
      const created = await createSession(t, { cart });
      const members = await setUp(created, {
        mode: 'itemized',
        members: [
          { name: 'Ada', items: [{ item_index: 0, quantity: 1 }] },
          { name: 'Ben', items: [{ item_index: 1, quantity: 1 }] },
        ],
      });
      // Extras 400 split 2:1 → 266.67 and 133.33 → 267 and 133.
      assert.deepEqual(amountsOf(members), [867, 433]);
    });

    test('custom: the organizer gives every amount', async () => {
      const created = await createSession(t);
      const members = await setUp(created, {
        mode: 'custom',
        members: [
          { name: 'Ada', amount_cents: 5000 },
          { name: 'Ben', amount_cents: 3000 },
          { name: 'Cy', amount_cents: 2000 },
        ],
      });
      assert.deepEqual(amountsOf(members), [5000, 3000, 2000]);
    });

    test('percentage: basis points by largest remainder', async () => {
      const cart: Cart = {
        total: 1000,
        currency: 'eur',
        items: [{ name: 'Boat trip', quantity: 1, unit_price: 1000 }],
      };
      const created = await createSession(t, { cart });
      // 333.3, 333.3, 333.4: the leftover cent goes to the largest remainder, the third.
      const members = await setUp(created, {
        mode: 'percentage',
        members: [
          { name: 'Ada', basis_points: 3333 },
          { name: 'Ben', basis_points: 3333 },
          { name: 'Cy', basis_points: 3334 },
        ],
      });
      assert.deepEqual(amountsOf(members), [333, 333, 334]);
      assert.deepEqual(
        members.map((m) => (m as unknown as { basis_points: number }).basis_points),
        [3333, 3333, 3334],
      );
    });

    test('host-pays: the organizer takes what the others leave', async () => {
      const created = await createSession(t);
      const members = await setUp(created, {
        mode: 'host-pays',
        members: [{ name: 'Ada' }, { name: 'Ben', amount_cents: 2500 }, { name: 'Cy', amount_cents: 1500 }],
      });
      assert.deepEqual(amountsOf(members), [6000, 2500, 1500]);
      const everything = await setUp(created, {
        mode: 'host-pays',
        members: [{ name: 'Ada' }, { name: 'Ben', amount_cents: 5000 }, { name: 'Cy', amount_cents: 5000 }],
      });
      assert.deepEqual(amountsOf(everything), [0, 5000, 5000]);
    });

    test('refused: a group smaller than min_size or larger than max_size', async () => {
      const created = await createSession(t, { group_config: { min_size: 2, max_size: 3 } });
      await refusedGroup(created, { mode: 'equal', members: [{ name: 'Ada' }] }, [
        'the group must have from 2 to 3 members, got 1',
      ]);
      await refusedGroup(
        created,
        { mode: 'equal', members: ['Ada', 'Ben', 'Cy', 'Dee'].map((name) => ({ name })) },
        ['the group must have from 2 to 3 members, got 4'],
      );
    });

    test('refused: a mode the session does not allow', async () => {
      const created = await createSession(t, { group_config: { allowed_modes: ['equal', 'custom'] } });
      await refusedGroup(
        created,
        {
          mode: 'percentage',
          members: [
            { name: 'Ada', basis_points: 5000 },
            { name: 'Ben', basis_points: 5000 },
          ],
        },
        ['mode must be one of equal, custom for this session, got "percentage"'],
      );
    });

    test('refused: an unknown mode, answered with the list of modes', async () => {
      const created = await createSession(t);
      const modes = '"equal", "itemized", "custom", "percentage", "host-pays"';
      const cases: [unknown, string[]][] = [
        ['dutch', [`mode must be one of ${modes} (got "dutch")`]],
        ['', [`mode must be one of ${modes} (got "")`]],
        [null, ['mode must be a string', `mode must be one of ${modes}`]],
        [['equal'], ['mode must be a string', `mode must be one of ${modes}`]],
      ];
      for (const [mode, details] of cases) {
        const res = await put(created, { mode, members: [{ name: 'Ada' }, { name: 'Ben' }] });
        assert.equal(res.status, 400, res.text);
        assert.equal(res.body.code, 'invalid_request');
        assert.deepEqual(res.body.details, details);
        assert.equal(res.body.error, details[0]);
      }
    });

    test('refused: custom amounts that do not add up to the total', async () => {
      const created = await createSession(t);
      await refusedGroup(
        created,
        {
          mode: 'custom',
          members: [
            { name: 'Ada', amount_cents: 5000 },
            { name: 'Ben', amount_cents: 4999 },
          ],
        },
        ['the amounts add up to 9999 but the total is 10000'],
      );
      await refusedGroup(
        created,
        { mode: 'custom', members: [{ name: 'Ada', amount_cents: 10_000 }, { name: 'Ben' }] },
        ['members[1].amount_cents is required'],
      );
    });

    test('refused: basis points that do not add up to 10,000', async () => {
      const created = await createSession(t);
      await refusedGroup(
        created,
        {
          mode: 'percentage',
          members: [
            { name: 'Ada', basis_points: 5000 },
            { name: 'Ben', basis_points: 4999 },
          ],
        },
        ['the basis points add up to 9999 but must add up to 10000'],
      );
    });

    test('refused: units left unassigned, or assigned twice', async () => {
      const created = await createSession(t);
      await refusedGroup(
        created,
        {
          mode: 'itemized',
          members: [
            { name: 'Ada', items: [{ item_index: 0, quantity: 1 }] },
            { name: 'Ben', items: [{ item_index: 1, quantity: 1 }] },
          ],
        },
        ['items[0] has 2 units but 1 is assigned'],
      );
      await refusedGroup(
        created,
        {
          mode: 'itemized',
          members: [
            {
              name: 'Ada',
              items: [
                { item_index: 0, quantity: 2 },
                { item_index: 1, quantity: 1 },
              ],
            },
            { name: 'Ben', items: [{ item_index: 1, quantity: 1 }] },
          ],
        },
        ['items[1] has 1 unit but 2 are assigned'],
      );
      await refusedGroup(
        created,
        {
          mode: 'itemized',
          members: [
            {
              name: 'Ada',
              items: [
                { item_index: 0, quantity: 2 },
                { item_index: 1, quantity: 1 },
              ],
            },
            { name: 'Ben', items: [{ item_index: 7, quantity: 1 }] },
          ],
        },
        ['members[1].items[0].item_index must be an item index from 0 to 1, got 7'],
      );
    });

    test('refused: host-pays amounts over the total', async () => {
      const created = await createSession(t);
      await refusedGroup(
        created,
        {
          mode: 'host-pays',
          members: [{ name: 'Ada' }, { name: 'Ben', amount_cents: 6000 }, { name: 'Cy', amount_cents: 5000 }],
        },
        ["the other members' amounts add up to 11000, more than the total 10000"],
      );
    });

    test('refused: a member id that is not in this group, or the organizer out of first place', async () => {
      const created = await createSession(t);
      const members = await setUp(created, { mode: 'equal', members: [{ name: 'Ada' }, { name: 'Ben' }] });
      const other = await createSession(t);
      const otherOrganizer = (
        await setUp(other, { mode: 'equal', members: [{ name: 'Zed' }, { name: 'Yan' }] })
      )[0]!;
      await refusedGroup(
        created,
        { mode: 'equal', members: [{ name: 'Ada' }, { id: otherOrganizer.id, name: 'Zed' }] },
        [`members[1].id ${otherOrganizer.id} is not a member of this group`],
      );
      await refusedGroup(
        created,
        {
          mode: 'equal',
          members: [
            { id: members[1]!.id, name: 'Ben' },
            { id: members[0]!.id, name: 'Ada' },
          ],
        },
        ['members[0] must be the organizer', 'members[1] is the organizer; put them first'],
      );
    });

    test('the group token may not set the group up: 403 organizer_only', async () => {
      const created = await createSession(t);
      const res = await put(
        created,
        { mode: 'equal', members: [{ name: 'Ada' }, { name: 'Ben' }] },
        created.group_access_token,
      );
      assertError(res, 403, 'organizer_only');
      assert.equal((await merchantView(created)).group.size, 1);
    });

    test('a re-split keeps the share links of members passed with their id; dropped members lose theirs', async () => {
      const created = await createSession(t);
      const first = await setUp(created, {
        mode: 'equal',
        members: [{ name: 'Ada' }, { name: 'Ben', email: 'ben@example.com' }, { name: 'Cy' }],
      });
      const [ada, ben, cy] = first as [PageMember, PageMember, PageMember];
      const second = await setUp(created, {
        mode: 'custom',
        members: [
          { id: ada.id, name: 'Ada', amount_cents: 4000 },
          { id: ben.id, name: 'Benjamin', amount_cents: 3500 },
          { name: 'Dee', amount_cents: 2500 },
        ],
      });
      assert.deepEqual(
        second.map((m) => [m.name, m.amount_cents]),
        [
          ['Ada', 4000],
          ['Benjamin', 3500],
          ['Dee', 2500],
        ],
      );
      assert.equal(second[0]?.id, ada.id);
      assert.equal(second[0]?.share_id, ada.share_id);
      assert.equal(second[1]?.id, ben.id);
      assert.equal(second[1]?.share_id, ben.share_id);
      assert.equal(second[1]?.email, 'ben@example.com', 'an email not repeated is kept');
      assert.ok(![ada, ben, cy].some((m) => m.share_id === second[2]?.share_id));

      const benShare = await t.request('GET', `/api/v1/shares/${ben.share_id}`);
      assert.equal(benShare.body.member.amount_cents, 3500);
      assert.equal(benShare.body.member.name, 'Benjamin');
      const cyShare = await t.request('GET', `/api/v1/shares/${cy.share_id}`);
      assertError(cyShare, 404, 'share_not_found');
    });

    test('the organizer keeps their place and link even when not named by id', async () => {
      const created = await createSession(t);
      const before = await merchantView(created);
      const members = await setUp(created, { mode: 'equal', members: [{ name: 'Ada' }, { name: 'Ben' }] });
      assert.equal(members[0]?.id, before.group.members[0].id);
    });

    test('group changes write no events', async () => {
      const created = await createSession(t);
      await setUp(created, { mode: 'equal', members: [{ name: 'Ada' }, { name: 'Ben' }] });
      await join(created, { name: 'Cy' });
      assert.deepEqual(
        (await eventRows(t, created.session_id)).map((e) => e.type),
        ['group.created'],
      );
    });

    test('join: a member joins an equal group with the group token and the pending shares are re-split', async () => {
      const created = await createSession(t);
      const ben = await join(created, { name: 'Ben', email: 'ben@example.com' });
      assert.equal(ben.status, 200, ben.text);
      assert.match(ben.body.request_id, /^req_/);
      assert.equal(ben.body.session_id, created.session_id);
      assert.equal(ben.body.member.name, 'Ben');
      assert.equal(ben.body.member.amount_cents, 5000);
      assert.match(ben.body.share_id, /^shr_/);
      assert.equal(ben.body.share_url, `https://pay.example.test/s/${ben.body.share_id}`);
      assert.equal(ben.body.amount_due_cents, 5050);

      const cy = await join(created, { name: 'Cy' });
      assert.equal(cy.status, 200, cy.text);
      assert.equal(cy.body.amount_due_cents, 3333 + 33);
      const shown = await merchantView(created);
      assert.deepEqual(
        shown.group.members.map((m: PageMember) => [m.name, m.amount_cents]),
        [
          ['Organizer', 3334],
          ['Ben', 3333],
          ['Cy', 3333],
        ],
      );
      // Ben's link still works and shows his new amount.
      const share = await t.request('GET', `/api/v1/shares/${ben.body.share_id}`);
      assert.equal(share.body.member.amount_cents, 3333);
    });

    test('join: 409 group_not_joinable unless the group is split equally', async () => {
      const created = await createSession(t);
      await setUp(created, {
        mode: 'custom',
        members: [
          { name: 'Ada', amount_cents: 6000 },
          { name: 'Ben', amount_cents: 4000 },
        ],
      });
      const res = await join(created, { name: 'Cy' });
      assertError(res, 409, 'group_not_joinable');
      assert.equal((await merchantView(created)).group.size, 2);
    });

    test('join: 409 group_full past max_size', async () => {
      const created = await createSession(t, { group_config: { min_size: 1, max_size: 3 } });
      assert.equal((await join(created, { name: 'Ben' })).status, 200);
      assert.equal((await join(created, { name: 'Cy' })).status, 200);
      const res = await join(created, { name: 'Dee' });
      assertError(res, 409, 'group_full');
      assert.equal((await merchantView(created)).group.size, 3);
    });

    test('join: concurrent joins never pass max_size, and the shares still add up', async () => {
      const created = await createSession(t, { group_config: { min_size: 1, max_size: 4 } });
      const results = await Promise.all(
        ['Ben', 'Cy', 'Dee', 'Eve', 'Fay', 'Gus'].map((name) => join(created, { name })),
      );
      assert.deepEqual(results.map((r) => r.status).sort(), [200, 200, 200, 409, 409, 409]);
      for (const refused of results.filter((r) => r.status !== 200)) assertError(refused, 409, 'group_full');
      const shown = await merchantView(created);
      assert.equal(shown.group.size, 4);
      assert.equal(
        shown.group.members.reduce((sum: number, m: PageMember) => sum + m.amount_cents, 0),
        10_000,
      );
      assert.deepEqual(
        shown.group.members.map((m: PageMember) => m.amount_cents),
        [2500, 2500, 2500, 2500],
      );
    });

    test('join: a bad token is 401; a bad body is 400', async () => {
      const created = await createSession(t);
      const bad = await join(created, { name: 'Ben' }, 'gat_nope00000000000000000000');
      assertError(bad, 401, 'invalid_access_token');
      const noName = await join(created, {});
      assertError(noName, 400, 'invalid_request');
    });
  });
}
