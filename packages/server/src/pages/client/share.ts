// A member's page: what they pay (share and fee) before they pay, the card form, the outcome in words (a
// decline says why and leaves the form for another card), then the group's progress, live.
import { timeLeft } from '../format.ts';
import { shareView } from '../views/pages.ts';
import type { PageContext, PageShare } from '../views/types.ts';
import {
  api,
  bindPayForm,
  closeOnEscape,
  every,
  finalEvent,
  notifyParent,
  pageData,
  patch,
  rememberRendered,
  tickTimeLeft,
} from './common.ts';

const { share: initial, ctx } = pageData<{ share: PageShare; ctx: PageContext }>();
let share = initial;
const app = document.getElementById('app') as HTMLElement;

const render = (force: string[] = []) => patch(shareView(share, ctx, Date.now()), force);

function update(next: PageShare, force: string[] = []) {
  const before = share.session_status;
  // The pay answer has no group progress; keep the last one until the next read.
  share = { ...next, group: next.group ?? share.group };
  render(force);
  const event = finalEvent(share.session_status);
  if (before !== share.session_status && event) notifyParent(ctx, event, share.session_id, share.order_ref);
}

async function refresh(): Promise<boolean> {
  const answer = await api<PageShare>(ctx, 'GET', `/shares/${encodeURIComponent(share.share_id)}`);
  if (answer.status === 200) update(answer.body, share.status !== answer.body.status ? ['pay'] : []);
  return share.session_status === 'pending';
}

bindPayForm(
  app,
  ctx,
  { amountDue: share.amount_due_cents, currency: share.currency, capture: share.capture },
  (paid) => {
    update(paid, ['pay']);
    document.getElementById('paid')?.focus();
    void refresh();
  },
);
closeOnEscape(ctx, share.session_id, share.order_ref);
rememberRendered();
render();
tickTimeLeft((expiresAt) => timeLeft(expiresAt, Date.now()));
if (share.session_status === 'pending') every(3000, refresh);
