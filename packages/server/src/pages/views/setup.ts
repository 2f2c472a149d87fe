// The organizer's group set-up form: the split mode and the people, with each mode's own inputs, checked
// field by field before anything is sent (docs/decisions.md#hosted-pages). The draft is what the form holds;
// it becomes the body of PUT /session/group. Amounts are typed in major units and read into integer minor
// units by string arithmetic, never through a float.
import { minorUnitExponent } from '../../domain/currencies.ts';
import type { Translate } from '../../i18n/translate.ts';
import { type Html, html } from '../html.ts';
import {
  type Money,
  memberStatusWords,
  modeName,
  money,
  percent,
  type Refusal,
  refusalWords,
} from './parts.ts';
import type { PageMember, PageSession, SplitMode } from './types.ts';

export interface DraftMember {
  id?: string;
  name: string;
  email: string;
  /** custom and host-pays: the amount as typed, in major units ("12.50"). */
  amount: string;
  /** percentage: as typed ("33.34"). */
  percent: string;
  /** itemized: units of each cart item, by item index. */
  items: number[];
  /** Paid or held: stays in the group with its amount. */
  locked: boolean;
  isOrganizer: boolean;
  status: string;
}

export interface Draft {
  mode: SplitMode;
  members: DraftMember[];
}

/** Field id → what is wrong with it, in words; '' for the form as a whole. */
export type FieldErrors = Record<string, string>;

/** The decimal mark the page's locale writes: "." in en and ja, "," in de, fr, es, it, pt and nl. */
const decimalMark = (locale: string): string =>
  new Intl.NumberFormat(locale).formatToParts(1.5).find((part) => part.type === 'decimal')?.value ?? '.';

/** An amount as the field shows it, in the page's decimal mark: 7300 eur → "73,00" in de, "73.00" in en. */
const decimalText = (amount: number, currency: string, locale: string): string => {
  const exponent = minorUnitExponent(currency);
  const digits = String(amount).padStart(exponent + 1, '0');
  return exponent === 0
    ? digits
    : `${digits.slice(0, -exponent)}${decimalMark(locale)}${digits.slice(-exponent)}`;
};

/**
 * "12.5" → 1250 (usd); null when it is not an amount with at most the currency's decimals. The page's own
 * decimal mark is always the decimal one. The other mark ("," on an English page, "." on a German one) is
 * read as decimal too, unless three digits follow it: "1.234" on an Italian page is a thousand and more to
 * its reader, so it is refused, never taken as 1.234.
 * @internal Exported for its tests.
 */
export function parseAmount(text: string, currency: string, locale: string): number | null {
  const exponent = minorUnitExponent(currency);
  const match = /^(\d{1,9})(?:([.,])(\d*))?$/.exec(text.trim());
  if (!match) return null;
  const fraction = match[3] ?? '';
  if (match[2] !== undefined && match[2] !== decimalMark(locale) && fraction.length === 3) return null;
  if (fraction.length > exponent) return null;
  return Number(match[1]) * 10 ** exponent + Number(fraction.padEnd(exponent, '0') || '0');
}

/**
 * "33.34" or "33,34" → 3334 basis points; null when it is not a percentage with at most two decimals
 * (never three digits after a mark, so either mark is a decimal one).
 * @internal Exported for its tests.
 */
export function parsePercent(text: string): number | null {
  const match = /^(\d{1,3})(?:[.,](\d{0,2}))?$/.exec(text.trim());
  if (!match) return null;
  const bp = Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
  return bp <= 10_000 ? bp : null;
}

const percentText = (bp: number, locale: string): string =>
  bp % 100 === 0
    ? String(bp / 100)
    : `${Math.floor(bp / 100)}${decimalMark(locale)}${String(bp % 100).padStart(2, '0')}`;

/** The form's starting point: the group as it is, or the organizer and one friend in the default mode. */
export function draftOf(page: PageSession, locale: string): Draft {
  const modes = page.group.allowed_modes;
  const mode =
    page.group.set_up || modes.includes(page.group.mode) ? page.group.mode : (modes[0] as SplitMode);
  const items = page.cart.items.length;
  const toDraft = (m: PageMember): DraftMember => ({
    id: m.id,
    name: m.name,
    email: m.email ?? '',
    amount: decimalText(m.amount_cents, page.currency, locale),
    percent: m.basis_points == null ? '' : percentText(m.basis_points, locale),
    items: Array.from({ length: items }, (_, i) => m.items?.find((x) => x.item_index === i)?.quantity ?? 0),
    locked: m.status !== 'pending',
    isOrganizer: m.is_organizer,
    status: m.status,
  });
  const members = page.group.members.map(toDraft);
  if (!page.group.set_up) {
    while (members.length < Math.max(2, page.group.min_size)) members.push(emptyMember(items));
  }
  return { mode, members };
}

export const emptyMember = (items: number): DraftMember => ({
  name: '',
  email: '',
  amount: '',
  percent: '',
  items: Array.from({ length: items }, () => 0),
  locked: false,
  isOrganizer: false,
  status: 'pending',
});

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Checks the draft as the server will, naming each field that is wrong; empty when it may be sent. */
export function checkDraft(draft: Draft, page: PageSession, locale: string, t: Translate): FieldErrors {
  const errors: FieldErrors = {};
  const { members, mode } = draft;
  const n = members.length;
  if (n < page.group.min_size) errors[''] = t('setup.min', { count: page.group.min_size });
  if (n > page.group.max_size) errors[''] = t('setup.max', { count: page.group.max_size });
  members.forEach((m, i) => {
    if (!m.name.trim()) errors[`m${i}-name`] = t('setup.nameMissing');
    else if (m.name.trim().length > 200) errors[`m${i}-name`] = t('setup.nameLong');
    if (m.email.trim() && (!EMAIL.test(m.email.trim()) || m.email.length > 254))
      errors[`m${i}-email`] = t('setup.emailWrong');
  });
  const total = page.total_cents;
  const m$: Money = { currency: page.currency, locale, t };
  if (mode === 'custom' || mode === 'host-pays') {
    let sum = 0;
    members.forEach((m, i) => {
      if (mode === 'host-pays' && i === 0) return;
      const amount = parseAmount(m.amount, page.currency, locale);
      if (amount === null)
        errors[`m${i}-amount`] = t('setup.amountWrong', {
          example: decimalText(1250, page.currency, locale),
        });
      else sum += amount;
    });
    if (mode === 'custom' && sum !== total && !Object.keys(errors).some((k) => k.endsWith('-amount')))
      errors[''] = t('setup.amountsSum', { sum: money(sum, m$), total: money(total, m$) });
    if (mode === 'host-pays' && sum > total)
      errors[''] = t('setup.friendsOver', { sum: money(sum, m$), total: money(total, m$) });
  }
  if (mode === 'percentage') {
    if (members.some((m) => m.locked && m.percent === '')) {
      errors[''] = t('setup.percentLocked');
      return errors;
    }
    let sum = 0;
    members.forEach((m, i) => {
      const bp = parsePercent(m.percent);
      if (bp === null) errors[`m${i}-percent`] = t('setup.percentWrong');
      else sum += bp;
    });
    if (sum !== 10_000 && !Object.keys(errors).some((k) => k.endsWith('-percent')))
      errors[''] = t('setup.percentSum', { sum: percent(sum / 10_000, locale) });
  }
  if (mode === 'itemized') {
    page.cart.items.forEach((item, j) => {
      const assigned = members.reduce((s, m) => s + (m.items[j] ?? 0), 0);
      if (assigned !== item.quantity) {
        errors[`item${j}`] = t('setup.itemsLeft', { item: item.name, assigned, quantity: item.quantity });
      }
    });
  }
  return errors;
}

/** The body of PUT /session/group for a checked draft. */
export function groupBody(draft: Draft, currency: string, locale: string) {
  return {
    mode: draft.mode,
    members: draft.members.map((m, i) => ({
      name: m.name.trim(),
      ...(m.id ? { id: m.id } : {}),
      ...(m.email.trim() ? { email: m.email.trim() } : {}),
      ...((draft.mode === 'custom' || (draft.mode === 'host-pays' && i > 0)) && !m.locked
        ? { amount_cents: parseAmount(m.amount, currency, locale) as number }
        : {}),
      ...(draft.mode === 'percentage' ? { basis_points: parsePercent(m.percent) as number } : {}),
      ...(draft.mode === 'itemized'
        ? {
            items: m.items
              .map((quantity, item_index) => ({ item_index, quantity }))
              .filter((x) => x.quantity > 0),
          }
        : {}),
    })),
  };
}

/** A refused set-up as the API answers it: its code, and for invalid_group the refusals naming a member. */
export interface SetupRefusal extends Refusal {
  details?: string[];
  problems?: { code: string; member_index: number; amount_cents: number; minimum_cents?: number }[];
}

/**
 * The service's refusal of a set-up, in the page's language, next to the fields it names: a member whose
 * share is below the smallest card payment or who has paid already (`problems`), any other line naming a
 * member (`details`, `members[1].amount_cents …`) as refused, and the whole form's reason in the alert.
 * The API's English words are never shown.
 */
export function serverErrors(body: SetupRefusal, draft: Draft, m: Money): FieldErrors {
  const { t } = m;
  const errors: FieldErrors = { '': refusalWords(body, t, 'notice.failed') };
  if (body.code !== 'invalid_group') return errors;
  const fieldOf = (index: number) =>
    draft.mode === 'custom' || (draft.mode === 'host-pays' && index > 0)
      ? `m${index}-amount`
      : draft.mode === 'percentage'
        ? `m${index}-percent`
        : `m${index}-name`;
  const named = new Set<number>();
  for (const p of body.problems ?? []) {
    const name = draft.members[p.member_index]?.name ?? '';
    const amount = money(p.amount_cents, m);
    const words =
      p.code === 'below_minimum'
        ? t('error.belowMinimum', { name, amount, minimum: money(p.minimum_cents ?? 0, m) })
        : p.code === 'share_fixed'
          ? t('error.memberPaid', { name, amount })
          : t('error.fieldRefused');
    const key = fieldOf(p.member_index);
    errors[key] = errors[key] ? `${errors[key]} ${words}` : words;
    named.add(p.member_index);
  }
  for (const detail of body.details ?? []) {
    const [, place, field] = /^members\[(\d+)\](?:\.(\w+))?/.exec(detail) ?? [];
    const index = Number(place);
    if (place === undefined || named.has(index) || !draft.members[index]) continue;
    const key = field === 'name' || field === 'email' ? `m${index}-${field}` : fieldOf(index);
    errors[key] = t('error.fieldRefused');
    named.add(index);
  }
  return errors;
}

function fieldError(errors: FieldErrors, id: string): Html | '' {
  const error = errors[id];
  return error ? html`<p class="error" id="${id}-error">${error}</p>` : '';
}

const described = (errors: FieldErrors, id: string) =>
  errors[id] ? html` aria-invalid="true" aria-describedby="${id}-error"` : '';

/** The form itself, for the draft and the errors it has. */
export function setupView(page: PageSession, draft: Draft, errors: FieldErrors, m: Money): Html {
  const { t } = m;
  const { mode } = draft;
  const total = page.total_cents;
  const canAdd = draft.members.length < page.group.max_size;
  const othersSum = draft.members
    .slice(1)
    .reduce((s, x) => s + (parseAmount(x.amount, page.currency, m.locale) ?? 0), 0);
  const person = (member: DraftMember, i: number) => {
    const p = `m${i}`;
    const label = member.isOrganizer ? t('setup.you') : t('setup.person', { n: i + 1 });
    const locked = member.locked
      ? html` <span class="pill pill-${member.status}">${t('setup.fixed', { status: memberStatusWords(member.status, t) })}</span>`
      : '';
    const lockAttr = member.locked ? html` disabled` : '';
    let modeInput: Html | '' = '';
    if (mode === 'custom' || (mode === 'host-pays' && i > 0)) {
      modeInput = html`<div class="field"><label for="${p}-amount">${t('setup.amount', { currency: page.currency.toUpperCase() })}</label>
        <input id="${p}-amount" inputmode="decimal" autocomplete="off" value="${member.amount}"${lockAttr}${described(errors, `${p}-amount`)}>
        ${fieldError(errors, `${p}-amount`)}</div>`;
    } else if (mode === 'host-pays') {
      const rest = total - othersSum;
      modeInput = html`<p class="field" data-testid="host-rest">${t('setup.youPayRest')} <strong>${rest >= 0 ? money(rest, m) : '—'}</strong></p>`;
    } else if (mode === 'percentage') {
      modeInput = html`<div class="field"><label for="${p}-percent">${t('setup.percent')}</label>
        <input id="${p}-percent" inputmode="decimal" autocomplete="off" value="${member.percent}"${lockAttr}${described(errors, `${p}-percent`)}>
        ${fieldError(errors, `${p}-percent`)}</div>`;
    } else if (mode === 'itemized') {
      modeInput = html`<div class="items">${page.cart.items.map(
        (
          item,
          j,
        ) => html`<div class="field small"><label for="${p}-item${j}">${item.name} <span class="muted">${t('setup.ofQuantity', { quantity: item.quantity })}</span></label>
          <input id="${p}-item${j}"${errors[`item${j}`] ? html` aria-invalid="true" aria-describedby="items-error"` : ''} type="number" min="0" max="${item.quantity}" step="1" value="${member.items[j] ?? 0}"${lockAttr}></div>`,
      )}</div>`;
    }
    return html`<fieldset class="person" data-index="${i}">
    <legend>${label}${locked}</legend>
    <div class="row">
      <div class="field"><label for="${p}-name">${t('setup.name')}</label>
        <input id="${p}-name" autocomplete="${member.isOrganizer ? 'name' : 'off'}" maxlength="200" value="${member.name}"${lockAttr}${described(errors, `${p}-name`)}>
        ${fieldError(errors, `${p}-name`)}</div>
      <div class="field"><label for="${p}-email">${t('setup.email')} <span class="muted">${t('setup.emailNote')}</span></label>
        <input id="${p}-email" type="email" autocomplete="${member.isOrganizer ? 'email' : 'off'}" maxlength="254" value="${member.email}"${lockAttr}${described(errors, `${p}-email`)}>
        ${fieldError(errors, `${p}-email`)}</div>
    </div>
    ${modeInput}
    ${
      !member.isOrganizer && !member.locked
        ? html`<button type="button" class="link" data-action="remove" data-index="${i}">${t('setup.remove', { name: member.name.trim() || t('setup.person', { n: i + 1 }) })}</button>`
        : ''
    }
  </fieldset>`;
  };
  const itemErrors = page.cart.items.map((_, j) => errors[`item${j}`]).filter(Boolean);
  const running = runningTotalView(page, draft, m);
  return html`<section class="card" aria-labelledby="setup-h" id="setup">
  <h2 id="setup-h">${page.group.set_up ? t('setup.change') : t('setup.heading')}</h2>
  <form id="setup-form" novalidate>
    <fieldset class="modes">
      <legend>${t('setup.how', { total: money(total, m) })}</legend>
      ${page.group.allowed_modes.map(
        (mo) =>
          html`<label class="mode"><input type="radio" name="mode" value="${mo}"${mo === mode ? html` checked` : ''}> ${modeName(mo, m.t)}</label>`,
      )}
    </fieldset>
    ${draft.members.map(person)}
    ${running}
    ${itemErrors.length ? html`<div class="error" id="items-error">${itemErrors.map((e) => html`<p>${e}</p>`)}</div>` : ''}
    <div id="setup-error" role="alert" class="error" tabindex="-1">${errors[''] ?? ''}</div>
    <div class="actions">
      ${canAdd ? html`<button type="button" class="secondary" data-action="add">${t('setup.add')}</button>` : ''}
      <button type="submit" class="primary" disabled data-needs-script>${page.group.set_up ? t('setup.save') : t('setup.create')}</button>
    </div>
  </form>
</section>`;
}

/**
 * Custom amounts and percentages: what the typed values add up to so far, and what is left (or how far
 * over), kept up to date as the organizer types, before they submit.
 */
function runningTotalView(page: PageSession, draft: Draft, m: Money): Html | '' {
  const { t } = m;
  const line = (sum: string, total: string, left: number, show: (n: number) => string) =>
    html`<p class="running" id="running-total" data-testid="running-total" aria-live="polite">${t('setup.soFar', { sum, total })} ${
      left === 0
        ? t('setup.addsUp')
        : left > 0
          ? t('setup.left', { left: show(left) })
          : t('setup.over', { over: show(-left) })
    }</p>`;
  if (draft.mode === 'custom') {
    const sum = draft.members.reduce((s, x) => s + (parseAmount(x.amount, page.currency, m.locale) ?? 0), 0);
    return line(money(sum, m), money(page.total_cents, m), page.total_cents - sum, (n) => money(n, m));
  }
  if (draft.mode === 'percentage') {
    const sum = draft.members.reduce((s, x) => s + (parsePercent(x.percent) ?? 0), 0);
    const shown = (bp: number) => percent(bp / 10_000, m.locale);
    return line(shown(sum), shown(10_000), 10_000 - sum, shown);
  }
  return '';
}
