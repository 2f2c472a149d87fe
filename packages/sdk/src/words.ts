// The SDK's own words: the button's fixed label and the modal's names, in the languages the hosted pages
// speak (docs/sdk.md#languages). The pages' catalogues live with the server (packages/server/src/i18n/);
// these three strings are kept here so that the SDK stays a few kilobytes with no runtime dependency, and a
// server test checks that both cover the same languages.

const SDK_LOCALES = ['en', 'es', 'fr', 'de', 'it', 'pt', 'nl', 'ja'] as const;
export type SdkLocale = (typeof SDK_LOCALES)[number];

export interface Words {
  /** The button's label: fixed, never the merchant's. */
  label: string;
  /** The modal's accessible name. */
  dialog: string;
  /** The close button's accessible name. */
  close: string;
}

export const WORDS: Record<SdkLocale, Words> = {
  en: { label: 'Pay as a group', dialog: 'Group Checkout', close: 'Close Group Checkout' },
  es: { label: 'Pagar en grupo', dialog: 'Group Checkout', close: 'Cerrar Group Checkout' },
  fr: { label: 'Payer à plusieurs', dialog: 'Group Checkout', close: 'Fermer Group Checkout' },
  de: { label: 'Gemeinsam bezahlen', dialog: 'Group Checkout', close: 'Group Checkout schließen' },
  it: { label: 'Paga in gruppo', dialog: 'Group Checkout', close: 'Chiudi Group Checkout' },
  pt: { label: 'Pagar em grupo', dialog: 'Group Checkout', close: 'Fechar Group Checkout' },
  nl: { label: 'Samen betalen', dialog: 'Group Checkout', close: 'Group Checkout sluiten' },
  ja: { label: 'みんなで支払う', dialog: 'Group Checkout', close: 'Group Checkout を閉じる' },
};

/** The first of the browser's languages that is ours (navigator.languages, in order); English otherwise. */
export function browserLocale(languages: readonly string[]): SdkLocale {
  for (const tag of languages) {
    const lang = tag.split('-')[0]?.toLowerCase();
    if ((SDK_LOCALES as readonly string[]).includes(lang ?? '')) return lang as SdkLocale;
  }
  return 'en';
}
