// The checkout modal: an overlay holding a dialog (role="dialog", aria-modal, labelled "Group Checkout")
// with a close button and the hosted page's iframe. While it is open, focus stays inside it, Escape asks
// to close it, and the page behind does not scroll. It knows nothing of sessions: the button decides what
// closing means (docs/sdk.md#the-modal).
import { themeClass } from './styles.ts';
import type { Theme } from './types.ts';
import type { Words } from './words.ts';

export interface Modal {
  iframe: HTMLIFrameElement;
  /** Takes the modal out of the page and gives the page its scrolling back. */
  remove(): void;
}

export function openModal(
  src: string,
  theme: Theme | undefined,
  words: Words,
  lang: string,
  requestClose: () => void,
): Modal {
  const overlay = document.createElement('div');
  // The hosted page follows the system's scheme unless told otherwise; the modal around it does the same.
  overlay.className = `gc-overlay${themeClass(theme ?? 'auto')}`;
  const dialog = document.createElement('div');
  dialog.className = 'gc-dialog';
  dialog.setAttribute('role', 'dialog');
  dialog.setAttribute('aria-modal', 'true');
  dialog.setAttribute('aria-label', words.dialog);
  // Its names are in the button's language, which need not be the merchant page's: a screen reader reads
  // them in the right voice.
  dialog.lang = lang;
  dialog.tabIndex = -1;
  const bar = document.createElement('div');
  bar.className = 'gc-bar';
  const close = document.createElement('button');
  close.type = 'button';
  close.className = 'gc-close';
  close.setAttribute('aria-label', words.close);
  close.textContent = '\u00d7';
  close.addEventListener('click', requestClose);
  bar.appendChild(close);
  const iframe = document.createElement('iframe');
  iframe.title = words.dialog;
  iframe.allow = 'payment';
  iframe.src = src;
  dialog.append(bar, iframe);
  overlay.appendChild(dialog);

  // Focus trap. Two sentinels, before the close button and after the iframe, take focus that Tab or
  // Shift+Tab would carry out of the dialog and send it round to the other end; focus that lands outside
  // anyway (a click behind the overlay) is brought back to the close button. Inside the iframe the hosted
  // page has the keyboard, and posts `close` on Escape.
  const sentinel = (next: () => HTMLElement) => {
    const el = document.createElement('div');
    el.tabIndex = 0;
    el.addEventListener('focus', () => next().focus());
    return el;
  };
  dialog.prepend(sentinel(() => iframe));
  dialog.append(sentinel(() => close));
  // A click on the backdrop neither closes the checkout (a payment may be under way) nor takes focus.
  overlay.addEventListener('mousedown', (event) => {
    if (event.target === overlay) event.preventDefault();
  });
  const onFocusIn = (event: FocusEvent) => {
    if (!dialog.contains(event.target as Node)) close.focus();
  };
  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key === 'Escape') {
      event.preventDefault();
      requestClose();
    }
  };
  document.addEventListener('focusin', onFocusIn, true);
  document.addEventListener('keydown', onKeyDown, true);

  const body = document.body;
  const overflow = body.style.overflow;
  body.style.overflow = 'hidden';
  body.appendChild(overlay);
  close.focus();

  return {
    iframe,
    remove() {
      document.removeEventListener('focusin', onFocusIn, true);
      document.removeEventListener('keydown', onKeyDown, true);
      overlay.remove();
      body.style.overflow = overflow;
    },
  };
}
