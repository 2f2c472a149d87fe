// Every language's messages, on the server only: a page gets the one catalogue it speaks, in its data
// (pages/index.ts), so no page carries the other seven.
import de from './catalogues/de.ts';
import en from './catalogues/en.ts';
import es from './catalogues/es.ts';
import fr from './catalogues/fr.ts';
import it from './catalogues/it.ts';
import ja from './catalogues/ja.ts';
import nl from './catalogues/nl.ts';
import pt from './catalogues/pt.ts';
import type { Locale } from './locales.ts';
import type { Catalogue } from './translate.ts';

export const CATALOGUES: Record<Locale, Catalogue> = { en, es, fr, de, it, pt, nl, ja };
