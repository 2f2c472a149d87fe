// Pieces every page shows: the cart, the group's progress, status words. Pure functions from the API's
// answers to markup, used by the server and by the pages' scripts (../html.ts).
import { formatMoney, timeLeft } from '../format.ts';
import { type Html, html } from '../html.ts';
import type { PageCart, PageMember, SessionStatus } from './types.ts';

export interface Money {
  currency: string;
  locale: string;
}

export const money = (amount: number, m: Money): string => formatMoney(amount, m.currency, m.locale);

const MEMBER_STATUS: Record<string, string> = {
  pending: 'Not paid yet',
  authenticating: 'Confirming with their bank',
  authorized: 'Card held',
  paid: 'Paid',
  refunded: 'Refunded',
  released: 'Hold released',
};

/**
 * Why the last payment of a share was not taken, as the payer reads it: the processor's sentence, and what
 * to do next unless that sentence already says.
 */
export const failureWords = (failure: string | null): string =>
  `Your last payment did not go through. ${failure ?? 'It was not taken.'}${/another card|try again|again when/i.test(failure ?? '') ? '' : ' Please try another card.'}`;

export const memberStatusWords = (status: string): string => MEMBER_STATUS[status] ?? status;

const SESSION_STATUS: Record<SessionStatus, string> = {
  pending: 'Open',
  funded: 'Fully paid',
  cancelled: 'Cancelled',
  expired: 'Expired',
};

export const MODE_NAMES: Record<string, string> = {
  equal: 'Split equally',
  itemized: 'By item',
  custom: 'Custom amounts',
  percentage: 'By percentage',
  'host-pays': 'I pay the rest',
};

/**
 * The cart: items with their thumbnails, then tax, shipping, fees and the total. The whole order, whoever
 * reads it: a member's own part is said by their share (shareBasisView).
 */
export function cartView(cart: PageCart, total: number, m: Money): Html {
  const extra = (label: string, amount: number) =>
    amount > 0
      ? html`<tr><th scope="row" colspan="2">${label}</th><td class="num">${money(amount, m)}</td></tr>`
      : '';
  return html`<section class="card" aria-labelledby="cart-h" id="cart">
  <h2 id="cart-h">The whole order</h2>
  <table class="cart">
    <caption class="sr-only">Items in the cart</caption>
    <thead><tr><th scope="col">Item</th><th scope="col" class="num">Qty</th><th scope="col" class="num">Price</th></tr></thead>
    <tbody>${cart.items.map(
      (item) => html`<tr>
      <td><span class="item">${
        item.image_url
          ? html`<img src="${item.image_url}" alt="" width="40" height="40" loading="lazy" referrerpolicy="no-referrer">`
          : ''
      }<span>${item.name}</span></span></td>
      <td class="num">${item.quantity}</td>
      <td class="num">${money(item.quantity * item.unit_price, m)}</td>
    </tr>`,
    )}</tbody>
    <tfoot>
      ${extra('Tax', cart.tax)}${extra('Shipping', cart.shipping)}${cart.fees.map((f) => extra(f.label || f.id || 'Fee', f.amount))}
      <tr class="total"><th scope="row" colspan="2">Total</th><td class="num" data-testid="cart-total">${money(total, m)}</td></tr>
    </tfoot>
  </table>
</section>`;
}

export interface ProgressInput {
  status: SessionStatus;
  total: number;
  paid: number;
  pending: number;
  expiresAt: string;
  now: number;
  members?: readonly PageMember[];
}

/** How far the group is: a bar, the amounts, the time left, and each member (when the page may see them). */
export function progressView(p: ProgressInput, m: Money): Html {
  // Integer percent of the bar, for display only: the amounts themselves are shown exactly.
  const percent = p.total > 0 ? Math.floor((p.paid * 100) / p.total) : 0;
  return html`<section class="card" aria-labelledby="progress-h" id="progress">
  <h2 id="progress-h">Group progress</h2>
  <p class="status-line"><span class="badge badge-${p.status}">${SESSION_STATUS[p.status]}</span>
    ${p.status === 'pending' ? html`<span>Time left: <strong data-expires="${p.expiresAt}">${timeLeft(p.expiresAt, p.now)}</strong></span>` : ''}</p>
  <progress class="bar" max="100" value="${percent}" aria-label="Paid so far" aria-valuetext="${money(p.paid, m)} of ${money(p.total, m)} paid">${percent}%</progress>
  <p><strong data-testid="paid-amount">${money(p.paid, m)}</strong> paid of ${money(p.total, m)} · <span data-testid="pending-amount">${money(p.pending, m)}</span> to go</p>
  ${
    p.members && p.members.length > 0
      ? html`<ul class="members">${p.members.map(
          (
            member,
          ) => html`<li><span>${member.name}${member.is_organizer ? html` <span class="muted">(organizer)</span>` : ''}</span>
        <span class="num">${money(member.amount_cents, m)}</span>
        <span class="pill pill-${member.status}">${memberStatusWords(member.status)}</span></li>`,
        )}</ul>`
      : ''
  }
</section>`;
}

/** The page's heading: whose shop and which order. */
export function headerView(merchantName: string, orderRef: string | null, title: string): Html {
  return html`<header class="top">
  <p class="merchant">${merchantName || 'Group Checkout'}</p>
  <h1>${title}</h1>
  ${orderRef ? html`<p class="muted">Order ${orderRef}</p>` : ''}
</header>`;
}

/** A closed session, in words: what happened to the money. */
export function finishedView(status: SessionStatus, role: 'organizer' | 'member' | 'payer'): Html {
  if (status === 'funded') {
    return html`<section class="card done" role="status" id="finished">
  <h2>Thank you — the group is fully paid</h2>
  <p>Every share is paid. ${role === 'organizer' ? 'The shop has been told and will prepare your order.' : 'The organizer and the shop have been told.'}</p>
</section>`;
  }
  const word = status === 'cancelled' ? 'cancelled' : 'expired';
  return html`<section class="card stopped" role="status" id="finished">
  <h2>This group was ${word}</h2>
  <p>${status === 'cancelled' ? 'The group was cancelled before every share was paid.' : 'Time ran out before every share was paid.'}
  Anyone who paid gets all of it back, fees included; held cards are released. Nothing more will be charged.</p>
</section>`;
}

/** A fraction (0.01, or basis points / 10 000) as a percentage in the page's locale: "1 %", "1%", "12.5%". */
const percent = (fraction: number, locale: string): string =>
  new Intl.NumberFormat(locale, { style: 'percent', maximumFractionDigits: 2 }).format(fraction);

export interface ShareBasis {
  mode: string;
  items: readonly { item_index: number; quantity: number }[] | null;
  basis_points: number | null;
  /** The order's total, and how many share it when known. */
  total: number;
  size?: number;
}

/**
 * What a share is of the order, in one sentence, or the member's own items in an itemized split: why they
 * pay this amount and not another.
 */
export function shareBasisView(b: ShareBasis, cart: PageCart, m: Money): Html {
  if (b.mode === 'itemized' && b.items && b.items.length > 0) {
    return html`<div class="basis" id="share-basis"><p>Your items:</p><ul class="basis-items">${b.items.map(
      (line) => {
        const item = cart.items[line.item_index];
        return item
          ? html`<li><span>${line.quantity} × ${item.name}</span> <span class="num">${money(line.quantity * item.unit_price, m)}</span></li>`
          : '';
      },
    )}</ul><p class="muted small">Tax, shipping and fees are shared in proportion to the items.</p></div>`;
  }
  const total = money(b.total, m);
  const words =
    b.mode === 'equal'
      ? b.size && b.size > 1
        ? `An equal part of the order's ${total}, split between ${b.size} people.`
        : `An equal part of the order's ${total}.`
      : b.mode === 'percentage' && b.basis_points !== null
        ? `${percent(b.basis_points / 10_000, m.locale)} of the order's ${total}.`
        : `An amount set by the organizer, out of the order's ${total}.`;
  return html`<p class="basis muted" id="share-basis">${words}</p>`;
}

/** The service fee in one sentence: what it is for, and that it comes back if the group does not complete. */
export function feeNoteView(rate: number, m: Money): Html {
  return html`<p class="muted small" id="fee-note">The service fee (${percent(rate, m.locale)} of your share) pays Group Checkout for collecting the group's payments for the shop; if the group does not complete, it is refunded with your share.</p>`;
}
