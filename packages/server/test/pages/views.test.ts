// The pages' pure parts: amounts typed by the organizer read into minor units without floats, the set-up
// checks that name each field, the request body they make, the server's refusals placed by field, money in
// the reader's locale, and escaping.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import en from '../../src/i18n/catalogues/en.ts';
import { CATALOGUES } from '../../src/i18n/catalogues.ts';
import { translator } from '../../src/i18n/translate.ts';
import { formatMoney as format, timeLeft } from '../../src/pages/format.ts';
import { html, raw } from '../../src/pages/html.ts';
import { progressView } from '../../src/pages/views/parts.ts';
import {
  checkDraft,
  type Draft,
  draftOf,
  groupBody,
  parseAmount,
  parsePercent,
  serverErrors,
} from '../../src/pages/views/setup.ts';
import type { PageSession } from '../../src/pages/views/types.ts';

const T = translator(en, 'en');

const PAGE: PageSession = {
  role: 'organizer',
  session_id: 'gs_1',
  status: 'pending',
  merchant_name: 'Shop',
  order_ref: 'ORD-1',
  currency: 'usd',
  total_cents: 10_000,
  consumer_fee_rate: 0.01,
  expires_at: '2030-01-01T00:00:00.000Z',
  capture: 'immediate',
  cart: {
    items: [
      { id: 'a', name: 'Dinner', quantity: 2, unit_price: 4000 },
      { id: 'b', name: 'Cake', quantity: 1, unit_price: 1000 },
    ],
    tax: 600,
    shipping: 400,
    fees: [],
  },
  group: {
    id: 'grp_1',
    size: 1,
    mode: 'equal',
    paid_amount: 0,
    pending_amount: 10_000,
    set_up: false,
    min_size: 2,
    max_size: 10,
    allowed_modes: ['equal', 'itemized', 'custom', 'percentage', 'host-pays'],
    members: [
      { id: 'mem_1', name: 'Ann', amount_cents: 10_000, status: 'pending', is_organizer: true, email: null },
    ],
  },
};

test('typed amounts are read into exact minor units, or refused', () => {
  assert.equal(parseAmount('12.5', 'usd', 'en'), 1250);
  assert.equal(parseAmount('12,50', 'eur', 'de'), 1250);
  assert.equal(parseAmount(' 7 ', 'usd', 'en'), 700);
  assert.equal(parseAmount('0.07', 'usd', 'en'), 7);
  assert.equal(parseAmount('7300', 'jpy', 'ja'), 7300);
  assert.equal(parseAmount('1.234', 'kwd', 'en'), 1234);
  assert.equal(parseAmount('1,234', 'kwd', 'it'), 1234);
  for (const bad of ['', '1.234', '-1', '1e3', 'abc', '1.2.3', '12.5', '0x10']) {
    assert.equal(parseAmount(bad, bad === '12.5' ? 'jpy' : 'usd', 'en'), null, bad);
  }
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 99_999_999 }), (cents) => {
      const text = `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
      return parseAmount(text, 'usd', 'en') === cents;
    }),
  );
});

test('an amount is read in the page’s decimal mark; the other mark only where it cannot be a thousands separator', () => {
  // The page's own mark is the decimal one.
  assert.equal(parseAmount('12,50', 'eur', 'de'), 1250);
  assert.equal(parseAmount('1,250', 'kwd', 'it'), 1250);
  // The other mark is decimal too when no reader could take it for thousands…
  assert.equal(parseAmount('12.5', 'eur', 'de'), 1250);
  assert.equal(parseAmount('12,5', 'usd', 'en'), 1250);
  // …and refused when three digits follow it: "1.234" is a thousand and more on an Italian page.
  assert.equal(parseAmount('1.234', 'kwd', 'it'), null);
  assert.equal(parseAmount('1,234', 'kwd', 'en'), null);
  assert.equal(parseAmount('1.000', 'eur', 'de'), null);
});

test('the set-up form shows amounts, percentages and its example in the page’s decimal mark', () => {
  const eur = { ...PAGE, currency: 'eur' };
  const draftDe = draftOf(eur, 'de');
  assert.equal(draftDe.members[0]?.amount, '100,00');
  assert.equal(draftOf(eur, 'en').members[0]?.amount, '100.00');
  assert.equal(draftOf({ ...PAGE, currency: 'kwd' }, 'it').members[0]?.amount, '10,000');
  const wrong = checkDraft(
    { mode: 'custom', members: [{ ...(draftDe.members[0] as Draft['members'][number]), amount: '1.000' }] },
    eur,
    'de',
    translator(CATALOGUES.de, 'de'),
  );
  assert.match(wrong['m0-amount'] ?? '', /12,50/);
});

test('typed percentages become basis points, at most 100 % and two decimals', () => {
  assert.equal(parsePercent('33.34'), 3334);
  assert.equal(parsePercent('100'), 10_000);
  assert.equal(parsePercent('0,5'), 50);
  for (const bad of ['100.01', '101', '1.234', '-1', 'x', '']) assert.equal(parsePercent(bad), null, bad);
});

const draft = (mode: Draft['mode'], rows: Partial<Draft['members'][number]>[]): Draft => ({
  mode,
  members: rows.map((r, i) => ({
    name: `P${i}`,
    email: '',
    amount: '',
    percent: '',
    items: [0, 0],
    locked: false,
    isOrganizer: i === 0,
    status: 'pending',
    ...r,
  })),
});

test('the set-up checks name each wrong field, and the whole when the parts do not add up', () => {
  assert.deepEqual(checkDraft(draft('equal', [{}, {}]), PAGE, 'en', T), {});
  assert.deepEqual(checkDraft(draft('equal', [{}]), PAGE, 'en', T), {
    '': 'A group needs at least 2 people.',
  });
  assert.deepEqual(checkDraft(draft('equal', [{}, { name: ' ', email: 'x@' }]), PAGE, 'en', T), {
    'm1-name': 'Enter a name.',
    'm1-email': 'Enter an email address like name@example.com, or leave it empty.',
  });
  assert.deepEqual(checkDraft(draft('custom', [{ amount: '60' }, { amount: '30' }]), PAGE, 'en', T), {
    '': 'The amounts add up to $90.00; they must add up to $100.00.',
  });
  assert.deepEqual(
    Object.keys(checkDraft(draft('custom', [{ amount: '60' }, { amount: 'x' }]), PAGE, 'en', T)),
    ['m1-amount'],
  );
  assert.deepEqual(
    checkDraft(draft('percentage', [{ percent: '50' }, { percent: '49.99' }]), PAGE, 'en', T),
    {
      '': 'The percentages add up to 99.99%; they must add up to 100%.',
    },
  );
  assert.deepEqual(checkDraft(draft('host-pays', [{}, { amount: '100.01' }]), PAGE, 'en', T), {
    '': "Your friends' amounts add up to $100.01, more than the total of $100.00.",
  });
  assert.deepEqual(checkDraft(draft('itemized', [{ items: [2, 0] }, { items: [0, 1] }]), PAGE, 'en', T), {});
  assert.deepEqual(checkDraft(draft('itemized', [{ items: [1, 0] }, { items: [0, 1] }]), PAGE, 'en', T), {
    item0: 'Dinner: 1 of 2 assigned; assign every unit to someone.',
  });
});

test('the request body carries each mode’s own field, and a locked share’s amount is not sent', () => {
  assert.deepEqual(
    groupBody(draft('custom', [{ amount: '60', email: ' a@b.co ' }, { amount: '40' }]), 'usd', 'en'),
    {
      mode: 'custom',
      members: [
        { name: 'P0', email: 'a@b.co', amount_cents: 6000 },
        { name: 'P1', amount_cents: 4000 },
      ],
    },
  );
  assert.deepEqual(groupBody(draft('host-pays', [{ amount: '1' }, { amount: '25' }]), 'usd', 'en').members, [
    { name: 'P0' },
    { name: 'P1', amount_cents: 2500 },
  ]);
  assert.deepEqual(
    groupBody(draft('itemized', [{ id: 'mem_1', items: [2, 0] }, { items: [0, 1] }]), 'usd', 'en').members,
    [
      { id: 'mem_1', name: 'P0', items: [{ item_index: 0, quantity: 2 }] },
      { name: 'P1', items: [{ item_index: 1, quantity: 1 }] },
    ],
  );
  assert.deepEqual(
    groupBody(draft('custom', [{ amount: '60', locked: true }, { amount: '40' }]), 'usd', 'en').members[0],
    { name: 'P0' },
  );
});

test('a fresh group starts with the organizer and an empty row; the server’s refusals land by field', () => {
  const start = draftOf(PAGE, 'en');
  assert.equal(start.mode, 'equal');
  assert.deepEqual(
    start.members.map((m) => [m.name, m.isOrganizer]),
    [
      ['Ann', true],
      ['', false],
    ],
  );
  // The service's refusals, in the page's words (never the API's English), next to the field they name.
  const custom = {
    ...start,
    mode: 'custom' as const,
    members: [...start.members, { ...start.members[1]!, name: 'Bea' }],
  };
  const m = { currency: 'eur', locale: 'fr', t: translator(CATALOGUES.fr, 'fr') };
  const plain = (e: Record<string, string>) =>
    Object.fromEntries(Object.entries(e).map(([k, v]) => [k, v.replace(/[\u00a0\u202f]/g, ' ')]));
  assert.deepEqual(
    plain(
      serverErrors(
        {
          code: 'invalid_group',
          error: "Bea's share of 0.20 EUR is below the smallest card payment of 0.50 EUR",
          details: [
            "Bea's share of 0.20 EUR is below the smallest card payment of 0.50 EUR",
            'members[1].amount_cents must be a non-negative integer, got -1',
          ],
          problems: [{ code: 'below_minimum', member_index: 2, amount_cents: 21, minimum_cents: 50 }],
        },
        custom,
        m,
      ),
    ),
    {
      '': 'Le groupe n’a pas pu être enregistré : vérifiez ce qui est signalé ci-dessous.',
      'm2-amount': 'La part de Bea, soit 0,21 €, est inférieure au plus petit paiement par carte, 0,50 €.',
      'm1-amount': 'Cette valeur a été refusée : vérifiez-la.',
    },
  );
  assert.deepEqual(
    serverErrors({ code: 'organizer_only', error: 'Only the organizer may do this.' }, start, m),
    {
      '': 'Cela n’a pas fonctionné.',
    },
  );
});

test('money in the reader’s locale and the currency’s minor unit; time left in words', () => {
  // Intl puts a no-break space between a code and the number; compared here as a plain space.
  const formatMoney = (...args: Parameters<typeof format>) => format(...args).replace(/\u00a0/g, ' ');
  assert.equal(formatMoney(7300, 'usd', 'en-US'), '$73.00');
  assert.equal(formatMoney(7300, 'jpy', 'en-US'), '¥7,300');
  assert.equal(formatMoney(1234, 'kwd', 'en-US'), 'KWD 1.234');
  assert.equal(formatMoney(7300, 'eur', 'de-DE'), '73,00 €');
  // A large amount stays exact: no float between the integer and the text.
  assert.equal(formatMoney(99_999_999, 'usd', 'en-US'), '$999,999.99');
  const now = Date.parse('2030-01-01T00:00:00Z');
  assert.equal(timeLeft('2030-01-03T03:00:00Z', now, 'en', T), '2 days 3 hours');
  assert.equal(timeLeft('2030-01-01T01:00:00Z', now, 'en', T), '1 hour');
  assert.equal(timeLeft('2030-01-01T00:00:30Z', now, 'en', T), 'less than a minute');
  assert.equal(timeLeft('2029-12-31T00:00:00Z', now, 'en', T), 'no time');
});

test('html`…` escapes every value except markup it made', () => {
  const name = '<img src=x onerror="alert(1)">&\'';
  assert.equal(
    html`<p title="${name}">${name}</p>`.value,
    '<p title="&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;&#39;">&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;&#39;</p>',
  );
  assert.equal(html`<ul>${['a', html`<b>b</b>`, null, false, 0]}</ul>`.value, '<ul>a<b>b</b>0</ul>');
  assert.equal(html`${raw('<br>')}`.value, '<br>');
});

test('the organizer is marked "(organizer)" once: not after the default name that already says it', () => {
  const fr = translator(CATALOGUES.fr, 'fr');
  const members = (name: string) => [
    { id: 'mem_1', name, amount_cents: 5000, status: 'pending', is_organizer: true, email: null },
    { id: 'mem_2', name: 'Bob', amount_cents: 5000, status: 'pending', is_organizer: false, email: null },
  ];
  const shown = (name: string) =>
    String(
      progressView(
        {
          status: 'pending',
          total: 10_000,
          paid: 0,
          pending: 10_000,
          expiresAt: '2030-01-01T00:00:00Z',
          now: 0,
          members: members(name),
        },
        { currency: 'eur', locale: 'fr', t: fr },
      ),
    );
  assert.equal(shown('Ann').match(/\(organisateur\)/g)?.length, 1);
  assert.equal(shown('Organisateur').match(/\(organisateur\)/g), null);
  assert.match(shown('Organisateur'), /Organisateur/);
});
