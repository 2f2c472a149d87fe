// Developers: the merchant's API keys, secret keys by prefix (stored hashed: shown only when made) and the
// publishable key whole (it is public), and rolling each key and secret, the new value shown once on the answer; the allowed origins; the
// last 7 days of API requests (docs/dashboard.md#api-request-log).
import { type Html, html } from '../../pages/html.ts';
import type { ApiRequestRecord } from '../../store/api-requests.ts';
import type { KeySummary } from '../../store/dashboard.ts';
import { when, whenSeconds } from '../format.ts';
import { changeForm } from '../layout.ts';

export type Rollable = 'secret-key' | 'publishable-key' | 'signing-secret' | 'webhook-secret';

export const ROLLS: Record<Rollable, { label: string; what: string; after: string }> = {
  'secret-key': {
    label: 'Roll secret key',
    what: 'New secret key',
    after: 'The old secret key stopped working now.',
  },
  'publishable-key': {
    label: 'Roll publishable key',
    what: 'New publishable key',
    after: 'The old publishable key works for 24 more hours.',
  },
  'signing-secret': {
    label: 'Roll cart signing secret',
    what: 'New cart signing secret',
    after: 'Carts signed with the old secret are accepted for 24 more hours.',
  },
  'webhook-secret': {
    label: 'Roll session webhook secret',
    what: 'New session webhook secret',
    after: 'webhook_url deliveries are signed with both secrets for 24 hours.',
  },
};

function stateOf(k: KeySummary, now: number): string {
  if (k.revokedAt !== null) return `revoked ${when(k.revokedAt)}`;
  if (k.expiresAt !== null)
    return k.expiresAt > now ? `works until ${when(k.expiresAt)}` : `ended ${when(k.expiresAt)}`;
  return 'active';
}

/**
 * The publishable key in use (the newest that works with no end set), whole, for the merchant to copy into
 * their pages; one made before keys were kept whole is named by prefix, with how to see it whole.
 */
function publishableKeyView(keys: readonly KeySummary[], now: number): Html | string {
  const current = keys.find(
    (k) => k.kind === 'publishable' && k.revokedAt === null && (k.expiresAt === null || k.expiresAt > now),
  );
  if (!current) return '';
  return current.shown
    ? html`<p>Publishable key: <code class="secret" id="publishable-key">${current.shown}</code></p>`
    : html`<p>Publishable key: <span class="mono">${current.prefix}…</span> <span class="small muted">(made before keys were shown whole: roll it to see the new one whole here)</span></p>`;
}

export function developersView(
  base: string,
  d: {
    merchantId: string;
    keys: readonly KeySummary[];
    origins: readonly string[];
    can: { change: boolean; csrf: string };
    now: number;
    requests: { rows: readonly ApiRequestRecord[]; nextCursor: string | null; requestId?: string };
    shown?: { what: string; value: string; after: string };
  },
): Html {
  return html`<h1>Developers</h1>
${
  d.shown
    ? html`<section class="notice" aria-labelledby="secret-h"><h2 id="secret-h">${d.shown.what}</h2>
<p>Copy it now: it is shown only this once. ${d.shown.after}</p><code class="secret" id="new-secret">${d.shown.value}</code></section>`
    : ''
}
<section class="card" aria-labelledby="keys-h"><h2 id="keys-h">API keys</h2>
<p class="small muted">Merchant id <span class="mono">${d.merchantId}</span>. The publishable key is public (it goes into your pages, for the SDK) and is shown whole; secret keys are stored hashed, and each is shown once, when it is made.</p>
${publishableKeyView(d.keys, d.now)}
<div class="scroll"><table><thead><tr><th scope="col">Kind</th><th scope="col">Key</th><th scope="col">Created</th><th scope="col">State</th></tr></thead>
<tbody>${d.keys.map(
    (k) =>
      html`<tr><td>${k.kind}</td><td class="mono">${k.shown ?? html`${k.prefix}…`}</td><td>${when(k.createdAt)}</td><td>${stateOf(k, d.now)}</td></tr>`,
  )}</tbody></table></div>
${
  d.can.change
    ? html`<div class="actions">${(Object.keys(ROLLS) as Rollable[]).map((r) =>
        changeForm(`${base}/developers/roll/${r}`, d.can.csrf, {
          label: ROLLS[r].label,
          kind: r === 'secret-key' ? 'danger' : 'secondary',
        }),
      )}</div>`
    : ''
}
</section>
<section class="card" aria-labelledby="origins-h"><h2 id="origins-h">Allowed origins</h2>
<p class="small muted">The sites whose pages may create sessions with the publishable key. With none registered, the sandbox accepts any https origin (and http on localhost); production accepts none.</p>
${
  d.origins.length === 0
    ? html`<p>None registered.</p>`
    : html`<ul class="plain">${d.origins.map(
        (o) =>
          html`<li><span class="mono">${o}</span> ${d.can.change ? changeForm(`${base}/developers/origins/remove`, d.can.csrf, { label: `Remove ${o}`, kind: 'danger' }, html`<input type="hidden" name="origin" value="${o}">`) : ''}</li>`,
      )}</ul>`
}
${
  d.can.change
    ? html`<form method="post" action="${base}/developers/origins" class="row">
<input type="hidden" name="_csrf" value="${d.can.csrf}">
<div class="field"><label for="origin">Origin</label><input id="origin" name="origin" type="text" inputmode="url" required maxlength="255" placeholder="https://shop.example"></div>
<div class="field"><button type="submit">Add origin</button></div>
</form>`
    : ''
}
</section>
${requestLogView(base, d.requests)}`;
}

/** A duration in milliseconds with one decimal (the log keeps microseconds). */
const millis = (us: number) => `${(us / 1000).toFixed(1)} ms`;

/** The outcome in words beside the status, so that it is not told by a number (or a colour) alone. */
const outcome = (status: number) =>
  status < 300
    ? html`<span class="status delivered">${status} ok</span>`
    : status < 500
      ? html`<span class="status pending">${status} refused</span>`
      : html`<span class="status failed">${status} error</span>`;

function requestLogView(
  base: string,
  r: { rows: readonly ApiRequestRecord[]; nextCursor: string | null; requestId?: string },
): Html {
  const next = new URLSearchParams();
  if (r.requestId) next.set('request_id', r.requestId);
  if (r.nextCursor) next.set('before', r.nextCursor);
  return html`<section class="card" aria-labelledby="requests-h"><h2 id="requests-h">API requests</h2>
<p class="small muted">The last 7 days of requests to the API that carried one of your keys, newest first: no bodies, no headers, no card data. Every API answer names its request_id.</p>
<form class="row" method="get" action="${base}/developers" role="search">
<div class="field"><label for="request-id">Request id</label><input id="request-id" name="request_id" type="search" value="${r.requestId ?? ''}" maxlength="100" placeholder="req_…"></div>
<div class="field"><button type="submit">Find</button></div>
</form>
${
  r.rows.length === 0
    ? html`<p>${r.requestId ? 'No request with this id in the last 7 days.' : 'No API requests in the last 7 days.'}</p>`
    : html`<div class="scroll"><table id="requests">
<caption class="sr-only">API requests, newest first</caption>
<thead><tr><th scope="col">Time</th><th scope="col">Request</th><th scope="col">Route</th><th scope="col">Status</th><th scope="col" class="num">Duration</th><th scope="col">Key</th></tr></thead>
<tbody>${r.rows.map(
        (q) =>
          html`<tr><td>${whenSeconds(q.createdAt)}</td><td class="mono">${q.id}</td><td class="mono">${q.method} ${q.route}</td><td>${outcome(q.status)}</td><td class="num">${millis(q.durationUs)}</td><td class="mono">${q.keyPrefix}…</td></tr>`,
      )}</tbody></table></div>`
}
${r.nextCursor ? html`<p class="pager"><a href="${base}/developers?${next.toString()}#requests-h" rel="next">Older requests</a></p>` : ''}
</section>`;
}
