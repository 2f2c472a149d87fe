// The document around every dashboard page: the stylesheet, the header with who is signed in and the
// sign-out button, the sections' navigation (the current one marked aria-current), and a notice or a
// problem when the last change left one.
import { type Html, html } from '../pages/html.ts';
import type { DashboardUser } from '../store/dashboard.ts';

export type Section = 'overview' | 'sessions' | 'webhooks' | 'developers' | 'settings';

const SECTIONS: { id: Section; label: string; path: string }[] = [
  { id: 'overview', label: 'Overview', path: '' },
  { id: 'sessions', label: 'Sessions', path: '/sessions' },
  { id: 'webhooks', label: 'Webhooks', path: '/webhooks' },
  { id: 'developers', label: 'Developers', path: '/developers' },
  { id: 'settings', label: 'Settings', path: '/settings' },
];

export interface Chrome {
  /** {pay_url}'s path + /dashboard. */
  base: string;
  cssHref: string;
  sandbox: boolean;
}

export interface SignedInChrome {
  merchantName: string;
  user: DashboardUser;
  csrf: string;
  section?: Section;
}

export function documentOf(
  chrome: Chrome,
  page: { title: string; body: Html; signedIn?: SignedInChrome; notice?: string; problem?: string },
): string {
  const s = page.signedIn;
  const doc = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<link rel="icon" href="data:,">
<title>${page.title} · ${s ? `${s.merchantName} · ` : ''}Group Checkout dashboard</title>
<link rel="stylesheet" href="${chrome.cssHref}">
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="bar">
<p class="brand">Group Checkout${s ? html` · ${s.merchantName}` : ''}${chrome.sandbox ? html` <span class="status">sandbox</span>` : ''}</p>
${
  s
    ? html`<div class="who"><span>${s.user.email} (${s.user.role})</span>
<form class="inline" method="post" action="${chrome.base}/sign-out">
<input type="hidden" name="_csrf" value="${s.csrf}">
<button type="submit" class="secondary">Sign out</button>
</form></div>`
    : ''
}
</header>
${
  s
    ? html`<nav class="tabs" aria-label="Dashboard"><ul>${SECTIONS.map(
        (section) =>
          html`<li><a href="${chrome.base}${section.path}"${s.section === section.id ? html` aria-current="page"` : ''}>${section.label}</a></li>`,
      )}</ul></nav>`
    : ''
}
<main id="main">
${page.notice ? html`<p class="notice" role="status">${page.notice}</p>` : ''}
${page.problem ? html`<p class="problem" role="alert">${page.problem}</p>` : ''}
${page.body}
</main>
</body>
</html>`;
  return doc.value;
}

/** A form that changes something: POST, with the session's CSRF token. */
export const changeForm = (
  action: string,
  csrf: string,
  button: { label: string; kind?: 'secondary' | 'danger' },
  fields: Html | string = '',
): Html => html`<form class="inline" method="post" action="${action}">
<input type="hidden" name="_csrf" value="${csrf}">${fields}
<button type="submit"${button.kind ? html` class="${button.kind}"` : ''}>${button.label}</button>
</form>`;
