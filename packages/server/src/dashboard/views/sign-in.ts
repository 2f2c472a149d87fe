// The pages of signing in: ask for a link, "check your mail" (the same words whether the address is
// known or not), and the link's own page, which asks to confirm before it spends the link (so a mail
// scanner that opens links spends nothing).
import { type Html, html } from '../../pages/html.ts';

export const askForLinkView = (base: string, email = ''): Html => html`<div class="card narrow">
<h1>Sign in to the dashboard</h1>
<p>We will mail you a sign-in link. It works once, within 15 minutes.</p>
<form method="post" action="${base}/sign-in/request">
<div class="field"><label for="email">Email address</label>
<input id="email" name="email" type="email" autocomplete="email" required maxlength="254" value="${email}"></div>
<button type="submit">Mail me a sign-in link</button>
</form>
</div>`;

export const linkSentView = (base: string): Html => html`<div class="card narrow">
<h1>Check your mail</h1>
<p>If this address belongs to a dashboard user, a sign-in link is on its way. It works once, within 15 minutes.</p>
<p><a href="${base}/sign-in">Ask for another link</a></p>
</div>`;

export const confirmLinkView = (base: string, token: string): Html => html`<div class="card narrow">
<h1>Sign in to the dashboard</h1>
<p>This link signs you in once. Continue to open the dashboard.</p>
<form method="post" action="${base}/sign-in">
<input type="hidden" name="token" value="${token}">
<button type="submit">Continue to the dashboard</button>
</form>
</div>`;

export const deadLinkView = (base: string): Html => html`<div class="card narrow">
<h1>This sign-in link does not work</h1>
<p>It was used already, or it is more than 15 minutes old. Links work once.</p>
<p><a href="${base}/sign-in">Ask for a new link</a></p>
</div>`;

export const messageView = (title: string, text: string, back?: { href: string; label: string }): Html =>
  html`<div class="card narrow"><h1>${title}</h1><p>${text}</p>${back ? html`<p><a href="${back.href}">${back.label}</a></p>` : ''}</div>`;
