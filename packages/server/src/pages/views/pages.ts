// The hosted pages' bodies: the organizer's page, the group's page (view and join), a member's share page,
// and the refusals. Each is a function of the pay-page API's answer, so the server renders it and the
// page's script renders the same sections again as the group changes (docs/decisions.md#hosted-pages).
import { brandName } from '../../domain/card.ts';
import { type Translate, translator } from '../../i18n/translate.ts';
import { type Html, html } from '../html.ts';
import {
  cartView,
  failureWords,
  feeNoteView,
  finishedView,
  headerView,
  type Money,
  memberStatusWords,
  money,
  progressView,
  type ShareBasis,
  shareBasisView,
} from './parts.ts';
import { type Draft, type FieldErrors, setupView } from './setup.ts';
import type { PageCart, PageContext, PageSession, PageShare } from './types.ts';

const moneyOf = (p: { currency: string }, ctx: Pick<PageContext, 'locale' | 'messages'>): Money => ({
  currency: p.currency,
  locale: ctx.locale,
  t: translator(ctx.messages, ctx.locale),
});

/**
 * The organizer's share still to pay, if any: their own, or the one made when they covered the rest after
 * paying (docs/api.md#split-modes).
 */
const organizerShareToPay = (page: PageSession) =>
  page.group.members.find(
    (m) => m.is_organizer && (m.status === 'pending' || m.status === 'authenticating') && m.amount_cents > 0,
  );

/** The group's progress on a session page, listing `members`. */
const sessionProgress = (
  page: PageSession,
  now: number,
  members: PageSession['group']['members'],
  m: Money,
) =>
  progressView(
    {
      status: page.status,
      total: page.total_cents,
      paid: page.group.paid_amount,
      pending: page.group.pending_amount,
      expiresAt: page.expires_at,
      now,
      members,
    },
    m,
  );

/** A cart's total: items, tax, shipping and fees. */
const cartTotal = (cart: PageShare['cart']) =>
  cart.items.reduce((s, i) => s + i.quantity * i.unit_price, 0) +
  cart.tax +
  cart.shipping +
  cart.fees.reduce((s, f) => s + f.amount, 0);

/** The card form: in the sandbox our own fields; with Stripe, the Payment Element mounts in #payment-element. */
function cardFormView(
  shareId: string,
  amountDue: number,
  m: Money,
  processor: PageContext['processor'],
): Html {
  const { t } = m;
  const fields =
    processor === 'stripe'
      ? html`<div id="payment-element" class="field"></div>`
      : html`<div class="field"><label for="card-number">${t('card.number')}</label>
      <input id="card-number" inputmode="numeric" autocomplete="cc-number" maxlength="23" placeholder="4242 4242 4242 4242" required></div>
    <div class="row">
      <div class="field"><label for="card-exp">${t('card.expiry')}</label>
        <input id="card-exp" inputmode="numeric" autocomplete="cc-exp" maxlength="7" placeholder="12/30" required></div>
      <div class="field"><label for="card-cvc">${t('card.cvc')}</label>
        <input id="card-cvc" inputmode="numeric" autocomplete="cc-csc" maxlength="4" placeholder="123" required></div>
    </div>
    <p class="muted small">${t('card.sandbox')}</p>`;
  // The fields have no name and the button waits for the script: a form sent before the script runs would
  // put what was typed in the URL (docs/decisions.md#hosted-pages-and-sdk).
  return html`<form class="pay-form" id="pay-form" data-share="${shareId}" data-due="${amountDue}" novalidate>
    ${fields}
    <div id="pay-error" class="error" role="alert"></div>
    <button type="submit" class="primary wide" id="pay-button" disabled data-needs-script>${t('card.pay', { amount: money(amountDue, m) })}</button>
  </form>`;
}

/**
 * The bank's step (3-D Secure) of a share whose payment waits on it (docs/api.md#3-d-secure). With Stripe,
 * Stripe.js shows the bank's own page; the button brings it back if it was closed. The sandbox has no bank:
 * its step is ours, a Complete and a Fail button. Either way the page then asks the service what became
 * of the payment (refresh).
 */
function authenticationView(
  shareId: string,
  amountDue: number,
  m: Money,
  processor: PageContext['processor'],
): Html {
  const { t } = m;
  const buttons =
    processor === 'stripe'
      ? html`<button type="button" class="primary wide" data-authenticate="stripe" data-share="${shareId}" disabled data-needs-script>${t('auth.bank')}</button>`
      : html`<p class="muted small">${t('auth.sandbox')}</p>
    <div class="actions">
      <button type="button" class="primary" data-authenticate="succeed" data-share="${shareId}" disabled data-needs-script>${t('auth.complete')}</button>
      <button type="button" class="secondary" data-authenticate="fail" data-share="${shareId}" disabled data-needs-script>${t('auth.fail')}</button>
    </div>`;
  return html`<div class="authenticate" id="authenticate">
    <p>${t('auth.ask', { amount: money(amountDue, m) })}</p>
    ${buttons}
    <div id="auth-error" class="error" role="alert"></div>
  </div>`;
}

/**
 * What the payer is charged and why: the share and what it is of the order, the fee and what it is for,
 * the sum. Shown before they pay.
 */
function dueView(
  d: { amount: number; fee: number; due: number; rate: number; basis: ShareBasis; cart: PageCart },
  m: Money,
): Html {
  return html`<dl class="due">
    <div><dt>${m.t('due.share')}</dt><dd>${money(d.amount, m)}</dd></div>
    <div><dt>${m.t('due.fee')}</dt><dd>${money(d.fee, m)}</dd></div>
    <div class="sum"><dt>${m.t('due.total')}</dt><dd data-testid="amount-due">${money(d.due, m)}</dd></div>
  </dl>
  ${shareBasisView(d.basis, d.cart, m)}
  ${d.fee > 0 ? feeNoteView(d.rate, m) : ''}`;
}

/** The organizer's page: progress, set-up, share links, their own share, and what they may do. */
export function organizerView(
  page: PageSession,
  ctx: PageContext,
  draft: Draft,
  errors: FieldErrors,
  now: number,
  ui: { notice?: string; confirming?: 'cancel' | 'cover' | null } = {},
): Html {
  const m = moneyOf(page, ctx);
  const { t } = m;
  const open = page.status === 'pending';
  const me = organizerShareToPay(page);
  const others = page.group.members.filter((x) => !x.is_organizer);
  const pendingOthers = others.filter((x) => x.status === 'pending');
  const links =
    page.group.set_up && open
      ? html`<section class="card" aria-labelledby="links-h" id="links">
  <h2 id="links-h" tabindex="-1">${t('organizer.links')}</h2>
  <p>${t('organizer.linksText')}</p>
  <ul class="links">${others.map(
    (
      x,
    ) => html`<li><span><strong>${x.name}</strong> · ${t('organizer.pays', { amount: money(x.amount_due_cents ?? x.amount_cents, m) })} <span class="muted">${t('organizer.withFee')}</span></span>
      ${
        x.status === 'pending'
          ? html`<span class="copy"><input aria-label="${t('organizer.linkFor', { name: x.name })}" readonly value="${x.share_url}"><button type="button" class="secondary" data-copy="${x.share_url}">${t('organizer.copy')}<span class="sr-only"> ${t('organizer.copyFor', { name: x.name })}</span></button></span>`
          : html`<span class="pill pill-${x.status}">${memberStatusWords(x.status, t)}</span>`
      }</li>`,
  )}</ul>
  ${
    page.group.mode === 'equal' && page.join_url
      ? html`<p class="muted">${t('organizer.groupLinkText')}</p>
  <p class="copy"><input aria-label="${t('organizer.groupLink')}" readonly value="${page.join_url}"><button type="button" class="secondary" data-copy="${page.join_url}">${t('organizer.copyGroupLink')}</button></p>`
      : ''
  }
</section>`
      : '';
  const myDue = me?.amount_due_cents ?? me?.amount_cents ?? 0;
  const myShare =
    open && page.group.set_up && me?.share_id
      ? html`<section class="card" aria-labelledby="mine-h" id="my-share">
  <h2 id="mine-h" tabindex="-1">${me.status === 'authenticating' ? t('organizer.confirmMine') : t('organizer.payMine')}</h2>
  ${dueView(
    {
      amount: me.amount_cents,
      fee: myDue - me.amount_cents,
      due: myDue,
      rate: page.consumer_fee_rate,
      basis: {
        mode: page.group.mode,
        items: me.items ?? null,
        basis_points: me.basis_points ?? null,
        total: page.total_cents,
        size: page.group.size,
      },
      cart: page.cart,
    },
    m,
  )}
  ${
    me.status === 'authenticating'
      ? authenticationView(me.share_id, myDue, m, ctx.processor)
      : cardFormView(me.share_id, myDue, m, ctx.processor)
  }
</section>`
      : '';
  const rest = pendingOthers.reduce((s, x) => s + x.amount_cents, 0);
  const confirmation =
    ui.confirming === 'cancel'
      ? html`<div class="confirm" role="group" aria-labelledby="confirm-text">
    <p id="confirm-text">${t('organizer.cancelAsk')}</p>
    <button type="button" class="danger" data-action="cancel-yes">${t('organizer.cancelYes')}</button>
    <button type="button" class="secondary" data-action="confirm-no">${t('organizer.keep')}</button></div>`
      : ui.confirming === 'cover'
        ? html`<div class="confirm" role="group" aria-labelledby="confirm-text">
    <p id="confirm-text">${t('organizer.coverAsk', { count: pendingOthers.length, amount: money(rest, m) })}</p>
    <button type="button" class="primary" data-action="cover-yes">${t('organizer.coverYes')}</button>
    <button type="button" class="secondary" data-action="confirm-no">${t('organizer.notNow')}</button></div>`
        : '';
  const actions = open
    ? html`<section class="card" aria-labelledby="actions-h" id="actions">
  <h2 id="actions-h">${t('organizer.manage')}</h2>
  ${
    confirmation ||
    html`<div class="actions">
    ${
      page.group.set_up && pendingOthers.length > 0
        ? html`<button type="button" class="secondary" data-action="cover">${t('organizer.cover', { amount: money(rest, m) })}</button>
    <button type="button" class="secondary" data-action="remind">${t('organizer.remind')}</button>`
        : ''
    }
    <button type="button" class="danger" data-action="cancel">${t('organizer.cancel')}</button>
  </div>`
  }
  <p id="actions-status">${ui.notice ?? ''}</p>
</section>`
    : '';
  return html`${headerView(page.merchant_name, page.order_ref, open ? t('header.payTogether') : t('header.yourGroup'), t)}
<main id="main">
  ${open ? '' : finishedView(page.status, 'organizer', t)}
  ${sessionProgress(page, now, page.group.set_up ? page.group.members : [], m)}
  ${open ? setupView(page, draft, errors, m) : ''}
  ${myShare}
  ${links}
  ${actions}
  ${cartView(page.cart, page.total_cents, m)}
</main>`;
}

/** The group's page (group token): the cart and progress, and a form to join an equal split. */
export function groupView(page: PageSession, ctx: PageContext, now: number): Html {
  const m = moneyOf(page, ctx);
  const { t } = m;
  const open = page.status === 'pending';
  const joinable = open && page.group.mode === 'equal' && page.group.size < page.group.max_size;
  return html`${headerView(page.merchant_name, page.order_ref, t('header.payTogether'), t)}
<main id="main">
  ${open ? '' : finishedView(page.status, 'member', t)}
  ${sessionProgress(page, now, page.group.members, m)}
  ${
    joinable
      ? html`<section class="card" aria-labelledby="join-h" id="join">
  <h2 id="join-h">${t('groupPage.join')}</h2>
  <p>${t('groupPage.joinText')}</p>
  <form id="join-form" novalidate>
    <div class="field"><label for="join-name">${t('groupPage.name')}</label><input id="join-name" autocomplete="name" maxlength="200" required aria-describedby="join-error"></div>
    <div class="field"><label for="join-email">${t('groupPage.email')} <span class="muted">${t('groupPage.optional')}</span></label><input id="join-email" type="email" autocomplete="email" maxlength="254"></div>
    <div id="join-error" class="error" role="alert"></div>
    <button type="submit" class="primary" id="join-button" disabled data-needs-script>${t('groupPage.joinButton')}</button>
  </form>
</section>`
      : open
        ? html`<section class="card" id="join"><p>${t('groupPage.askLink')}</p></section>`
        : ''
  }
  ${cartView(page.cart, page.total_cents, m)}
</main>`;
}

/** A member's page: what they pay, the card form, the outcome, then the group's progress. */
export function shareView(share: PageShare, ctx: PageContext, now: number): Html {
  const m = moneyOf(share, ctx);
  const { t } = m;
  const open = share.session_status === 'pending';
  const authenticating = share.status === 'authenticating';
  const paid = share.status !== 'pending' && !authenticating;
  const paidWords =
    share.status === 'authorized'
      ? t('sharePage.heldText')
      : share.status === 'paid'
        ? t('sharePage.paidText')
        : share.status === 'refunded'
          ? t('sharePage.refundedText')
          : t('sharePage.releasedText');
  const card = share.payment?.card_last4
    ? html` <span class="muted">${t('sharePage.card', { brand: brandName(share.payment.card_brand) ?? t('sharePage.someCard'), last4: share.payment.card_last4 })}</span>`
    : '';
  const group = share.group;
  return html`${headerView(share.merchant_name, share.order_ref, t('header.yourShare', { name: share.member.name }), t)}
<main id="main">
  ${open || paid ? '' : finishedView(share.session_status, 'payer', t)}
  ${paid ? html`<section class="card done" role="status" id="paid" tabindex="-1"><h2>${share.status === 'authorized' ? t('sharePage.held') : share.status === 'paid' ? t('sharePage.paid') : t('sharePage.returned')}</h2><p>${paidWords}${card}</p></section>` : ''}
  ${paid && !open ? finishedView(share.session_status, 'payer', t) : ''}
  ${
    open && !paid
      ? html`<section class="card" aria-labelledby="pay-h" id="pay">
  <h2 id="pay-h" tabindex="-1">${authenticating ? t('sharePage.confirm') : t('sharePage.pay')}</h2>
  ${dueView(
    {
      amount: share.amount_cents,
      fee: share.consumer_fee_cents,
      due: share.amount_due_cents,
      rate: share.consumer_fee_rate,
      basis: { total: group?.total_cents ?? cartTotal(share.cart), size: group?.size, ...share.split },
      cart: share.cart,
    },
    m,
  )}
  ${
    authenticating
      ? authenticationView(share.share_id, share.amount_due_cents, m, ctx.processor)
      : html`${share.failure ? html`<p class="error" role="alert" id="pay-failure">${failureWords(share.failure_code, t)}</p>` : ''}
  ${cardFormView(share.share_id, share.amount_due_cents, m, ctx.processor)}`
  }
</section>`
      : ''
  }
  ${
    group
      ? progressView(
          {
            status: share.session_status,
            total: group.total_cents,
            paid: group.paid_amount,
            pending: group.pending_amount,
            expiresAt: share.expires_at,
            now,
          },
          m,
        )
      : ''
  }
  ${cartView(share.cart, group?.total_cents ?? cartTotal(share.cart), m)}
</main>`;
}

/** A refusal as a page: no token, a wrong one, an unknown share. Never a stack trace. */
export function problemView(title: string, text: string, t: Translate): Html {
  return html`<header class="top"><p class="merchant">${t('problem.brand')}</p><h1>${title}</h1></header>
<main id="main"><section class="card" role="alert" id="problem"><p>${text}</p>
<p class="muted">${t('problem.again')}</p></section></main>`;
}
