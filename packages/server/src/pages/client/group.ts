// The group's page (the group access token): the group's progress live, and joining an equal split, which
// leads the new member to their own share page.
import { timeLeft } from '../format.ts';
import { groupView } from '../views/pages.ts';
import type { PageContext, PageSession } from '../views/types.ts';
import {
  announce,
  api,
  closeOnEscape,
  every,
  finalEvent,
  notifyParent,
  pageData,
  patch,
  rememberRendered,
  tickTimeLeft,
} from './common.ts';

const { page: initial, ctx } = pageData<{ page: PageSession; ctx: PageContext }>();
let page = initial;
const access = `?access=${encodeURIComponent(ctx.access ?? '')}`;
const app = document.getElementById('app') as HTMLElement;

const render = (error = '', force: string[] = []) => patch(groupView(page, ctx, Date.now(), error), force);

app.addEventListener('submit', async (event) => {
  const form = event.target as HTMLFormElement;
  if (form.id !== 'join-form') return;
  event.preventDefault();
  const name = (document.getElementById('join-name') as HTMLInputElement).value.trim();
  const email = (document.getElementById('join-email') as HTMLInputElement).value.trim();
  if (!name) {
    const input = document.getElementById('join-name') as HTMLInputElement;
    render('Enter your name to join.', ['join']);
    input.setAttribute('aria-invalid', 'true');
    document.getElementById('join-name')?.focus();
    announce('Enter your name to join.');
    return;
  }
  const answer = await api<{ share_url: string }>(ctx, 'POST', `/session/join${access}`, {
    name,
    ...(email ? { email } : {}),
  });
  if (answer.status === 200) {
    const next = new URL(answer.body.share_url);
    for (const key of ['embed', 'parent_origin', 'theme']) {
      const value = new URL(location.href).searchParams.get(key);
      if (value) next.searchParams.set(key, value);
    }
    location.assign(next.toString());
    return;
  }
  render(answer.body.error ?? 'You could not join the group.', ['join']);
  announce(answer.body.error ?? 'You could not join the group.');
});

async function refresh(): Promise<boolean> {
  const answer = await api<PageSession>(ctx, 'GET', `/session${access}`);
  if (answer.status !== 200) return true;
  const before = page.status;
  page = answer.body;
  render();
  const event = finalEvent(page.status);
  if (before !== page.status && event) notifyParent(ctx, event, page.session_id, page.order_ref);
  return page.status === 'pending';
}

closeOnEscape(ctx, page.session_id, page.order_ref);
rememberRendered();
render();
tickTimeLeft((expiresAt) => timeLeft(expiresAt, Date.now()));
if (page.status === 'pending') every(3000, refresh);
