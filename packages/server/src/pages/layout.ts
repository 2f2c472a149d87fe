// The document around every hosted page: the theme, the one stylesheet, the page's one script (deferred:
// the page reads fully before it runs), and the page's data for that script as inert JSON.
import type { Asset } from './assets.ts';
import { type Html, html, raw } from './html.ts';

export type Theme = 'auto' | 'light' | 'dark';

export interface LayoutInput {
  title: string;
  lang: string;
  theme: Theme;
  embed: boolean;
  css: Asset;
  script?: Asset;
  assetBase: string;
  body: Html;
  data?: unknown;
  /** The page's own words for the skip link and the footer, in its language. */
  words: { skip: string; footer: string };
}

/** JSON that can sit inside <script>: no "</script>", no "<!--", and the two line separators escaped. */
const inertJson = (value: unknown) =>
  JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');

export function layout(p: LayoutInput): string {
  const doc = html`<!doctype html>
<html lang="${p.lang}" data-theme="${p.theme}"${p.embed ? html` class="embed"` : ''}>
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<meta name="color-scheme" content="${p.theme === 'auto' ? 'light dark' : p.theme}">
<title>${p.title}</title>
<link rel="stylesheet" href="${p.assetBase}/${p.css.name}">
${p.script ? html`<script defer src="${p.assetBase}/${p.script.name}"></script>` : ''}
</head>
<body>
<a class="skip" href="#main">${p.words.skip}</a>
<div class="page">
<div id="app">
${p.body}
</div>
<div id="live" class="sr-only" role="status" aria-live="polite"></div>
<footer class="foot"><p>${p.words.footer}</p></footer>
</div>
${p.data === undefined ? '' : html`<script type="application/json" id="page-data">${raw(inertJson(p.data))}</script>`}
</body>
</html>`;
  return doc.value;
}
