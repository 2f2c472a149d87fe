// The "Pay as a group" button and what it drives: one click creates one session (POST /sessions with the
// publishable key and the cart signature), then opens the hosted page in the modal; the page's messages
// and, as a fallback, polling GET /sessions/{id} every 3 s fire the callbacks, each at most once per
// session (docs/sdk.md#behaviour).
import { call } from './api.ts';
import { type Modal, openModal } from './modal.ts';
import { type ButtonConfig, buttonConfig, type Config } from './options.ts';
import { injectStyles, themeClass } from './styles.ts';
import type { ButtonInstance, ButtonOptions, GroupCheckoutError } from './types.ts';
import { browserLocale, WORDS } from './words.ts';

/** docs/sdk.md#callbacks: the fallback reads the session this often. */
const POLL_INTERVAL_MS = 3_000;
type Final = 'funded' | 'cancelled' | 'expired';
const FINAL: readonly string[] = ['funded', 'cancelled', 'expired'];

interface Session {
  id: string;
  access: string;
  created: boolean;
  final?: Final;
  /** The first failed poll is reported; later ones are not (docs/sdk.md#errors). */
  pollErrorReported?: boolean;
}

interface SessionCreated {
  session_id: string;
  session_url: string;
}

function safely<A extends unknown[]>(fn: ((...args: A) => void) | undefined, ...args: A): void {
  try {
    fn?.(...args);
  } catch (e) {
    console.error('GroupCheckout: a callback threw', e);
  }
}

export function createButton(config: Config, options: ButtonOptions): ButtonInstance {
  const cfg: ButtonConfig = buttonConfig(options);
  const { callbacks } = cfg;
  const payOrigin = new URL(config.payBaseUrl).origin;
  injectStyles();
  const el = document.createElement('button');
  el.type = 'button';
  el.className = `gc-btn gc-${cfg.variant} gc-${cfg.size}${cfg.fullWidth ? ' gc-full' : ''}${themeClass(config.theme)}`;
  // The button's language: its own option, else init's; `auto` (or none) is the browser's. A language
  // chosen by the merchant is also the session's, so its pages and mail speak it too.
  const chosen = cfg.locale ?? config.locale ?? 'auto';
  const lang = chosen === 'auto' ? browserLocale(navigator.languages ?? [navigator.language]) : chosen;
  const words = WORDS[lang];
  el.textContent = words.label;
  el.lang = lang;

  let session: Session | undefined;
  let modal: Modal | undefined;
  let busy = false;
  let destroyed = false;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const report = (error: GroupCheckoutError) => {
    if (callbacks.onError) safely(callbacks.onError, error);
    else console.error(`GroupCheckout: ${error.code}: ${error.message}`, error.request_id ?? '');
  };

  const setBusy = (on: boolean) => {
    busy = on;
    el.disabled = on;
    if (on) el.setAttribute('aria-busy', 'true');
    else el.removeAttribute('aria-busy');
  };

  const stopPolling = () => {
    clearTimeout(timer);
    timer = undefined;
  };

  const schedulePoll = (s: Session) => {
    timer = setTimeout(async () => {
      const answer = await call<{ status: string; order_ref?: string | null }>(
        config,
        'GET',
        `/sessions/${encodeURIComponent(s.id)}`,
      );
      if (destroyed || s !== session || s.final) return;
      if (answer.ok) {
        if (FINAL.includes(answer.value.status))
          return settle(answer.value.status as Final, answer.value.order_ref);
      } else {
        if (!s.pollErrorReported) report(answer.error);
        s.pollErrorReported = true;
        // The key or the session is gone for good: asking again every 3 s cannot help.
        if ([401, 403, 404].includes(answer.status)) return;
      }
      schedulePoll(s);
    }, POLL_INTERVAL_MS);
  };

  /** The session reached a final status: the one callback, then the redirect the merchant asked for. */
  const settle = (status: Final, orderRef: unknown) => {
    const s = session;
    if (!s || s.final) return;
    s.final = status;
    stopPolling();
    if (status === 'funded') {
      safely(callbacks.onGroupFunded, s.id, typeof orderRef === 'string' ? orderRef : null);
      if (cfg.successUrl) location.assign(cfg.successUrl);
    } else if (status === 'cancelled') {
      safely(callbacks.onGroupCancelled, s.id);
      if (cfg.cancelUrl) location.assign(cfg.cancelUrl);
    } else {
      safely(callbacks.onGroupExpired, s.id);
    }
  };

  const created = (s: Session) => {
    if (s.created) return;
    s.created = true;
    safely(callbacks.onGroupCreated, s.id);
  };

  const onMessage = (event: MessageEvent) => {
    const data = event.data;
    const s = session;
    if (
      !modal ||
      !s ||
      event.source !== modal.iframe.contentWindow ||
      event.origin !== payOrigin ||
      !data ||
      data.source !== 'group-checkout' ||
      data.session_id !== s.id
    ) {
      return;
    }
    if (data.type === 'group.created') created(s);
    else if (data.type === 'group.funded') settle('funded', data.order_ref);
    else if (data.type === 'group.cancelled') settle('cancelled', undefined);
    else if (data.type === 'group.expired') settle('expired', undefined);
    else if (data.type === 'close') requestClose();
    else if (data.type === 'error') {
      report({
        code: typeof data.code === 'string' ? data.code : 'checkout_error',
        message: typeof data.message === 'string' ? data.message : 'The checkout page reported an error.',
      });
    }
  };

  const closeModal = () => {
    modal?.remove();
    modal = undefined;
  };

  /** The close button, Escape, or the page's `close`: to cancel_url if given, else back to the button. */
  const requestClose = () => {
    if (cfg.cancelUrl && session?.final !== 'funded') return location.assign(cfg.cancelUrl);
    closeModal();
    if (el.isConnected) el.focus();
  };

  /** Creates the session; reports why not and answers undefined when it cannot. */
  const createSession = async (): Promise<Session | undefined> => {
    let signature = cfg.signature;
    if (signature === undefined) {
      const getSignature = cfg.getSignature ?? config.getSignature;
      if (!getSignature) {
        report({
          code: 'signature_failed',
          message:
            'No cart signature: pass signature or getSignature to GroupCheckout.button(), or getSignature to init().',
        });
        return undefined;
      }
      try {
        signature = await getSignature(cfg.body.cart as ButtonOptions['cart']);
      } catch (e) {
        report({ code: 'signature_failed', message: `getSignature failed: ${(e as Error)?.message ?? e}` });
        return undefined;
      }
      if (typeof signature !== 'string' || signature === '') {
        report({
          code: 'signature_failed',
          message: 'getSignature must return the cart signature as a hex string.',
        });
        return undefined;
      }
    }
    const answer = await call<SessionCreated>(config, 'POST', '/sessions', {
      ...cfg.body,
      signature,
      ...(chosen === 'auto' ? {} : { locale: chosen }),
    });
    if (!answer.ok) {
      report(answer.error);
      return undefined;
    }
    let access: string | null = null;
    try {
      access = new URL(answer.value.session_url).searchParams.get('access');
    } catch {}
    if (typeof answer.value.session_id !== 'string' || !access) {
      report({ code: 'invalid_response', message: 'Group Checkout answered without a session URL.' });
      return undefined;
    }
    return { id: answer.value.session_id, access, created: false };
  };

  const open = async (): Promise<void> => {
    if (destroyed || busy || modal) return;
    try {
      // A session still open (or funded) is opened again; a cancelled or expired one cannot be paid, so
      // the next click starts a new one.
      if (!session || session.final === 'cancelled' || session.final === 'expired') {
        setBusy(true);
        let s: Session | undefined;
        try {
          s = await createSession();
        } finally {
          setBusy(false);
        }
        if (!s || destroyed) return;
        session = s;
        created(s);
        schedulePoll(s);
      }
      const s = session;
      const query = new URLSearchParams({ access: s.access, embed: '1', parent_origin: location.origin });
      if (config.theme) query.set('theme', config.theme);
      modal = openModal(
        `${config.payBaseUrl}/session/${encodeURIComponent(s.id)}?${query}`,
        config.theme,
        words,
        lang,
        requestClose,
      );
    } catch (e) {
      report({ code: 'internal_error', message: String((e as Error)?.message ?? e) });
    }
  };

  el.addEventListener('click', () => {
    void open();
  });
  window.addEventListener('message', onMessage);

  const instance: ButtonInstance = {
    mount(target) {
      const parent = typeof target === 'string' ? document.querySelector(target) : target;
      if (!parent || typeof (parent as Element).appendChild !== 'function') {
        throw new Error(`GroupCheckout: mount() found no element for ${String(target)}`);
      }
      parent.appendChild(el);
      return instance;
    },
    unmount() {
      el.remove();
    },
    open,
    destroy() {
      destroyed = true;
      stopPolling();
      closeModal();
      window.removeEventListener('message', onMessage);
      el.remove();
    },
  };
  return instance;
}
