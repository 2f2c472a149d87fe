// A member's page: what they pay (share and fee) before they pay, the card form, the outcome in words (a
// decline says why and leaves the form for another card), then the group's progress, live.
import { problemView, shareView } from '../views/pages.ts';
import type { PageContext, PageShare } from '../views/types.ts';
import { announce, api, bindPayForm, pageData, patch, reportFinal, startPage, t } from './common.ts';

const { share: initial, ctx } = pageData<{ share: PageShare; ctx: PageContext }>();
let share = initial;
const app = document.getElementById('app') as HTMLElement;

const render = (force: string[] = []) => patch(shareView(share, ctx, Date.now()), force);

function update(next: PageShare, force: string[] = []) {
  const before = share.session_status;
  // The pay answer has no group progress; keep the last one until the next read.
  share = { ...next, group: next.group ?? share.group };
  render(force);
  reportFinal(ctx, before, share.session_status, null, share.order_ref);
}

async function refresh(): Promise<boolean> {
  const answer = await api<PageShare>(ctx, 'GET', `/shares/${encodeURIComponent(share.share_id)}`);
  if (answer.body.code === 'share_not_found') {
    // The organizer covered this share or took it out of the group: nothing is owed on this link.
    patch(problemView(t('sharePage.gone'), t('sharePage.goneText'), t));
    announce(t('sharePage.goneSaid'));
    return false;
  }
  if (answer.status === 200) {
    // A new amount (the group was split again) replaces the form, so that the amount paid is the one shown.
    const changed =
      share.status !== answer.body.status || share.amount_due_cents !== answer.body.amount_due_cents;
    update(answer.body, changed ? ['pay'] : []);
  }
  return share.session_status === 'pending';
}

bindPayForm(
  app,
  ctx,
  { currency: share.currency, capture: share.capture },
  (answered) => {
    update(answered, ['pay']);
    // Paid or held: the outcome; waiting on the bank or declined: the pay section, which says what next.
    document
      .getElementById(
        answered.status === 'pending' || answered.status === 'authenticating' ? 'pay-h' : 'paid',
      )
      ?.focus();
    void refresh();
  },
  async () => {
    await refresh();
  },
);
startPage(
  ctx,
  { id: null, orderRef: share.order_ref, open: share.session_status === 'pending' },
  render,
  refresh,
);
