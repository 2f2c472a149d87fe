// Messages with named parameters: "Pay {amount}" with { amount: '$12.50' }. A message that varies with a
// number has one entry per plural category of its language (Intl.PluralRules: `key.one`, `key.other`, and
// for some languages `key.few`, `key.many`), chosen by the `count` parameter. No markup in messages: the
// views put the words into their own markup, escaped.
import type en from './catalogues/en.ts';

/** A key of the English catalogue, without its plural ending. */
export type MessageKey = keyof typeof en extends infer K
  ? K extends `${infer Base}.${'one' | 'other'}`
    ? Base
    : K
  : never;

export type Catalogue = Record<string, string>;
export type Params = Record<string, string | number>;
export type Translate = (key: MessageKey, params?: Params) => string;

const plurals = new Map<string, Intl.PluralRules>();

export function translator(messages: Catalogue, intl: string): Translate {
  return (key, params = {}) => {
    let text = messages[key];
    if (text === undefined && typeof params.count === 'number') {
      let rules = plurals.get(intl);
      if (!rules) {
        rules = new Intl.PluralRules(intl);
        plurals.set(intl, rules);
      }
      text = messages[`${key}.${rules.select(params.count)}`] ?? messages[`${key}.other`];
    }
    if (text === undefined) throw new Error(`no message "${key}"`);
    return text.replace(/\{(\w+)\}/g, (whole, name: string) =>
      params[name] === undefined ? whole : String(params[name]),
    );
  };
}
