// The overview: 30 days of sessions created, funded, expired and cancelled, funded volume per currency,
// the funding rate and the median time to fund. Each chart is SVG drawn here (no script), titled and
// described for screen readers, coloured by class (the policy allows no inline style), one series per chart so that no chart is read by colour alone; every
// number is also in the table below them.
import type { Overview } from '../../flows/dashboard-reads.ts';
import { type Html, html, raw } from '../../pages/html.ts';
import { money } from '../format.ts';

const W = 600;
const H = 160;
const PAD = { left: 44, right: 8, top: 12, bottom: 24 };

const day = (ms: number) => new Date(ms).toISOString().slice(5, 10);

function barChart(
  id: string,
  title: string,
  days: readonly number[],
  values: readonly number[],
  colour: 'c1' | 'c2' | 'c3' | 'c4',
  label: (v: number) => string,
): Html {
  const max = Math.max(1, ...values);
  const innerW = W - PAD.left - PAD.right;
  const innerH = H - PAD.top - PAD.bottom;
  const step = innerW / values.length;
  const bars = values
    .map((v, i) => {
      const h = (v / max) * innerH;
      const x = PAD.left + i * step + step * 0.15;
      const y = PAD.top + innerH - h;
      return `<rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${(step * 0.7).toFixed(1)}" height="${h.toFixed(1)}" class="bar ${colour}"><title>${day(days[i] as number)}: ${escapeXml(label(v))}</title></rect>`;
    })
    .join('');
  const total = values.reduce((a, b) => a + b, 0);
  const peak = Math.max(0, ...values);
  const description = `${values.length} days from ${day(days[0] as number)} to ${day(days.at(-1) as number)}; total ${label(total)}, highest day ${label(peak)}.`;
  return html`<figure class="card">
<figcaption><h2 id="${id}-t">${title}</h2><p class="small muted" id="${id}-d">${description}</p></figcaption>
<svg class="chart" viewBox="0 0 ${W} ${H}" role="img" aria-labelledby="${id}-t ${id}-d" focusable="false">
<line class="axis" x1="${PAD.left}" y1="${PAD.top + innerH}" x2="${W - PAD.right}" y2="${PAD.top + innerH}"/>
<line class="axis" x1="${PAD.left}" y1="${PAD.top}" x2="${PAD.left}" y2="${PAD.top + innerH}"/>
<text x="${PAD.left + 4}" y="${PAD.top + 8}">max ${label(max)}</text>
<text x="${PAD.left - 4}" y="${PAD.top + innerH}" text-anchor="end">0</text>
<text x="${PAD.left}" y="${H - 6}">${day(days[0] as number)}</text>
<text x="${W - PAD.right}" y="${H - 6}" text-anchor="end">${day(days.at(-1) as number)}</text>
${raw(bars)}
</svg>
</figure>`;
}

const escapeXml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function duration(ms: number): string {
  const minutes = Math.round(ms / 60_000);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  return hours < 48 ? `${hours} h ${minutes % 60} min` : `${Math.floor(hours / 24)} days ${hours % 24} h`;
}

export function overviewView(o: Overview): Html {
  const count = (v: number) => String(v);
  return html`<h1>Overview: the last 30 days</h1>
<div class="grid">
<section class="card" aria-labelledby="rate-h"><h2 id="rate-h">Funding rate</h2>
<p class="big">${o.fundingRate === null ? 'No session ended yet' : `${Math.round(o.fundingRate * 1000) / 10} %`}</p>
<p class="small muted">Of the sessions that ended (funded, expired or cancelled) in these 30 days, the share that was funded.</p></section>
<section class="card" aria-labelledby="median-h"><h2 id="median-h">Median time to fund</h2>
<p class="big">${o.medianTimeToFundMs === null ? 'No session funded yet' : duration(o.medianTimeToFundMs)}</p>
<p class="small muted">From a session's creation to its last share paid, over the sessions funded in these 30 days.</p></section>
</div>
<div class="grid">
${barChart('created', 'Sessions created per day', o.days, o.created, 'c1', count)}
${barChart('funded', 'Sessions funded per day', o.days, o.funded, 'c2', count)}
${barChart('expired', 'Sessions expired per day', o.days, o.expired, 'c3', count)}
${barChart('cancelled', 'Sessions cancelled per day', o.days, o.cancelled, 'c4', count)}
${o.volume.map((v) =>
  barChart(
    `volume-${v.currency}`,
    `Funded volume per day, ${v.currency.toUpperCase()}`,
    o.days,
    v.cents,
    'c2',
    (c) => money(c, v.currency),
  ),
)}
</div>
<section class="card" aria-labelledby="numbers-h"><h2 id="numbers-h">The numbers</h2>
<div class="scroll"><table>
<caption class="sr-only">Sessions per day, last 30 days (UTC)</caption>
<thead><tr><th scope="col">Day (UTC)</th><th scope="col" class="num">Created</th><th scope="col" class="num">Funded</th><th scope="col" class="num">Expired</th><th scope="col" class="num">Cancelled</th>${o.volume.map((v) => html`<th scope="col" class="num">Funded ${v.currency.toUpperCase()}</th>`)}</tr></thead>
<tbody>${o.days.map(
    (d, i) =>
      html`<tr><th scope="row">${new Date(d).toISOString().slice(0, 10)}</th><td class="num">${o.created[i]}</td><td class="num">${o.funded[i]}</td><td class="num">${o.expired[i]}</td><td class="num">${o.cancelled[i]}</td>${o.volume.map((v) => html`<td class="num">${money(v.cents[i] ?? 0, v.currency)}</td>`)}</tr>`,
  )}</tbody></table></div></section>`;
}
