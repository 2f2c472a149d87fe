// What every hosted page's script does: read the data the server rendered from, call the pay-page API,
// tell the embedding window what happened (only the recorded parent origin), patch sections of the page
// as things change without losing what the person is typing, and the card form.

import { type MessageKey, type Params, type Translate, translator } from '../../i18n/translate.ts';
import { parseExpiry } from '../card-input.ts';
import { formatMoney, timeLeft } from '../format.ts';
import type { Html } from '../html.ts';
import { failureWords, refusalWords } from '../views/parts.ts';
import type { PageContext, PageShare } from '../views/types.ts';

/** The page's language, as the server chose it: its messages came with the page's data. */
let translate: Translate = (key) => key;
export const t = (key: MessageKey, params?: Params): string => translate(key, params);

export function pageData<T>(): T {
  const node = document.getElementById('page-data');
  const data = JSON.parse(node?.textContent ?? '{}') as T & { ctx?: PageContext };
  // The page speaks and formats as the server rendered it (the session's language or Accept-Language).
  if (data.ctx) translate = translator(data.ctx.messages, data.ctx.locale);
  return data;
}

export interface ApiAnswer<T = unknown> {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: an API answer is read field by field where it is used
  body: T & { error?: string; code?: string; details?: string[]; request_id?: string } & Record<string, any>;
}

/** One call to the pay-page API; a network failure is an answer with status 0 and a message in words. */
export async function api<T = unknown>(
  ctx: PageContext,
  method: string,
  path: string,
  body?: unknown,
): Promise<ApiAnswer<T>> {
  try {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (method === 'POST') headers['idempotency-key'] = randomKey();
    const response = await fetch(ctx.apiBase + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'omit',
      cache: 'no-store',
    });
    if (response.status === 429) {
      // Polls wait as long as the service asks before the next one (every()).
      const seconds = Number(response.headers.get('retry-after')) || 10;
      backoffUntil = Date.now() + seconds * 1000;
    }
    const text = await response.text();
    let parsed: ApiAnswer<T>['body'];
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = { error: t('network.answered', { status: response.status }) } as ApiAnswer<T>['body'];
    }
    return { status: response.status, body: parsed };
  } catch {
    return { status: 0, body: { error: t('network.error'), code: 'network_error' } as ApiAnswer<T>['body'] };
  }
}

/** 128 random bits as hex: an Idempotency-Key (crypto.randomUUID needs a secure context; this does not). */
function randomKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

let backoffUntil = 0;

export type ParentEvent =
  | 'group.created'
  | 'group.funded'
  | 'group.expired'
  | 'group.cancelled'
  | 'close'
  | 'error';

/** Tells the embedding page, when there is one we may tell: only the recorded origin, never '*'. */
export function notifyParent(
  ctx: PageContext,
  type: ParentEvent,
  /** null from a member's page, which never learns the session id (docs/api.md#share-privacy). */
  sessionId: string | null,
  orderRef: string | null,
  error?: { code: string; message: string },
) {
  if (!ctx.embed || !ctx.parentOrigin || window.parent === window) return;
  window.parent.postMessage(
    { source: 'group-checkout', type, session_id: sessionId, order_ref: orderRef, ...error },
    ctx.parentOrigin,
  );
}

const FINAL_EVENT: Record<string, ParentEvent> = {
  funded: 'group.funded',
  cancelled: 'group.cancelled',
  expired: 'group.expired',
};

/**
 * Tells the embedding page that the session became final (funded, cancelled or expired) when `before` was
 * another status; answers whether it did.
 */
export function reportFinal(
  ctx: PageContext,
  before: string,
  status: string,
  sessionId: string | null,
  orderRef: string | null,
): boolean {
  const event = FINAL_EVENT[status];
  if (before === status || !event) return false;
  notifyParent(ctx, event, sessionId, orderRef);
  return true;
}

/** In a modal, Escape asks the embedding page to close it. */
function closeOnEscape(ctx: PageContext, sessionId: string | null, orderRef: string | null) {
  if (!ctx.embed) return;
  document.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') notifyParent(ctx, 'close', sessionId, orderRef);
  });
}

/** Says something to screen readers (and keeps it on screen where the page shows it). */
export function announce(text: string) {
  const live = document.getElementById('live');
  if (live) live.textContent = text;
}

const rendered = new Map<string, string>();

/** The field the person is typing in, if any: a section holding it is not replaced under them. */
const typing = (): Element | null => {
  const active = document.activeElement;
  // An iframe with focus is the processor's card form (Stripe's Payment Element).
  return active && ['INPUT', 'TEXTAREA', 'SELECT', 'IFRAME'].includes(active.tagName) ? active : null;
};

/**
 * How to find the focused element again once its section is replaced: by its id, or for a button
 * without one by its action (and the row it acts on). Null when nothing in the page has focus.
 */
function focusSelector(active: Element | null): string | null {
  if (!(active instanceof HTMLElement) || active === document.body) return null;
  if (active.id) return `#${CSS.escape(active.id)}`;
  const { action, index } = active.dataset;
  if (!action) return null;
  return `[data-action="${CSS.escape(action)}"]${index === undefined ? '' : `[data-index="${CSS.escape(index)}"]`}`;
}

/**
 * Puts the sections of `view` (elements with an id directly under #main, and the header) in place of
 * the page's, each only if its markup changed since it was last rendered, and never one the person is
 * typing in unless `force` names it. Focus goes back to the element with the same id, or to the button
 * with the same action: a change that arrives by poll never drops a keyboard user's place.
 */
export function patch(view: Html, force: readonly string[] = []) {
  const app = document.getElementById('app');
  if (!app) return;
  const next = document.createElement('template');
  next.innerHTML = view.value;
  const focused = focusSelector(document.activeElement);
  const nextMain = next.content.querySelector('main');
  const main = app.querySelector('main');
  if (!nextMain || !main) {
    app.replaceChildren(next.content);
    return;
  }
  const header = app.querySelector('header');
  const nextHeader = next.content.querySelector('header');
  if (header && nextHeader && header.outerHTML !== nextHeader.outerHTML) header.replaceWith(nextHeader);
  const wanted = [...nextMain.children].filter((el) => el.id);
  const current = new Map([...main.children].filter((el) => el.id).map((el) => [el.id, el]));
  let anchor: Element | null = null;
  for (const el of wanted) {
    const old = current.get(el.id);
    current.delete(el.id);
    const markup = el.outerHTML;
    const busy = old?.contains(typing()) && !force.includes(el.id);
    if (old && (rendered.get(el.id) === markup || busy)) {
      anchor = old;
      continue;
    }
    if (old) old.replaceWith(el);
    else if (anchor) anchor.after(el);
    else main.prepend(el);
    rendered.set(el.id, markup);
    anchor = el;
  }
  for (const [id, el] of current) {
    el.remove();
    rendered.delete(id);
  }
  if (focused && !document.activeElement?.matches(focused))
    document.querySelector<HTMLElement>(focused)?.focus();
  enableScriptButtons();
  document.dispatchEvent(new Event('gc:patched'));
}

/** Buttons that only work with the script are rendered disabled; the script turns them on. */
function enableScriptButtons() {
  for (const button of document.querySelectorAll<HTMLButtonElement>('button[data-needs-script]')) {
    button.disabled = false;
    button.removeAttribute('data-needs-script');
  }
}

/** Records what the server rendered, so the first patch replaces only what changed. */
function rememberRendered() {
  for (const el of document.querySelectorAll('main > [id]')) rendered.set(el.id, el.outerHTML);
}

/** Keeps every "time left" current. */
function tickTimeLeft(format: (expiresAt: string) => string) {
  setInterval(() => {
    for (const el of document.querySelectorAll<HTMLElement>('[data-expires]')) {
      el.textContent = format(el.dataset.expires as string);
    }
  }, 15_000);
}

/** Calls `poll` every `ms` (longer when the service said to wait) until it answers false. */
function every(ms: number, poll: () => Promise<boolean>) {
  const run = async () => {
    if (await poll().catch(() => true)) setTimeout(run, Math.max(ms, backoffUntil - Date.now()));
  };
  setTimeout(run, ms);
}

/** Copy buttons: the link to the clipboard, and the button says so. */
export function bindCopyButtons(root: HTMLElement) {
  root.addEventListener('click', (event) => {
    const button = (event.target as HTMLElement).closest<HTMLButtonElement>('button[data-copy]');
    if (!button) return;
    const text = button.dataset.copy as string;
    const label = button.firstChild;
    const before = label?.textContent ?? '';
    const done = () => {
      if (label) label.textContent = t('organizer.copied');
      announce(t('organizer.linkCopied'));
      setTimeout(() => {
        if (label) label.textContent = before;
      }, 2000);
    };
    const fallback = () => {
      const input = button.parentElement?.querySelector('input');
      input?.select();
      document.execCommand('copy');
      done();
    };
    if (navigator.clipboard) navigator.clipboard.writeText(text).then(done, fallback);
    else fallback();
  });
}

interface StripeLike {
  elements(options: object): {
    create(kind: 'payment'): { mount(selector: string): void };
    submit(): Promise<{ error?: { message?: string } }>;
  };
  createPaymentMethod(
    options: object,
  ): Promise<{ paymentMethod?: { id: string }; error?: { message?: string } }>;
  handleNextAction(options: { clientSecret: string }): Promise<{ error?: { message?: string } }>;
}

let stripeReady: Promise<StripeLike> | undefined;
/** Stripe.js, speaking the page's language (every page language is one of Stripe.js's locales). */
function loadStripe(key: string, lang: string): Promise<StripeLike> {
  stripeReady ??= new Promise((resolve, reject) => {
    const script = document.createElement('script');
    script.src = 'https://js.stripe.com/v3/';
    script.onload = () =>
      resolve(
        (window as unknown as { Stripe(key: string, options: { locale: string }): StripeLike }).Stripe(key, {
          locale: lang,
        }),
      );
    script.onerror = () => reject(new Error(t('auth.stripeMissing')));
    document.head.append(script);
  });
  return stripeReady;
}

/**
 * The amount due (ISO minor units) as Stripe counts it, for its card form: the shift is the service's
 * (processor/currencies.ts), and an amount due is always a multiple of the currency's step, so the division
 * (MGA) is exact.
 */
const stripeAmount = (due: number, shift: number) => (shift >= 0 ? due * 10 ** shift : due / 10 ** -shift);

/** Reads the sandbox card fields, naming the first one that is wrong. */
function readCard(form: HTMLFormElement): { card?: object; error?: string; field?: string } {
  const value = (id: string) => (form.querySelector(`#${id}`) as HTMLInputElement | null)?.value.trim() ?? '';
  const number = value('card-number').replace(/[\s-]/g, '');
  if (!/^\d{12,19}$/.test(number)) return { error: t('card.numberError'), field: 'card-number' };
  const expiry = parseExpiry(value('card-exp'));
  if (!expiry) return { error: t('card.expiryError'), field: 'card-exp' };
  const cvc = value('card-cvc');
  if (!/^\d{3,4}$/.test(cvc)) return { error: t('card.cvcError'), field: 'card-cvc' };
  return { card: { number, exp_month: expiry.month, exp_year: expiry.year, cvc } };
}

/** What the page says when a share's payment has an answer: paid, held, waiting on the bank, or not taken. */
function outcomeWords(share: PageShare): string {
  if (share.status === 'authorized') return t('outcome.held');
  if (share.status === 'paid') return t('outcome.paid');
  if (share.status === 'authenticating') return t('outcome.confirm');
  return failureWords(share.failure_code, translate);
}

/**
 * The card form of a share (`#pay-form`, wherever the page renders it): checks the fields, pays through the
 * pay-page API for the amount the form showed, and says the outcome in words. A decline leaves the form for
 * another card; `onAnswer` gets the share as the service answered it (paid, held, or waiting on the bank's
 * step); `onStale` reloads the page's data when the amount changed. With Stripe, the Payment Element is
 * mounted into each new #payment-element the page renders.
 *
 * The bank's step (3-D Secure, docs/api.md#3-d-secure): with Stripe, Stripe.js's handleNextAction right
 * after the pay answer asks for it, or from the page's button when it was closed or the page reloaded; in
 * the sandbox, the page's Complete / Fail buttons. Then refresh asks the service what became of the
 * payment, and `onAnswer` gets that.
 */
export function bindPayForm(
  root: HTMLElement,
  ctx: PageContext,
  share: { currency: string; capture: 'immediate' | 'on_funded' },
  onAnswer: (share: PageShare) => void,
  onStale: () => Promise<void>,
) {
  let stripe:
    | { instance: StripeLike; elements: ReturnType<StripeLike['elements']>; node: Element }
    | undefined;
  const mountStripe = async () => {
    const node = document.getElementById('payment-element');
    const form = document.getElementById('pay-form') as HTMLFormElement | null;
    if (ctx.processor !== 'stripe' || !node || !form || stripe?.node === node) return;
    if (!ctx.stripePublishableKey) {
      showError(t('card.unavailable'));
      return;
    }
    const instance = await loadStripe(ctx.stripePublishableKey, ctx.lang);
    const elements = instance.elements({
      mode: 'payment',
      amount: stripeAmount(Number(form.dataset.due), ctx.stripeAmountShift ?? 0),
      currency: share.currency,
      paymentMethodCreation: 'manual',
      captureMethod: share.capture === 'on_funded' ? 'manual' : 'automatic',
    });
    elements.create('payment').mount('#payment-element');
    stripe = { instance, elements, node };
  };
  const showError = (text: string, field?: string) => {
    const box = root.querySelector('#pay-error');
    if (box) box.textContent = text;
    for (const input of root.querySelectorAll('#pay-form input')) input.removeAttribute('aria-invalid');
    if (field) {
      const input = document.getElementById(field);
      input?.setAttribute('aria-invalid', 'true');
      input?.setAttribute('aria-describedby', 'pay-error');
      input?.focus();
    }
  };
  const authenticate = async (shareId: string, step: string, knownSecret?: string) => {
    const buttons = root.querySelectorAll<HTMLButtonElement>('button[data-authenticate]');
    for (const button of buttons) button.disabled = true;
    const showAuthError = (text: string) => {
      const box = root.querySelector('#auth-error');
      if (box) box.textContent = text;
      for (const button of buttons) button.disabled = false;
    };
    let secret = knownSecret;
    if (!secret) {
      const now = await api<PageShare>(ctx, 'GET', `/shares/${encodeURIComponent(shareId)}`);
      secret = now.body.next_action?.client_secret;
    }
    if (secret && ctx.processor === 'stripe') {
      if (!ctx.stripePublishableKey) return showAuthError(t('auth.unavailable'));
      // Stripe.js shows the bank's page and resolves when the payer is done with it, whatever they did:
      // what became of the payment is the service's answer below.
      const instance = await loadStripe(ctx.stripePublishableKey, ctx.lang).catch(() => undefined);
      if (!instance) return showAuthError(t('auth.stripeMissing'));
      await instance.handleNextAction({ clientSecret: secret });
    } else if (secret) {
      const done = await api(ctx, 'POST', '/sandbox/authenticate', { client_secret: secret, outcome: step });
      // A step nobody waits on any more (finished elsewhere, or abandoned) still ends in the refresh below.
      if (done.status !== 200 && done.body.code !== 'authentication_not_found') {
        return showAuthError(refusalWords(done.body, translate, 'auth.notThrough'));
      }
    }
    const answer = await api<PageShare>(ctx, 'POST', `/shares/${encodeURIComponent(shareId)}/refresh`);
    if (answer.status !== 200) return showAuthError(refusalWords(answer.body, translate, 'auth.notChecked'));
    announce(outcomeWords(answer.body));
    onAnswer(answer.body);
    // Still waiting on the bank (its page was closed): the step's buttons, unchanged, work again.
    for (const button of root.querySelectorAll<HTMLButtonElement>('button[data-authenticate]')) {
      button.disabled = false;
    }
  };
  root.addEventListener('click', (event) => {
    const button = (event.target as HTMLElement).closest<HTMLButtonElement>('button[data-authenticate]');
    if (!button || button.disabled) return;
    void authenticate(button.dataset.share as string, button.dataset.authenticate as string);
  });
  const mount = () => void mountStripe().catch((e: Error) => showError(e.message));
  document.addEventListener('gc:patched', mount);
  mount();
  root.addEventListener('submit', async (event) => {
    const form = (event.target as HTMLElement).closest<HTMLFormElement>('#pay-form');
    if (!form) return;
    event.preventDefault();
    const button = form.querySelector<HTMLButtonElement>('#pay-button');
    if (button?.disabled) return;
    let body: Record<string, unknown>;
    if (ctx.processor === 'stripe') {
      if (!stripe?.node.isConnected) return showError(t('card.loading'));
      const submitted = await stripe.elements.submit();
      if (submitted.error) return showError(submitted.error.message ?? t('card.check'));
      const made = await stripe.instance.createPaymentMethod({ elements: stripe.elements });
      if (!made.paymentMethod) return showError(made.error?.message ?? t('card.check'));
      body = { payment_method: made.paymentMethod.id };
    } else {
      const read = readCard(form);
      if (!read.card) return showError(read.error as string, read.field);
      body = { card: read.card };
    }
    // Charge only what this form showed (docs/api.md#payments).
    body.expected_amount_due_cents = Number(form.dataset.due);
    const label = button?.textContent ?? '';
    if (button) {
      button.disabled = true;
      button.setAttribute('aria-busy', 'true');
      button.textContent = t('card.paying');
    }
    showError('');
    announce(t('card.paying'));
    const answer = await api<PageShare>(ctx, 'POST', `/shares/${form.dataset.share}/pay`, body);
    if (button) {
      button.disabled = false;
      button.removeAttribute('aria-busy');
      button.textContent = label;
    }
    if (answer.status === 200) {
      announce(outcomeWords(answer.body));
      onAnswer(answer.body);
      const secret = answer.body.next_action?.client_secret;
      if (ctx.processor === 'stripe' && secret) await authenticate(answer.body.share_id, 'stripe', secret);
      return;
    }
    // #pay-error is an alert: what it says is read out once, without announce().
    announce('');
    // Said in the page's language by code; the API's English sentence only tells which field it means.
    const message = refusalWords(answer.body, translate, 'card.failed');
    if (answer.status === 402) {
      showError(message, ctx.processor === 'sandbox' ? 'card-number' : undefined);
    } else if (answer.status === 400 && ctx.processor === 'sandbox') {
      const english = answer.body.error ?? '';
      const [field, words]: [string, MessageKey] = /cvc/i.test(english)
        ? ['card-cvc', 'card.cvcError']
        : /exp/i.test(english)
          ? ['card-exp', 'card.expiryError']
          : ['card-number', 'card.numberError'];
      showError(t(words), field);
    } else if (answer.body.code === 'amount_changed') {
      await onStale();
      // The form now shows the new amount: say it.
      const due = Number((document.getElementById('pay-form') as HTMLFormElement | null)?.dataset.due);
      showError(
        Number.isFinite(due)
          ? t('error.amountChanged', { amount: formatMoney(due, share.currency, ctx.locale) })
          : message,
      );
    } else {
      showError(message);
    }
  });
}

/**
 * What every page does once its script takes over: Escape closes a modal, the server's markup is kept as
 * rendered and brought to the browser's locale, the time left ticks, and the session is polled every 3
 * seconds while it is open (until `refresh` answers false).
 */
export function startPage(
  ctx: PageContext,
  session: { id: string | null; orderRef: string | null; open: boolean },
  render: () => void,
  refresh: () => Promise<boolean>,
) {
  closeOnEscape(ctx, session.id, session.orderRef);
  rememberRendered();
  render();
  tickTimeLeft((expiresAt) => timeLeft(expiresAt, Date.now(), ctx.locale, translate));
  if (session.open) every(3000, refresh);
}
