// The languages the hosted pages, the SDK's modal and button, the error pages and the mail speak
// (docs/decisions.md#languages), and how one is chosen: the session's own when it has one, otherwise the
// reader's Accept-Language (pages) or English.

export const LOCALES = ['en', 'es', 'fr', 'de', 'it', 'pt', 'nl', 'ja'] as const;
export type Locale = (typeof LOCALES)[number];
/** What POST /sessions takes: one of LOCALES, or `auto` (the reader's language). */
export type LocaleSetting = Locale | 'auto';

export const isLocale = (value: unknown): value is Locale => LOCALES.includes(value as Locale);

export interface Negotiated {
  /** The catalogue's language. */
  lang: Locale;
  /** What Intl formats with: the reader's own tag when it is in that language (fr-CA, en-GB), else `lang`. */
  intl: string;
}

/**
 * A language tag Intl knows, canonical, without its extensions, or undefined: the reader's language,
 * script and region shape amounts and dates, but a `-u-nu-arab` or `-u-ca-islamic` in a header does not
 * switch a payment page to other numerals or another calendar.
 */
function canonical(tag: string): string | undefined {
  try {
    const [full] = Intl.getCanonicalLocales(tag);
    const name = full && new Intl.Locale(full).baseName;
    return name && Intl.NumberFormat.supportedLocalesOf(name).length > 0 ? name : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The best of LOCALES for an Accept-Language header, by its q-values (ties in the header's order); English
 * when none is ours. `fr-CH;q=0.9, de;q=0.8` → fr, with fr-CH for amounts and dates.
 */
function negotiate(header: string | undefined): Negotiated {
  const wanted = (header ?? '')
    .split(',')
    .map((part, index) => {
      const [tag = '', ...params] = part.trim().split(';');
      // A q-value as RFC 9110 writes it (0 to 1, three decimals at most); any other makes the entry void.
      const weight = params.find((p) => /^\s*q\s*=/i.test(p));
      const q =
        weight === undefined ? '1' : /^\s*q\s*=\s*(0(?:\.\d{0,3})?|1(?:\.0{0,3})?)\s*$/i.exec(weight)?.[1];
      return { tag: tag.trim(), q: q === undefined ? 0 : Number(q), index };
    })
    .filter((w) => w.tag && w.tag !== '*' && w.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index);
  for (const { tag } of wanted) {
    const name = canonical(tag);
    const lang = name?.split('-')[0]?.toLowerCase();
    if (name && isLocale(lang)) return { lang, intl: name };
  }
  return { lang: 'en', intl: 'en' };
}

/** The session's language when it has one, else the reader's. */
export function chooseLocale(setting: string | null | undefined, header: string | undefined): Negotiated {
  if (isLocale(setting)) {
    const reader = negotiate(header);
    // The reader's regional tag still shapes amounts when it is the same language.
    return { lang: setting, intl: reader.lang === setting ? reader.intl : setting };
  }
  return negotiate(header);
}
