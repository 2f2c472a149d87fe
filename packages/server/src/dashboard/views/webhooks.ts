// Webhooks: the merchant's endpoints (create, with the secret shown once; send a test event; rotate, the
// new secret shown once; delete) and the latest deliveries with every attempt.
import { EVENT_TYPES } from '../../domain/event-types.ts';
import { type Html, html } from '../../pages/html.ts';
import type { RecentDelivery } from '../../store/dashboard.ts';
import type { WebhookEndpoint } from '../../store/webhooks.ts';
import { when, whenSeconds } from '../format.ts';
import { changeForm } from '../layout.ts';

/** A secret just made: shown on this page only, never again. */
export const secretShownOnce = (what: string, endpoint: { id: string; url: string }, secret: string): Html =>
  html`<section class="notice" aria-labelledby="secret-h"><h2 id="secret-h">${what}</h2>
<p>Signing secret of <span class="mono">${endpoint.id}</span> (${endpoint.url}). Copy it now: it is shown only this once.</p>
<code class="secret" id="new-secret">${secret}</code></section>`;

export function webhooksView(
  base: string,
  d: {
    endpoints: readonly WebhookEndpoint[];
    deliveries: readonly RecentDelivery[];
    can: { change: boolean; csrf: string };
    shown?: Html;
  },
): Html {
  return html`<h1>Webhooks</h1>
${d.shown ?? ''}
<section class="card" aria-labelledby="endpoints-h"><h2 id="endpoints-h">Endpoints</h2>
${
  d.endpoints.length === 0
    ? html`<p class="muted">No endpoints yet.</p>`
    : html`<div class="scroll"><table><thead><tr><th scope="col">Endpoint</th><th scope="col">Events</th><th scope="col">State</th><th scope="col">Created</th>${d.can.change ? html`<th scope="col"><span class="sr-only">Actions</span></th>` : ''}</tr></thead>
<tbody>${d.endpoints.map(
        (e) =>
          html`<tr><td><span class="mono">${e.id}</span><br>${e.url}</td><td>${e.events.join(', ')}</td><td>${
            e.disabledAt === null
              ? html`<span class="status delivered">enabled</span>`
              : html`<span class="status failed">disabled</span> <span class="small">after a 410, ${when(e.disabledAt)}</span>`
          }${e.previous ? html`<br><span class="small muted">previous secret signs until ${when(e.previous.expiresAt)}</span>` : ''}</td><td>${when(e.createdAt)}</td>${
            d.can.change
              ? html`<td><div class="actions">${e.disabledAt === null ? changeForm(`${base}/webhooks/${e.id}/test`, d.can.csrf, { label: `Send test event to ${e.id}`, kind: 'secondary' }) : ''}${changeForm(`${base}/webhooks/${e.id}/rotate`, d.can.csrf, { label: `Rotate secret of ${e.id}`, kind: 'secondary' })}${changeForm(`${base}/webhooks/${e.id}/delete`, d.can.csrf, { label: `Delete ${e.id}`, kind: 'danger' })}</div></td>`
              : ''
          }</tr>`,
      )}</tbody></table></div>`
}
${
  d.can.change
    ? html`<h3>Add an endpoint</h3>
<form method="post" action="${base}/webhooks">
<input type="hidden" name="_csrf" value="${d.can.csrf}">
<div class="field"><label for="hook-url">URL</label><input id="hook-url" name="url" type="url" required maxlength="2048" placeholder="https://shop.example/webhooks"></div>
<fieldset class="field"><legend>Events</legend>
<label class="small"><input type="radio" name="events" value="*" checked> every event</label>
${EVENT_TYPES.map((type) => html`<label class="small"><input type="radio" name="events" value="${type}"> ${type} only</label>`)}
</fieldset>
<button type="submit">Add endpoint</button>
</form>`
    : ''
}
</section>
<section class="card" aria-labelledby="deliveries-h"><h2 id="deliveries-h">Recent deliveries</h2>
${
  d.deliveries.length === 0
    ? html`<p class="muted">No deliveries yet.</p>`
    : html`<ol class="timeline">${d.deliveries.map(
        (
          dl,
        ) => html`<li><p><strong>${dl.eventType}</strong> to <span class="mono small">${dl.url}</span> <span class="status ${dl.state}">${dl.state}</span>
<span class="small muted">${when(dl.createdAt)}${dl.sessionId ? html` · <a href="${base}/sessions/${dl.sessionId}">${dl.sessionId}</a>` : ''}</span></p>
${
  dl.attempts.length === 0
    ? html`<p class="small muted">Not attempted yet.</p>`
    : html`<ul class="small">${dl.attempts.map(
        (a) =>
          html`<li>attempt ${a.number} at ${whenSeconds(a.at)}: ${a.statusCode === null ? 'no answer' : `HTTP ${a.statusCode}`} in ${a.latencyMs} ms${a.error ? ` (${a.error})` : ''}</li>`,
      )}</ul>`
}</li>`,
      )}</ol>`
}
</section>`;
}
