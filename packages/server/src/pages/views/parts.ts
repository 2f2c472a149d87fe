// Pieces every page shows: the cart, the group's progress, status words. Pure functions from the API's
// answers to markup, used by the server and by the pages' scripts (../html.ts).
import type { MessageKey, Translate } from '../../i18n/translate.ts';
import { formatMoney, timeLeft } from '../format.ts';
import { type Html, html } from '../html.ts';
import type { PageCart, PageMember, SessionStatus } from './types.ts';

/** What every view formats with: the currency, the Intl locale, and the page's language. */
export interface Money {
  currency: string;
  locale: string;
  t: Translate;
}

export const money = (amount: number, m: Money): string => formatMoney(amount, m.currency, m.locale);

/** Why a card was declined, by its decline code, and what to do next. */
const declineWords = (code: string | null | undefined, t: Translate): string =>
  code === 'insufficient_funds' || code === 'expired_card' || code === 'incorrect_cvc'
    ? t(`decline.${code}`)
    : t('decline.generic');

/**
 * Why the last payment of a share was not taken, as the payer reads it, by the share's failure_code (the
 * processor's English sentence stays in `failure`, for the API): what happened and what to do next.
 */
export function failureWords(code: string | null, t: Translate): string {
  switch (code) {
    case null:
      return `${t('outcome.failed')} ${t('outcome.notTaken')} ${t('outcome.tryAnother')}`;
    case 'refund_failed':
      return t('failure.refund');
    case 'capture_declined':
      return t('failure.capture');
    case 'authentication_failed':
      return `${t('outcome.failed')} ${t('failure.authentication')}`;
    case 'authentication_abandoned':
      return `${t('outcome.failed')} ${t('failure.abandoned')}`;
    default:
      return `${t('outcome.failed')} ${declineWords(code, t)}`;
  }
}

/** An API refusal as the page reads it. */
export interface Refusal {
  code?: string;
  error?: string;
  decline_code?: string;
}

/**
 * What a page says for an API refusal, by its code, in the page's language (the API's `error` is English,
 * for developers). An answer without a code was made by the page itself (the network failed, or the
 * answer was not JSON) and is already in the page's words; a code the pages have no words for says
 * `fallback`.
 */
export function refusalWords(body: Refusal, t: Translate, fallback: MessageKey): string {
  if (!body.code || body.code === 'network_error') return body.error ?? t(fallback);
  switch (body.code) {
    case 'card_declined':
      return declineWords(body.decline_code, t);
    case 'amount_changed':
      return t('notice.amountsChanged');
    case 'share_not_pending':
      return t('error.shareNotPending');
    case 'session_not_pending':
      return t('error.sessionClosed');
    case 'rate_limited':
    case 'too_many_failed_authentications':
      return t('error.rateLimited');
    case 'upstream_error':
    case 'request_timeout':
      return t('error.upstream');
    case 'invalid_group':
      return t('error.invalidGroup');
    default:
      return t(fallback);
  }
}

const MEMBER_STATUSES = ['pending', 'authenticating', 'authorized', 'paid', 'refunded', 'released'] as const;

export const memberStatusWords = (status: string, t: Translate): string =>
  (MEMBER_STATUSES as readonly string[]).includes(status)
    ? t(`status.member.${status as (typeof MEMBER_STATUSES)[number]}`)
    : status;

const MODES = ['equal', 'itemized', 'custom', 'percentage', 'host-pays'] as const;

export const modeName = (mode: string, t: Translate): string =>
  (MODES as readonly string[]).includes(mode) ? t(`mode.${mode as (typeof MODES)[number]}`) : mode;

/**
 * The cart: items with their thumbnails, then tax, shipping, fees and the total. The whole order, whoever
 * reads it: a member's own part is said by their share (shareBasisView).
 */
export function cartView(cart: PageCart, total: number, m: Money): Html {
  const { t } = m;
  const extra = (label: string, amount: number) =>
    amount > 0
      ? html`<tr><th scope="row" colspan="2">${label}</th><td class="num">${money(amount, m)}</td></tr>`
      : '';
  return html`<section class="card" aria-labelledby="cart-h" id="cart">
  <h2 id="cart-h">${t('cart.heading')}</h2>
  <table class="cart">
    <caption class="sr-only">${t('cart.caption')}</caption>
    <thead><tr><th scope="col">${t('cart.item')}</th><th scope="col" class="num">${t('cart.qty')}</th><th scope="col" class="num">${t('cart.price')}</th></tr></thead>
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
      ${extra(t('cart.tax'), cart.tax)}${extra(t('cart.shipping'), cart.shipping)}${cart.fees.map((f) => extra(f.label || f.id || t('cart.fee'), f.amount))}
      <tr class="total"><th scope="row" colspan="2">${t('cart.total')}</th><td class="num" data-testid="cart-total">${money(total, m)}</td></tr>
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

/**
 * How far the group is: a bar, the amounts, the time left, and each member (when the page may see them).
 * The organizer is marked "(organizer)", unless that is their name already (a session made without
 * `customer.name`): "Organisateur (organisateur)" says it twice.
 */
export function progressView(p: ProgressInput, m: Money): Html {
  // Integer percent of the bar, for display only: the amounts themselves are shown exactly.
  const percent = p.total > 0 ? Math.floor((p.paid * 100) / p.total) : 0;
  const { t } = m;
  const paid = money(p.paid, m);
  const total = money(p.total, m);
  // The line's words around its three amounts, each amount in its own element for the page's script.
  const [seg0 = '', seg1 = '', seg2 = '', seg3 = ''] = t('progress.line', {
    paid: '\u0000',
    total: '\u0000',
    pending: '\u0000',
  }).split('\u0000');
  const order = orderOf(t('progress.line'), ['paid', 'total', 'pending']);
  const pieces: Record<string, Html> = {
    paid: html`<strong data-testid="paid-amount">${paid}</strong>`,
    total: html`${total}`,
    pending: html`<span data-testid="pending-amount">${money(p.pending, m)}</span>`,
  };
  return html`<section class="card" aria-labelledby="progress-h" id="progress">
  <h2 id="progress-h">${t('progress.heading')}</h2>
  <p class="status-line"><span class="badge badge-${p.status}">${t(`status.session.${p.status}`)}</span>
    ${p.status === 'pending' ? html`<span>${t('progress.timeLeft')} <strong data-expires="${p.expiresAt}">${timeLeft(p.expiresAt, p.now, m.locale, t)}</strong></span>` : ''}</p>
  <progress class="bar" max="100" value="${percent}" aria-label="${t('progress.paidSoFar')}" aria-valuetext="${t('progress.valueText', { paid, total })}">${percent}%</progress>
  <p>${seg0}${pieces[order[0] as string] as Html}${seg1}${pieces[order[1] as string] as Html}${seg2}${pieces[order[2] as string] as Html}${seg3}</p>
  ${
    p.members && p.members.length > 0
      ? html`<ul class="members">${p.members.map(
          (
            member,
          ) => html`<li><span>${member.name}${member.is_organizer && member.name !== t('progress.organizerName') ? html` <span class="muted">${t('progress.organizer')}</span>` : ''}</span>
        <span class="num">${money(member.amount_cents, m)}</span>
        <span class="pill pill-${member.status}">${memberStatusWords(member.status, t)}</span></li>`,
        )}</ul>`
      : ''
  }
</section>`;
}

/** The page's heading: whose shop and which order. */
export function headerView(merchantName: string, orderRef: string | null, title: string, t: Translate): Html {
  return html`<header class="top">
  <p class="merchant">${merchantName || t('problem.brand')}</p>
  <h1>${title}</h1>
  ${orderRef ? html`<p class="muted">${t('header.order', { ref: orderRef })}</p>` : ''}
</header>`;
}

/** A closed session, in words: what happened to the money. */
export function finishedView(
  status: SessionStatus,
  role: 'organizer' | 'member' | 'payer',
  t: Translate,
): Html {
  if (status === 'funded') {
    return html`<section class="card done" role="status" id="finished">
  <h2>${t('finished.funded.heading')}</h2>
  <p>${role === 'organizer' ? t('finished.funded.organizer') : t('finished.funded.others')}</p>
</section>`;
  }
  const word = status === 'cancelled' ? 'cancelled' : 'expired';
  return html`<section class="card stopped" role="status" id="finished">
  <h2>${t(`finished.${word}.heading`)}</h2>
  <p>${t(`finished.${word}.text`)}
  ${t('finished.refunds')}</p>
</section>`;
}

/** The order in which `names` appear as {name} in a message. */
function orderOf(message: string, names: string[]): string[] {
  return [...names].sort((a, b) => message.indexOf(`{${a}}`) - message.indexOf(`{${b}}`));
}

/** A fraction (0.01, or basis points / 10 000) as a percentage in the page's locale: "1 %", "1%", "12.5%". */
export const percent = (fraction: number, locale: string): string =>
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
    return html`<div class="basis" id="share-basis"><p>${m.t('share.items')}</p><ul class="basis-items">${b.items.map(
      (line) => {
        const item = cart.items[line.item_index];
        return item
          ? html`<li><span>${line.quantity} × ${item.name}</span> <span class="num">${money(line.quantity * item.unit_price, m)}</span></li>`
          : '';
      },
    )}</ul><p class="muted small">${m.t('share.itemsNote')}</p></div>`;
  }
  const total = money(b.total, m);
  const words =
    b.mode === 'equal'
      ? b.size && b.size > 1
        ? m.t('share.equal.count', { total, count: b.size })
        : m.t('share.equal', { total })
      : b.mode === 'percentage' && b.basis_points !== null
        ? m.t('share.percentage', { percent: percent(b.basis_points / 10_000, m.locale), total })
        : m.t('share.set', { total });
  return html`<p class="basis muted" id="share-basis">${words}</p>`;
}

/** The service fee in one sentence: what it is for, and that it comes back if the group does not complete. */
export function feeNoteView(rate: number, m: Money): Html {
  return html`<p class="muted small" id="fee-note">${m.t('share.fee', { rate: percent(rate, m.locale) })}</p>`;
}
