// The group's page (the group access token): the group's progress live, and joining an equal split, which
// leads the new member to their own share page.
import { groupView } from '../views/pages.ts';
import { refusalWords } from '../views/parts.ts';
import type { PageContext, PageSession } from '../views/types.ts';
import { api, pageData, patch, reportFinal, startPage, t } from './common.ts';

const { page: initial, ctx } = pageData<{ page: PageSession; ctx: PageContext }>();
let page = initial;
const access = `?access=${encodeURIComponent(ctx.access ?? '')}`;
const app = document.getElementById('app') as HTMLElement;

const render = () => patch(groupView(page, ctx, Date.now()));

app.addEventListener('submit', async (event) => {
  const form = event.target as HTMLFormElement;
  if (form.id !== 'join-form') return;
  event.preventDefault();
  const name = (document.getElementById('join-name') as HTMLInputElement).value.trim();
  const email = (document.getElementById('join-email') as HTMLInputElement).value.trim();
  const input = document.getElementById('join-name') as HTMLInputElement;
  if (!name) {
    showJoinError(t('groupPage.nameError'));
    input.setAttribute('aria-invalid', 'true');
    input.focus();
    return;
  }
  input.removeAttribute('aria-invalid');
  // One join per press, however often it is pressed: the button waits for the answer.
  const button = document.getElementById('join-button') as HTMLButtonElement;
  if (button.disabled) return;
  button.disabled = true;
  button.setAttribute('aria-busy', 'true');
  const answer = await api<{ share_url: string }>(ctx, 'POST', `/session/join${access}`, {
    name,
    ...(email ? { email } : {}),
  });
  button.disabled = false;
  button.removeAttribute('aria-busy');
  if (answer.status === 200) {
    const next = new URL(answer.body.share_url);
    for (const key of ['embed', 'parent_origin', 'theme']) {
      const value = new URL(location.href).searchParams.get(key);
      if (value) next.searchParams.set(key, value);
    }
    location.assign(next.toString());
    return;
  }
  showJoinError(refusalWords(answer.body, t, 'groupPage.joinFailed'));
});

/** The join form's error, in its alert, leaving what was typed as it is. */
function showJoinError(text: string) {
  const box = document.getElementById('join-error');
  if (box) box.textContent = text;
}

async function refresh(): Promise<boolean> {
  const answer = await api<PageSession>(ctx, 'GET', `/session${access}`);
  if (answer.status !== 200) return true;
  const before = page.status;
  page = answer.body;
  render();
  reportFinal(ctx, before, page.status, page.session_id, page.order_ref);
  return page.status === 'pending';
}

startPage(
  ctx,
  { id: page.session_id, orderRef: page.order_ref, open: page.status === 'pending' },
  render,
  refresh,
);
