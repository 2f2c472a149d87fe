// The organizer's page: sets the group up (mode, people, each mode's inputs, checked field by field), shows
// the share links and the group's progress live, pays the organizer's own share, covers the rest, sends
// reminders and cancels. In a modal it tells the embedding page what happened (docs/api.md#hosted-pages-and-embedding).
import { organizerView } from '../views/pages.ts';
import { failureWords, refusalWords } from '../views/parts.ts';
import {
  checkDraft,
  type Draft,
  draftOf,
  emptyMember,
  type FieldErrors,
  groupBody,
  serverErrors,
} from '../views/setup.ts';
import type { PageContext, PageSession, SplitMode } from '../views/types.ts';
import {
  announce,
  api,
  bindCopyButtons,
  bindPayForm,
  notifyParent,
  pageData,
  patch,
  reportFinal,
  startPage,
  t,
} from './common.ts';

const { page: initial, ctx } = pageData<{ page: PageSession; ctx: PageContext }>();
let page = initial;
let draft: Draft = draftOf(page, ctx.locale);
let errors: FieldErrors = {};
const ui: { notice?: string; confirming?: 'cancel' | 'cover' | null } = {};
const app = document.getElementById('app') as HTMLElement;
const access = `?access=${encodeURIComponent(ctx.access ?? '')}`;

const render = (force: string[] = []) =>
  patch(organizerView(page, ctx, draft, errors, Date.now(), ui), force);

/** The draft as the form holds it now (the person may have typed since it was last rendered). */
function readForm() {
  const form = document.getElementById('setup-form') as HTMLFormElement | null;
  if (!form) return;
  const mode = (form.querySelector('input[name="mode"]:checked') as HTMLInputElement | null)?.value;
  if (mode) draft.mode = mode as SplitMode;
  draft.members.forEach((member, i) => {
    const value = (name: string) =>
      (document.getElementById(`m${i}-${name}`) as HTMLInputElement | null)?.value;
    member.name = value('name') ?? member.name;
    member.email = value('email') ?? member.email;
    member.amount = value('amount') ?? member.amount;
    member.percent = value('percent') ?? member.percent;
    member.items = member.items.map((q, j) => {
      const v = value(`item${j}`);
      return v === undefined ? q : Math.max(0, Math.trunc(Number(v)) || 0);
    });
  });
}

/** Counts the page's own changes, so that a poll sent before one cannot undo it when it answers late. */
let changes = 0;

function afterChange(next: PageSession, notice: string) {
  changes++;
  const before = page.status;
  page = next;
  draft = draftOf(page, ctx.locale);
  errors = {};
  ui.notice = notice;
  ui.confirming = null;
  render(['setup', 'links', 'my-share', 'actions', 'progress']);
  announce(notice);
  reportStatus(before);
}

/**
 * Tells the embedding page when the group became final since `before`; outside a modal, a group seen
 * being funded (not one opened funded) goes to success_url.
 */
function reportStatus(before: string, seenChanging = true) {
  if (!reportFinal(ctx, before, page.status, page.session_id, page.order_ref)) return;
  if (seenChanging && page.status === 'funded' && page.success_url && !ctx.embed) {
    setTimeout(() => location.assign(page.success_url as string), 1500);
  }
}

/** The form as the person left it, on the group as it is now: their typing kept, paid members fixed. */
function mergeTyped(typed: Draft, fresh: Draft): Draft {
  const byId = new Map(typed.members.filter((m) => m.id).map((m) => [m.id, m]));
  const members = fresh.members
    .filter((m) => m.id)
    .map((m) => {
      const mine = byId.get(m.id);
      return mine && !m.locked ? { ...mine, locked: false, status: m.status } : m;
    });
  return { mode: typed.mode, members: [...members, ...typed.members.filter((m) => !m.id)] };
}

async function refresh(): Promise<boolean> {
  const sent = changes;
  const answer = await api<PageSession>(ctx, 'GET', `/session${access}`);
  if (answer.status !== 200 || sent !== changes) return page.status === 'pending';
  const before = page;
  page = answer.body;
  if (
    JSON.stringify(before.group.members.map((m) => [m.id, m.status])) !==
    JSON.stringify(page.group.members.map((m) => [m.id, m.status]))
  ) {
    // Someone paid or joined: who is fixed now changes what the form may edit.
    readForm();
    draft = mergeTyped(draft, draftOf(page, ctx.locale));
  }
  render(before.status !== page.status ? ['setup', 'my-share', 'actions', 'links'] : []);
  reportStatus(before.status);
  return page.status === 'pending';
}

app.addEventListener('change', (event) => {
  const target = event.target as HTMLInputElement;
  if (target.name === 'mode') {
    readForm();
    errors = {};
    render(['setup']);
    (document.querySelector(`input[name="mode"][value="${target.value}"]`) as HTMLElement | null)?.focus();
  }
});

app.addEventListener('input', (event) => {
  // As amounts or percentages are typed: host-pays shows the organizer's rest, custom and percentage the
  // running total. Only those lines are replaced, so the field being typed in keeps its focus.
  const id = (event.target as HTMLElement).id;
  if (!id.endsWith('-amount') && !id.endsWith('-percent')) return;
  readForm();
  const markup = document.createElement('template');
  markup.innerHTML = organizerView(page, ctx, draft, errors, Date.now(), ui).value;
  for (const selector of ['[data-testid="host-rest"]', '[data-testid="running-total"]']) {
    const shown = document.querySelector(selector);
    const fresh = markup.content.querySelector(selector);
    if (shown && fresh) shown.replaceWith(fresh);
  }
});

app.addEventListener('click', async (event) => {
  const button = (event.target as HTMLElement).closest<HTMLButtonElement>('button[data-action]');
  if (!button) return;
  const action = button.dataset.action;
  if (action === 'add') {
    readForm();
    draft.members.push(emptyMember(page.cart.items.length));
    render(['setup']);
    document.getElementById(`m${draft.members.length - 1}-name`)?.focus();
  } else if (action === 'remove') {
    readForm();
    const index = Number(button.dataset.index);
    draft.members.splice(index, 1);
    errors = {};
    render(['setup']);
    document.getElementById(`m${Math.min(index, draft.members.length - 1)}-name`)?.focus();
  } else if (action === 'cancel' || action === 'cover') {
    ui.confirming = action;
    render(['actions']);
    (document.querySelector(`[data-action="${action}-yes"]`) as HTMLElement | null)?.focus();
  } else if (action === 'confirm-no') {
    const was = ui.confirming;
    ui.confirming = null;
    render(['actions']);
    (document.querySelector(`[data-action="${was}"]`) as HTMLElement | null)?.focus();
  } else if (action === 'cancel-yes') {
    button.disabled = true;
    changes++;
    const answer = await api(ctx, 'POST', `/session/cancel${access}`);
    if (answer.status === 200) {
      const reread = await api<PageSession>(ctx, 'GET', `/session${access}`);
      afterChange(
        reread.status === 200 ? reread.body : { ...page, status: 'cancelled' },
        t('notice.cancelled'),
      );
      if (page.cancel_url && !ctx.embed) setTimeout(() => location.assign(page.cancel_url as string), 1500);
    } else {
      actionFailed('cancel', refusalWords(answer.body, t, 'notice.cancelFailed'));
      if (answer.status >= 500 || answer.status === 0) {
        notifyParent(ctx, 'error', page.session_id, page.order_ref, {
          code: answer.body.code ?? 'cancel_failed',
          message: ui.notice as string,
        });
      }
    }
  } else if (action === 'cover-yes') {
    button.disabled = true;
    changes++;
    const answer = await api<PageSession>(ctx, 'POST', `/session/cover${access}`);
    if (answer.status === 200) {
      afterChange(answer.body, t('notice.covered'));
      (document.getElementById('card-number') ?? document.getElementById('mine-h'))?.focus();
    } else {
      actionFailed('cover', refusalWords(answer.body, t, 'notice.failed'));
    }
  } else if (action === 'remind') {
    button.disabled = true;
    const answer = await api<{ reminded: number; skipped: number; failed: number }>(
      ctx,
      'POST',
      `/session/remind${access}`,
    );
    button.disabled = false;
    ui.notice =
      answer.status === 200
        ? answer.body.reminded > 0
          ? `${t('notice.reminded', { count: answer.body.reminded })}${answer.body.skipped ? ` ${t('notice.skipped', { count: answer.body.skipped })}` : ''}`
          : t('notice.noReminder')
        : refusalWords(answer.body, t, 'notice.remindFailed');
    render(['actions']);
    refocus('remind');
    announce(ui.notice);
  }
});

/** An action the service refused: the confirmation closes, the reason is said, focus goes back to its button. */
function actionFailed(action: string, notice: string) {
  ui.confirming = null;
  ui.notice = notice;
  render(['actions']);
  refocus(action);
  announce(notice);
}

/** Focus back on an action's button after its section was rendered again. */
const refocus = (action: string) =>
  (document.querySelector(`button[data-action="${action}"]`) as HTMLElement | null)?.focus();

app.addEventListener('submit', async (event) => {
  const form = event.target as HTMLFormElement;
  if (form.id !== 'setup-form') return;
  event.preventDefault();
  readForm();
  errors = checkDraft(draft, page, ctx.locale, t);
  if (Object.keys(errors).length > 0) {
    // Each message is next to its field (which it describes); a whole-form one is in the #setup-error alert.
    render(['setup']);
    const first = Object.keys(errors).find((k) => k && document.getElementById(k));
    (document.getElementById(first ?? 'setup-error') as HTMLElement | null)?.focus();
    return;
  }
  const submit = form.querySelector<HTMLButtonElement>('button[type="submit"]');
  if (submit) submit.disabled = true;
  changes++;
  const answer = await api<PageSession>(
    ctx,
    'PUT',
    `/session/group${access}`,
    groupBody(draft, page.currency, ctx.locale),
  );
  if (submit) submit.disabled = false;
  if (answer.status === 200) {
    afterChange(answer.body, t('notice.saved'));
    document.getElementById('links-h')?.focus();
    return;
  }
  errors = serverErrors(answer.body, draft, { currency: page.currency, locale: ctx.locale, t });
  render(['setup']);
  document.getElementById('setup-error')?.focus();
});

bindCopyButtons(app);
bindPayForm(
  app,
  ctx,
  { currency: page.currency, capture: page.capture },
  async (share) => {
    const reread = await api<PageSession>(ctx, 'GET', `/session${access}`);
    if (reread.status !== 200) return;
    afterChange(
      reread.body,
      share.status === 'paid'
        ? t('sharePage.paidText')
        : share.status === 'authorized'
          ? t('outcome.held')
          : share.status === 'authenticating'
            ? t('outcome.confirm')
            : failureWords(share.failure_code, t),
    );
    if (share.status === 'authenticating' || share.status === 'pending')
      document.getElementById('mine-h')?.focus();
  },
  async () => {
    const reread = await api<PageSession>(ctx, 'GET', `/session${access}`);
    if (reread.status === 200) afterChange(reread.body, t('notice.amountsChanged'));
  },
);
notifyParent(ctx, 'group.created', page.session_id, page.order_ref);
startPage(
  ctx,
  { id: page.session_id, orderRef: page.order_ref, open: page.status === 'pending' },
  render,
  refresh,
);
// Opened on a closed group: the embedding page is told, but nobody is sent anywhere.
reportStatus('pending', false);
