// The sessions list (status filter, search by order_ref or id, paging) and one session's page: its cart,
// its group, its money (payments, refunds, disputes, ledger lines) and the timeline of its events with
// every delivery's attempts.

import type { RefundFacts } from '../../domain/settling.ts';
import type { TimelineEvent } from '../../flows/dashboard-reads.ts';
import { type Html, html } from '../../pages/html.ts';
import type { Attempt } from '../../store/attempts.ts';
import type { SessionRowSummary } from '../../store/dashboard.ts';
import type { Dispute } from '../../store/disputes.ts';
import type { StoredLedgerLine } from '../../store/ledger.ts';
import type { Member } from '../../store/members.ts';
import type { Session } from '../../store/sessions.ts';
import { money, when, whenSeconds } from '../format.ts';
import { changeForm } from '../layout.ts';

export const SESSION_STATUSES = ['pending', 'funded', 'cancelled', 'expired'] as const;
export type StatusFilter = (typeof SESSION_STATUSES)[number];

const statusBadge = (status: string) => html`<span class="status ${status}">${status}</span>`;

export function sessionsListView(
  base: string,
  query: { status?: StatusFilter; search?: string },
  rows: SessionRowSummary[],
  nextCursor: string | null,
): Html {
  const next = new URLSearchParams();
  if (query.status) next.set('status', query.status);
  if (query.search) next.set('q', query.search);
  if (nextCursor) next.set('cursor', nextCursor);
  return html`<h1>Sessions</h1>
<form class="card row" method="get" action="${base}/sessions" role="search">
<div class="field"><label for="status">Status</label>
<select id="status" name="status"><option value="">Any status</option>${SESSION_STATUSES.map(
    (s) => html`<option value="${s}"${query.status === s ? html` selected` : ''}>${s}</option>`,
  )}</select></div>
<div class="field"><label for="q">Order reference or session id</label>
<input id="q" name="q" type="search" value="${query.search ?? ''}" maxlength="200"></div>
<div class="field"><button type="submit">Show</button></div>
</form>
<div class="card">
${
  rows.length === 0
    ? html`<p>No sessions match.</p>`
    : html`<div class="scroll"><table>
<caption class="sr-only">Sessions, newest first</caption>
<thead><tr><th scope="col">Session</th><th scope="col">Order</th><th scope="col">Status</th><th scope="col" class="num">Total</th><th scope="col">Created</th></tr></thead>
<tbody>${rows.map(
        (r) =>
          html`<tr><td><a class="mono" href="${base}/sessions/${r.id}">${r.id}</a></td><td>${r.orderRef ?? '—'}</td><td>${statusBadge(r.status)}</td><td class="num">${money(r.totalCents, r.currency)}</td><td>${when(r.createdAt)}</td></tr>`,
      )}</tbody></table></div>`
}
${nextCursor ? html`<p class="pager"><a href="${base}/sessions?${next.toString()}" rel="next">Older sessions</a></p>` : ''}
</div>`;
}

export interface SessionPageData {
  session: Session;
  members: readonly Member[];
  attempts: readonly Attempt[];
  disputes: readonly Dispute[];
  /** The API's refunds of the session (GET /sessions/{id}): one per share whose money is returned. */
  refunds: readonly RefundFacts[];
  ledger: readonly StoredLedgerLine[];
  timeline: readonly TimelineEvent[];
}

/** The member's payment: the charge or hold that took their share, with the card's brand and last four. */
const paymentOf = (attempts: readonly Attempt[], memberId: string) =>
  attempts.find(
    (a) =>
      a.memberId === memberId && (a.kind === 'charge' || a.kind === 'authorize') && a.state === 'succeeded',
  );

/**
 * What went wrong with a member's money, for the merchant. A refund the processor took and later failed
 * is said in the merchant's words (docs/api.md#refunds): the member's own `failure` is the sentence their
 * page shows them. Any other failure (a decline) is the processor's sentence, as the API gives it.
 */
function problemOf(m: Member, refunds: readonly RefundFacts[]): string | null {
  const failed = refunds.find((r) => r.memberId === m.id && r.status === 'failed' && r.id !== null);
  if (failed)
    return `Refund failed${failed.failureReason ? ` (${failed.failureReason})` : ''}: the payer's card did not take the money back, and it is not tried again. The money must be returned to the payer another way.`;
  return m.failure;
}

/**
 * An attempt's state as the API tells it: a refund the processor took but has not finished is pending
 * (docs/api.md#refunds); once it failed it is failed, whatever it was before.
 */
const stateOf = (a: Attempt) => (a.state === 'succeeded' && a.pending ? 'pending' : a.state);

/** Why an attempt failed: the card's decline code, or the processor's reason (a refund that failed later). */
const reasonOf = (a: Attempt) => a.declineCode ?? (a.state === 'failed' ? a.error : null);

export function sessionView(
  base: string,
  d: SessionPageData,
  can: { change: boolean; csrf: string },
  now: number,
): Html {
  const s = d.session;
  const c = s.currency;
  const open = s.status === 'pending' && now < s.expiresAt;
  const paid = d.members.filter((m) => m.status === 'paid' || m.status === 'authorized');
  const paidCents = paid.reduce((sum, m) => sum + m.amountCents, 0);
  const cart = s.cart;
  const payments = d.attempts.filter(
    (a) => a.kind !== 'refund' && a.kind !== 'transfer' && a.kind !== 'release',
  );
  // What goes back to payers: refunds of card payments and releases of holds.
  const returns = d.attempts.filter((a) => a.kind === 'refund' || a.kind === 'release');
  return html`<p><a href="${base}/sessions">All sessions</a></p>
<h1>Session <span class="mono">${s.id}</span></h1>
<div class="card">
<p>${statusBadge(s.status)} · order ${s.orderRef ?? '—'} · total ${money(s.totalCents, c)} · ${money(paidCents, c)} paid by ${paid.length} of ${d.members.length}</p>
<p class="small muted">Created ${when(s.createdAt)} · expires ${when(s.expiresAt)}${s.fundedAt ? html` · funded ${when(s.fundedAt)}` : ''}${s.closedAt ? html` · closed ${when(s.closedAt)}` : ''}</p>
${
  can.change && open
    ? html`<div class="actions">${changeForm(`${base}/sessions/${s.id}/remind`, can.csrf, { label: 'Remind pending members', kind: 'secondary' })}${changeForm(`${base}/sessions/${s.id}/cancel`, can.csrf, { label: 'Cancel session', kind: 'danger' })}</div>`
    : ''
}
</div>
<section class="card" aria-labelledby="cart-h"><h2 id="cart-h">Cart</h2><div class="scroll"><table>
<thead><tr><th scope="col">Item</th><th scope="col" class="num">Quantity</th><th scope="col" class="num">Unit price</th></tr></thead>
<tbody>${cart.items.map(
    (i) =>
      html`<tr><td>${i.name}</td><td class="num">${i.quantity}</td><td class="num">${money(i.unit_price, c)}</td></tr>`,
  )}
${cart.tax ? html`<tr><td>Tax</td><td></td><td class="num">${money(cart.tax, c)}</td></tr>` : ''}
${cart.shipping ? html`<tr><td>Shipping</td><td></td><td class="num">${money(cart.shipping, c)}</td></tr>` : ''}
${(cart.fees ?? []).map((f) => html`<tr><td>${f.label}</td><td></td><td class="num">${money(f.amount, c)}</td></tr>`)}
<tr><th scope="row">Total</th><td></td><td class="num">${money(s.totalCents, c)}</td></tr></tbody></table></div></section>
<section class="card" aria-labelledby="group-h"><h2 id="group-h">Group (${s.groupMode})</h2><div class="scroll"><table>
<thead><tr><th scope="col">Member</th><th scope="col">Email</th><th scope="col" class="num">Amount</th><th scope="col">Status</th><th scope="col">Card</th></tr></thead>
<tbody>${d.members.map((m) => {
    const p = paymentOf(d.attempts, m.id);
    const problem = problemOf(m, d.refunds);
    return html`<tr><td>${m.name}${m.isOrganizer ? html` <span class="small muted">(organizer)</span>` : ''}<br><span class="mono small muted">${m.id}</span></td><td>${m.email ?? '—'}</td><td class="num">${money(m.amountCents, c)}</td><td>${statusBadge(m.status)}${problem ? html`<br><span class="small">${problem}</span>` : ''}</td><td>${p?.cardBrand ? `${p.cardBrand} ···· ${p.cardLast4 ?? ''}` : '—'}</td></tr>`;
  })}</tbody></table></div></section>
<section class="card" aria-labelledby="pay-h"><h2 id="pay-h">Payments</h2>${attemptsTable(payments)}</section>
<section class="card" aria-labelledby="refund-h"><h2 id="refund-h">Refunds and releases</h2>${attemptsTable(returns)}</section>
<section class="card" aria-labelledby="dispute-h"><h2 id="dispute-h">Disputes</h2>${
    d.disputes.length === 0
      ? html`<p class="muted">None.</p>`
      : html`<div class="scroll"><table><thead><tr><th scope="col">Dispute</th><th scope="col">Member</th><th scope="col" class="num">Amount</th><th scope="col">Reason</th><th scope="col">Status</th></tr></thead>
<tbody>${d.disputes.map((x) => html`<tr><td class="mono">${x.id}</td><td class="mono">${x.memberId}</td><td class="num">${money(x.amountCents, x.currency)}</td><td>${x.reason}</td><td>${statusBadge(x.status)}</td></tr>`)}</tbody></table></div>`
  }</section>
<section class="card" aria-labelledby="ledger-h"><h2 id="ledger-h">Ledger lines</h2>${
    d.ledger.length === 0
      ? html`<p class="muted">None yet.</p>`
      : html`<div class="scroll"><table><thead><tr><th scope="col">Entry</th><th scope="col">Kind</th><th scope="col">Account</th><th scope="col" class="num">Amount</th><th scope="col">At</th></tr></thead>
<tbody>${d.ledger.map((l) => html`<tr><td class="mono">${l.entryId}</td><td>${l.kind}</td><td>${l.account}</td><td class="num">${money(l.amountCents, l.currency)}</td><td>${when(l.createdAt)}</td></tr>`)}</tbody></table></div>`
  }</section>
<section class="card" aria-labelledby="events-h"><h2 id="events-h">Timeline</h2>${
    d.timeline.length === 0
      ? html`<p class="muted">No events yet.</p>`
      : html`<ol class="timeline">${d.timeline.map((t) => timelineItem(base, t, can))}</ol>`
  }</section>`;
}

function attemptsTable(attempts: readonly Attempt[]): Html {
  if (attempts.length === 0) return html`<p class="muted">None.</p>`;
  return html`<div class="scroll"><table><thead><tr><th scope="col">Kind</th><th scope="col">Processor id</th><th scope="col" class="num">Amount</th><th scope="col">State</th><th scope="col">Card</th><th scope="col">At</th></tr></thead>
<tbody>${attempts.map(
    (a) =>
      html`<tr><td>${a.kind}</td><td class="mono">${a.processorId ?? '—'}</td><td class="num">${money(a.amountCents, a.currency)}</td><td>${statusBadge(stateOf(a))}${reasonOf(a) ? html`<br><span class="small">${reasonOf(a)}</span>` : ''}</td><td>${a.cardBrand ? `${a.cardBrand} ···· ${a.cardLast4 ?? ''}` : '—'}</td><td>${when(a.createdAt)}</td></tr>`,
  )}</tbody></table></div>`;
}

function timelineItem(base: string, t: TimelineEvent, can: { change: boolean; csrf: string }): Html {
  const e = t.event;
  return html`<li><p><strong>${e.type}</strong> <span class="small muted">${e.timestamp} · <span class="mono">${e.id}</span></span></p>
${
  t.deliveries.length === 0
    ? html`<p class="small muted">No webhook target.</p>`
    : html`<ul>${t.deliveries.map(
        (dl) => html`<li><span class="mono small">${dl.url}</span> ${statusBadge(dl.state)}
${
  dl.attempts.length === 0
    ? html`<span class="small muted">not attempted yet</span>`
    : html`<ul class="small">${dl.attempts.map(
        (a) =>
          html`<li>attempt ${a.number} at ${whenSeconds(a.at)}: ${a.statusCode === null ? 'no answer' : `HTTP ${a.statusCode}`} in ${a.latencyMs} ms${a.error ? ` (${a.error})` : ''}</li>`,
      )}</ul>`
}</li>`,
      )}</ul>`
}
${can.change ? changeForm(`${base}/events/${e.id}/redeliver`, can.csrf, { label: `Redeliver ${e.type}`, kind: 'secondary' }) : ''}
</li>`;
}
