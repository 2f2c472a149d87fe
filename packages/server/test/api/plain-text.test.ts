// Text people read (docs/api.md#plain-text). Names of people — the customer at create, members set up
// by the organizer and members who join — refuse every control character, bidirectional overrides and
// unpaired surrogates, with a 400 naming the field. Cart text (item names, fee labels) is signed as the
// merchant's catalogue has it, so line breaks and tabs stay allowed there; the rest is refused too.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { createSession, organizerToken, SESSION_ENV, sampleCart } from '../helpers/sessions.ts';

const HOSTILE: [string, string][] = [
  ['a line break', 'Ann\r\nBcc: everyone@example.com'],
  ['a NUL', 'Ann\u0000'],
  ['a tab', 'Ann\tB'],
  ['a right-to-left override', 'Ann\u202Egnp.exe'],
  ['a first-strong isolate', 'Ann\u2068x'],
  ['a lone high surrogate', 'Ann\uD800'],
  ['a lone low surrogate', '\uDC00Ann'],
  ['a line separator', 'Ann\u2028B'],
];

// A NUL is refused for every text field, before validation, with its own sentence (api/errors.ts).
const MESSAGE = /must not contain (control characters|the NUL character)/;

for (const dialect of DIALECTS) {
  describe(`plain-text names on ${dialect.name}`, { skip: dialect.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(dialect, { env: SESSION_ENV });
    });
    after(() => t?.close());

    const createWith = (body: Record<string, unknown>) =>
      t.request('POST', '/v1/sessions', { key: t.merchant.secretKey, body: { cart: sampleCart(), ...body } });

    for (const [what, name] of HOSTILE) {
      test(`${what} is refused in every name, naming the field`, async () => {
        const customer = await createWith({ customer: { name } });
        assert.equal(customer.status, 400, customer.text);
        assert.match(customer.body.error, /^customer\.name /);
        assert.match(customer.body.error, MESSAGE);

        const created = await createSession(t);
        const setUp = await t.request('PUT', `/api/v1/session/group?access=${organizerToken(created)}`, {
          body: { mode: 'equal', members: [{ name: 'Ann' }, { name }] },
        });
        assert.equal(setUp.status, 400, setUp.text);
        assert.match(setUp.body.error, /^members\[1\]\.name /);
        assert.match(setUp.body.error, MESSAGE);

        const join = await t.request('POST', `/api/v1/session/join?access=${created.group_access_token}`, {
          body: { name },
        });
        assert.equal(join.status, 400, join.text);
        assert.match(join.body.error, /^name /);
        // Nothing was stored: the group still has only its organizer.
        const page = await t.request('GET', `/api/v1/session?access=${organizerToken(created)}`);
        assert.equal(page.body.group.members.length, 1);
      });
    }

    const CART_HOSTILE = HOSTILE.filter(
      ([what]) => !['a line break', 'a tab', 'a line separator'].includes(what),
    );
    for (const [what, name] of CART_HOSTILE) {
      test(`${what} is refused in cart item names and fee labels`, async () => {
        const cart = sampleCart();
        cart.items[1] = { ...cart.items[1], name } as (typeof cart.items)[number];
        const item = await createWith({ cart });
        assert.equal(item.status, 400, item.text);
        assert.equal(item.body.code, 'invalid_cart');
        assert.match(
          item.body.error,
          /^cart\.items\[1\]\.name must not contain (NUL or other control characters|the NUL character)/,
        );
        const fee = await createWith({
          cart: { ...sampleCart({ total: 10_100 }), fees: [{ id: 'f', label: name, amount: 100 }] },
        });
        assert.equal(fee.status, 400, fee.text);
        assert.match(fee.body.error, /^cart\.fees\[0\]\.label /);
      });
    }

    test('a cart item name may hold line breaks and tabs, as merchant catalogues do', async () => {
      const cart = sampleCart();
      cart.items[0] = {
        ...cart.items[0],
        name: 'Café crème\n2nd line\twith a tab',
      } as (typeof cart.items)[number];
      const res = await createWith({ cart });
      assert.equal(res.status, 200, res.text);
    });

    test('order_ref is plain text; other metadata, item and fee ids are cart text', async () => {
      const withMetadata = (metadata: Record<string, string>) =>
        createWith({ cart: sampleCart({ metadata }) });
      const forged = await withMetadata({ order_ref: 'ORD-1\r\nTo: everyone' });
      assert.equal(forged.status, 400, forged.text);
      assert.match(forged.body.error, /^cart\.metadata\.order_ref must not contain control characters/);
      const note = await withMetadata({ order_ref: 'ORD-2', note: 'gift wrap\nplease' });
      assert.equal(note.status, 200, note.text);
      for (const value of ['x\u202Ey', 'x\uD800']) {
        const res = await withMetadata({ order_ref: 'ORD-3', note: value });
        assert.equal(res.status, 400, res.text);
        assert.match(res.body.error, /^cart\.metadata\.note must not contain/);
      }
      const cart = sampleCart();
      cart.items[0] = { ...cart.items[0], id: 'sku\u202Eexe' } as (typeof cart.items)[number];
      const id = await createWith({ cart });
      assert.equal(id.status, 400, id.text);
      assert.match(id.body.error, /^cart\.items\[0\]\.id must not contain/);
    });

    test('names in any script, with accents and emoji, are welcome', async () => {
      for (const name of ['Zoë', 'Łukasz', 'محمد', '王小明', 'Ann 😀', "O'Brien-Smith"]) {
        const res = await createWith({ customer: { name } });
        assert.equal(res.status, 200, `${name}: ${res.text}`);
      }
    });
  });
}
