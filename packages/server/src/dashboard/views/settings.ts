// Settings: the merchant's name, payouts (the currency; with Stripe, the connected account and the Connect
// onboarding link, owners only), and the team (everyone with access, their roles; an owner invites and
// removes people).
import { type Html, html } from '../../pages/html.ts';
import type { DashboardUser } from '../../store/dashboard.ts';
import type { Merchant } from '../../store/merchants.ts';
import { when } from '../format.ts';
import { changeForm } from '../layout.ts';

export function settingsView(
  base: string,
  d: {
    merchant: Merchant;
    team: readonly DashboardUser[];
    me: DashboardUser;
    csrf: string;
    processor: 'sandbox' | 'stripe';
    /** A Stripe onboarding link just made, shown on this answer only. */
    onboarding?: { url: string; expiresAt: number };
  },
): Html {
  const owner = d.me.role === 'owner';
  const m = d.merchant;
  return html`<h1>Settings</h1>
<section class="card" aria-labelledby="name-h"><h2 id="name-h">Name</h2>
<p class="small muted">Shown to payers on the hosted pages and in reminder mail.</p>
${
  d.me.role === 'viewer'
    ? html`<p>${m.name}</p>`
    : html`<form method="post" action="${base}/settings/name" class="row">
<input type="hidden" name="_csrf" value="${d.csrf}">
<div class="field"><label for="merchant-name">Name</label><input id="merchant-name" name="name" type="text" required maxlength="200" value="${m.name}"></div>
<div class="field"><button type="submit">Save name</button></div>
</form>`
}
</section>
<section class="card" aria-labelledby="payout-h"><h2 id="payout-h">Payouts</h2>
<p>Payout currency: <strong>${m.payoutCurrency ? m.payoutCurrency.toUpperCase() : 'each session’s own currency'}</strong></p>
${
  owner
    ? html`<form method="post" action="${base}/settings/payout" class="row">
<input type="hidden" name="_csrf" value="${d.csrf}">
<div class="field"><label for="payout">Payout currency (ISO 4217, empty for each session’s own)</label><input id="payout" name="currency" type="text" maxlength="3" value="${m.payoutCurrency ?? ''}"></div>
<div class="field"><button type="submit">Save payout currency</button></div>
</form>`
    : html`<p class="small muted">Only an owner may change payouts.</p>`
}
<p>Processor: ${
    d.processor === 'sandbox'
      ? html`<strong>sandbox</strong>, no real money moves: test cards are charged by the sandbox processor, and there is no payout account to connect.`
      : m.processorAccountId
        ? html`<strong>Stripe</strong>, connected account <span class="mono" id="connected-account">${m.processorAccountId}</span>.`
        : html`<strong>Stripe</strong>, no connected account yet: payouts wait until one is set up.`
  }</p>
${d.processor === 'stripe' ? stripeOnboarding(base, d.csrf, owner, m.processorAccountId !== null, d.onboarding) : ''}
</section>
<section class="card" aria-labelledby="team-h"><h2 id="team-h">Team</h2>
<p class="small muted">Owners do everything; developers everything but the team and payouts; viewers read only.</p>
<div class="scroll"><table><thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Added</th>${owner ? html`<th scope="col"><span class="sr-only">Actions</span></th>` : ''}</tr></thead>
<tbody>${d.team.map(
    (u) =>
      html`<tr><td>${u.email}${u.id === d.me.id ? html` <span class="small muted">(you)</span>` : ''}</td><td>${u.role}</td><td>${when(u.createdAt)}</td>${
        owner
          ? html`<td>${u.id === d.me.id ? '' : changeForm(`${base}/team/${u.id}/remove`, d.csrf, { label: `Remove ${u.email}`, kind: 'danger' })}</td>`
          : ''
      }</tr>`,
  )}</tbody></table></div>
${
  owner
    ? html`<h3>Invite someone</h3>
<form method="post" action="${base}/team/invite" class="row">
<input type="hidden" name="_csrf" value="${d.csrf}">
<div class="field"><label for="invite-email">Email address</label><input id="invite-email" name="email" type="email" required maxlength="254"></div>
<div class="field"><label for="invite-role">Role</label><select id="invite-role" name="role"><option value="viewer">viewer</option><option value="developer">developer</option><option value="owner">owner</option></select></div>
<div class="field"><button type="submit">Invite</button></div>
</form>`
    : ''
}
</section>
<p class="small muted">Merchant id <span class="mono">${m.id}</span></p>`;
}

/** With Stripe: the Connect onboarding button (owners), and the link when one was just made. */
function stripeOnboarding(
  base: string,
  csrf: string,
  owner: boolean,
  connected: boolean,
  link: { url: string; expiresAt: number } | undefined,
): Html {
  if (!owner) return html`<p class="small muted">An owner sets payouts up with Stripe from this page.</p>`;
  return html`${
    link
      ? html`<section class="notice" aria-labelledby="onboarding-h"><h3 id="onboarding-h">Your Stripe onboarding link</h3>
<p><a id="onboarding-link" href="${link.url}">Continue to Stripe</a> to give Stripe the business and bank details payouts need. The link works once, until ${when(link.expiresAt)}; Stripe brings you back here.</p></section>`
      : ''
  }
<p class="small muted">Stripe collects the business and bank account details payouts need on its own pages; we keep only the connected account's id.</p>
${changeForm(`${base}/settings/payouts/stripe`, csrf, {
  label: connected ? 'Continue onboarding with Stripe' : 'Set up payouts with Stripe',
})}`;
}
