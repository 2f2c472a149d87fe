// Settings: the team (everyone with access, their roles; an owner invites and removes people).
import { type Html, html } from '../../pages/html.ts';
import type { DashboardUser } from '../../store/dashboard.ts';
import { when } from '../format.ts';
import { changeForm } from '../layout.ts';

export function settingsView(
  base: string,
  d: { merchantId: string; team: readonly DashboardUser[]; me: DashboardUser; csrf: string },
): Html {
  const owner = d.me.role === 'owner';
  return html`<h1>Settings</h1>
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
<p class="small muted">Merchant id <span class="mono">${d.merchantId}</span></p>`;
}
