// Languages (docs/decisions.md#languages): every catalogue has every English key, in the plural forms its
// language needs, with the same {placeholders}; Accept-Language is negotiated by q-value onto our eight
// languages; amounts are Intl's for the locale and currency.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import en from '../../src/i18n/catalogues/en.ts';
import { CATALOGUES } from '../../src/i18n/catalogues.ts';
import { chooseLocale, LOCALES } from '../../src/i18n/locales.ts';
import { translator } from '../../src/i18n/translate.ts';
import { formatMoney } from '../../src/pages/format.ts';

/** Words these languages share with English: a loanword, or simply the same word. */
const SAME_IN_ENGLISH = new Set([
  'es cart.total',
  'fr cart.total',
  'pt cart.total',
  'nl status.session.pending',
  'it groupPage.email',
  'de setup.person',
  'de setup.name',
  'nl setup.percent',
]);

/** Messages that are our name alone, the same in every language. */
const BRAND_ONLY = new Set(['problem.brand', 'mail.signature']);

const PLURAL = /\.(zero|one|two|few|many|other)$/;
const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

test('every language has every key, in its own plural forms, with the same placeholders', () => {
  const english = Object.keys(en);
  const singular = english.filter((k) => !PLURAL.test(k));
  const pluralBases = [...new Set(english.filter((k) => PLURAL.test(k)).map((k) => k.replace(PLURAL, '')))];
  for (const lang of LOCALES) {
    const catalogue = CATALOGUES[lang];
    const categories = new Intl.PluralRules(lang).resolvedOptions().pluralCategories;
    const expected = [
      ...singular,
      ...pluralBases.flatMap((base) =>
        categories.filter((c) => c !== 'many' || `${base}.many` in catalogue).map((c) => `${base}.${c}`),
      ),
    ].sort();
    assert.deepEqual(Object.keys(catalogue).sort(), expected, `${lang}: missing or extra keys`);
    for (const [key, text] of Object.entries(catalogue)) {
      const source = en[key as keyof typeof en] ?? en[`${key.replace(PLURAL, '')}.other` as keyof typeof en];
      assert.ok(text.trim().length > 0, `${lang} ${key} is empty`);
      // A plural form may leave the number out ("the share"), never add one English lacks.
      const wanted = placeholders(source).filter((p) => !(PLURAL.test(key) && p === 'count'));
      const got = placeholders(text).filter((p) => !(PLURAL.test(key) && p === 'count'));
      assert.deepEqual(got, wanted, `${lang} ${key}: placeholders`);
      // A message of placeholders and punctuation alone ("{label}: {amount}") has no words to translate.
      const wordless = !/\p{L}/u.test(source.replace(/\{\w+\}/g, ''));
      if (lang !== 'en' && !SAME_IN_ENGLISH.has(`${lang} ${key}`) && !BRAND_ONLY.has(key) && !wordless)
        assert.notEqual(text, source, `${lang} ${key} is still English`);
    }
  }
});

test('a translator fills placeholders and picks the plural form', () => {
  const fr = translator(CATALOGUES.fr, 'fr');
  assert.equal(fr('card.pay', { amount: '12,50 €' }), 'Payer 12,50 €');
  assert.match(fr('share.equal.count', { total: '90 €', count: 1 }), /1 personne\.$/);
  assert.match(fr('share.equal.count', { total: '90 €', count: 3 }), /3 personnes\.$/);
  const ja = translator(CATALOGUES.ja, 'ja');
  assert.match(ja('organizer.coverAsk', { count: 1, amount: '￥500' }), /1 件/);
  assert.throws(() => fr('no.such.key' as never), /no message "no.such.key"/);
});

test('Accept-Language: the best of our languages by q-value, its region kept for formats', () => {
  assert.deepEqual(chooseLocale(undefined, 'fr-CH, fr;q=0.9, en;q=0.8'), { lang: 'fr', intl: 'fr-CH' });
  assert.deepEqual(chooseLocale(undefined, 'sv-SE, de;q=0.7, en;q=0.5'), { lang: 'de', intl: 'de' });
  assert.deepEqual(chooseLocale(undefined, 'en;q=0.2, ja;q=0.9'), { lang: 'ja', intl: 'ja' });
  assert.deepEqual(chooseLocale(undefined, 'pt-BR'), { lang: 'pt', intl: 'pt-BR' });
  assert.deepEqual(chooseLocale(undefined, 'zh-CN, ko'), { lang: 'en', intl: 'en' });
  assert.deepEqual(chooseLocale(undefined, '*, not a tag!!'), { lang: 'en', intl: 'en' });
  assert.deepEqual(chooseLocale(undefined, undefined), { lang: 'en', intl: 'en' });
  assert.deepEqual(chooseLocale(undefined, 'nl;q=0, it'), { lang: 'it', intl: 'it' });
  // A q-value RFC 9110 does not allow voids its entry; q=1.000 and Q=0.5 are fine.
  assert.deepEqual(chooseLocale(undefined, 'de;q=-1, fr'), { lang: 'fr', intl: 'fr' });
  assert.deepEqual(chooseLocale(undefined, 'de;q=2, ja;q=abc, it;q=0.1'), { lang: 'it', intl: 'it' });
  assert.deepEqual(chooseLocale(undefined, 'de;q=0.5, nl;Q=1.000'), { lang: 'nl', intl: 'nl' });
  // Extensions do not reach the formats: no other numerals or calendar on a payment page.
  assert.deepEqual(chooseLocale(undefined, 'de-DE-u-nu-arab'), { lang: 'de', intl: 'de-DE' });
  assert.deepEqual(chooseLocale(undefined, 'en-US-u-nu-thai'), { lang: 'en', intl: 'en-US' });
  assert.deepEqual(chooseLocale(undefined, 'fr-u-ca-islamic'), { lang: 'fr', intl: 'fr' });
  assert.deepEqual(chooseLocale('ja', 'ja-u-nu-fullwide'), { lang: 'ja', intl: 'ja' });
  // A session's own language wins; the reader's region still shapes its amounts when it is that language.
  assert.deepEqual(chooseLocale('es', 'fr-FR'), { lang: 'es', intl: 'es' });
  assert.deepEqual(chooseLocale('es', 'es-MX'), { lang: 'es', intl: 'es-MX' });
  assert.deepEqual(chooseLocale('auto', 'nl-BE'), { lang: 'nl', intl: 'nl-BE' });
});

test('amounts per locale and currency: JPY without decimals, EUR in French as 12,50 €', () => {
  const plain = (s: string) => s.replace(/[\u00a0\u202f]/g, ' ');
  assert.equal(plain(formatMoney(1250, 'eur', 'fr')), '12,50 €');
  assert.equal(plain(formatMoney(1250, 'eur', 'de')), '12,50 €');
  assert.equal(formatMoney(1250, 'eur', 'en'), '€12.50');
  assert.equal(plain(formatMoney(1250, 'eur', 'nl')), '€ 12,50');
  assert.equal(formatMoney(7300, 'jpy', 'ja'), '￥7,300');
  assert.equal(formatMoney(7300, 'jpy', 'en'), '¥7,300');
  assert.equal(formatMoney(123456, 'usd', 'en'), '$1,234.56');
  assert.equal(plain(formatMoney(123456, 'usd', 'es')), '1234,56 US$');
  assert.equal(plain(formatMoney(123456, 'brl', 'pt-BR')), 'R$ 1.234,56');
});

test("the SDK's button and modal speak the same languages as the pages", async () => {
  const { WORDS } = await import('../../../sdk/src/words.ts');
  assert.deepEqual(Object.keys(WORDS).sort(), [...LOCALES].sort());
  for (const [lang, words] of Object.entries(WORDS)) {
    for (const text of Object.values(words)) assert.ok(text.trim(), lang);
    if (lang !== 'en') assert.notEqual(words.label, WORDS.en.label, `${lang}: the label is still English`);
  }
});
