// The SDK's one stylesheet, added to <head> once, the first time a button is made. Class names start gc-
// so that they do not meet the merchant's. Theme classes: gc-t-dark always dark, gc-t-auto dark when the
// system prefers it; light is the default look.
import type { Theme } from './types.ts';

const FONT = 'system-ui,-apple-system,"Segoe UI",Roboto,sans-serif';

const dark = (t: string) =>
  `.${t}.gc-primary{background:#a5b4fc;border-color:#a5b4fc;color:#111827}` +
  `.${t}.gc-outline{color:#c7d2fe;border-color:#a5b4fc}` +
  `.${t}.gc-dark{background:#000;border-color:#6b7280}` +
  `.${t} .gc-dialog{background:#111827;color:#f9fafb}` +
  `.${t} .gc-close{color:#f9fafb}`;

const CSS =
  `.gc-btn{box-sizing:border-box;display:inline-flex;align-items:center;justify-content:center;gap:.5em;font:600 16px/1.2 ${FONT};border:2px solid #4338ca;border-radius:8px;padding:10px 20px;min-height:44px;cursor:pointer;background:#4338ca;color:#fff}` +
  '.gc-btn:hover{filter:brightness(1.1)}' +
  '.gc-btn:focus-visible,.gc-close:focus-visible{outline:3px solid #818cf8;outline-offset:2px}' +
  '.gc-btn:disabled{cursor:progress;opacity:.8}' +
  '.gc-full{display:flex;width:100%}' +
  '.gc-sm{font-size:14px;padding:6px 14px;min-height:36px}' +
  '.gc-lg{font-size:18px;padding:14px 24px;min-height:52px}' +
  '.gc-outline{background:transparent;color:#4338ca}' +
  '.gc-dark{background:#111827;border-color:#111827}' +
  '.gc-btn[aria-busy=true]:before{content:"";width:1em;height:1em;border:2px solid;border-right-color:transparent;border-radius:50%;animation:gc-spin .8s linear infinite}' +
  '@keyframes gc-spin{to{transform:rotate(1turn)}}' +
  '@media (prefers-reduced-motion:reduce){.gc-btn[aria-busy=true]:before{animation-duration:3s}}' +
  '.gc-overlay{position:fixed;inset:0;z-index:2147483647;background:rgba(17,24,39,.6);display:flex;align-items:center;justify-content:center;padding:16px}' +
  `.gc-dialog{display:flex;flex-direction:column;width:100%;max-width:480px;height:min(760px,100%);background:#fff;color:#111827;border-radius:12px;overflow:hidden;box-shadow:0 20px 50px rgba(0,0,0,.35);font:14px ${FONT}}` +
  '.gc-bar{display:flex;justify-content:flex-end;padding:4px}' +
  '.gc-close{width:40px;height:40px;border:0;border-radius:8px;background:transparent;color:#111827;font-size:24px;line-height:1;cursor:pointer}' +
  '.gc-dialog iframe{flex:1;width:100%;border:0;display:block}' +
  '@media (max-width:520px){.gc-overlay{padding:0}.gc-dialog{max-width:none;height:100%;border-radius:0}}' +
  dark('gc-t-dark') +
  `@media (prefers-color-scheme:dark){${dark('gc-t-auto')}}`;

export function injectStyles(): void {
  if (document.getElementById('gc-styles')) return;
  const style = document.createElement('style');
  style.id = 'gc-styles';
  style.textContent = CSS;
  document.head.appendChild(style);
}

export const themeClass = (theme: Theme | undefined): string =>
  theme === 'dark' || theme === 'auto' ? ` gc-t-${theme}` : '';
