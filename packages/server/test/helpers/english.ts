// "No English left": the English words in a text that its own language's messages do not also use, for
// the page and mail suites of every language (#19). A word counts as English when an English message has
// it; names, amounts and ids the text was made from are given, and a short list of loanwords is allowed.
import en from '../../src/i18n/catalogues/en.ts';
import { CATALOGUES } from '../../src/i18n/catalogues.ts';
import type { Locale } from '../../src/i18n/locales.ts';

/** Words every language may show as they are: names, brands and terms of the trade. */
const LOANWORDS = new Set([
  'group',
  'checkout',
  'stripe',
  'secure',
  'cvc',
  'email',
  'total',
  'open',
  'test',
  'shop',
]);

const words = (text: string) => text.toLowerCase().match(/\p{L}{3,}/gu) ?? [];
const ENGLISH = new Set(Object.values(en).flatMap(words));

/** The English words in `text`, in `lang`, that neither its catalogue nor `data` accounts for. */
export function englishLeft(text: string, lang: Locale, data: readonly string[]): string[] {
  if (lang === 'en') return [];
  const own = new Set(Object.values(CATALOGUES[lang]).flatMap(words));
  const given = new Set(data.flatMap(words));
  return [...new Set(words(text))].filter(
    (w) => ENGLISH.has(w) && !own.has(w) && !given.has(w) && !LOANWORDS.has(w),
  );
}
