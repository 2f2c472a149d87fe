// What each mail that follows a fact says (docs/decisions.md#mail): a payer's receipt, their refund or
// released hold, and the organizer's mails (the group funded, a share failed). A mail is written once as
// blocks, then rendered twice: plain text, and HTML with every word escaped, inline styles and no remote
// resource (no image, stylesheet or font to fetch), in the session's mail language with Intl's amounts.
import { brandName } from '../domain/card.ts';
import { consumerFee } from '../domain/fees.ts';
import { formatMoney } from '../domain/money-format.ts';
import { CATALOGUES } from '../i18n/catalogues.ts';
import type { Locale } from '../i18n/locales.ts';
import { type Translate, translator } from '../i18n/translate.ts';
import type { Attempt } from '../store/attempts.ts';
import type { Member } from '../store/members.ts';
import type { Session } from '../store/sessions.ts';

type Block =
  | { kind: 'p'; text: string; muted?: boolean }
  /** A paragraph with one link in it: `text` holds `{link}` where the address goes. */
  | { kind: 'link'; text: string; url: string }
  | { kind: 'list'; title: string; items: string[] }
  | { kind: 'amounts'; rows: { label: string; amount: string; total?: boolean }[] };

export interface ComposedMail {
  subject: string;
  text: string;
  html: string;
}

/** What a mail is written from: the session as it now stands, and whose it is. */
export interface MailFacts {
  session: Session;
  merchantName: string;
  members: readonly Member[];
  attempts: readonly Attempt[];
  shareUrl: (shareId: string) => string;
}

interface Words {
  t: Translate;
  lang: Locale;
  money: (amount: number) => string;
  /** " (order ORD-7)" or "". */
  order: string;
  date: (ms: number) => string;
  /** "Label: amount" as the language writes it ("Votre part : 12,50 €"). */
  line: (label: string, amount: string) => string;
}

function wordsOf(session: Session): Words {
  const lang = session.mailLocale;
  const t = translator(CATALOGUES[lang], lang);
  const dates = new Intl.DateTimeFormat(lang, { dateStyle: 'full', timeStyle: 'short', timeZone: 'UTC' });
  return {
    t,
    lang,
    money: (amount) => formatMoney(amount, session.currency, lang),
    order: session.orderRef ? t('mail.order', { ref: session.orderRef }) : '',
    date: (ms) => dates.format(ms),
    line: (label, amount) => t('mail.line', { label, amount }),
  };
}

const organizerName = (facts: MailFacts, w: Words) =>
  facts.session.customer?.name ?? facts.members.find((m) => m.isOrganizer)?.name ?? w.t('mail.someone');

/** The card as the payer knows it, when the processor told us. */
const cardLine = (attempt: Attempt | undefined, w: Words): Block[] =>
  attempt?.cardLast4
    ? [
        {
          kind: 'p',
          text: w.t('mail.card', {
            brand: brandName(attempt.cardBrand) ?? w.t('sharePage.someCard'),
            last4: attempt.cardLast4,
          }),
          muted: true,
        },
      ]
    : [];

/** The member's latest attempt of these kinds that succeeded. */
function latestSucceeded(facts: MailFacts, memberId: string, kinds: readonly Attempt['kind'][]) {
  return facts.attempts
    .filter((a) => a.memberId === memberId && kinds.includes(a.kind) && a.state === 'succeeded')
    .sort((a, b) => b.createdAt - a.createdAt)[0];
}

/** What the share is of the order: the member's own items, or the sentence the pages say. */
function basisBlocks(facts: MailFacts, member: Member, w: Words): Block[] {
  const { session } = facts;
  const { t } = w;
  if (session.groupMode === 'itemized' && member.items && member.items.length > 0) {
    const items = member.items.flatMap((line) => {
      const item = session.cart.items[line.itemIndex];
      return item && line.quantity > 0
        ? [w.line(`${line.quantity} × ${item.name}`, w.money(line.quantity * item.unit_price))]
        : [];
    });
    return [
      { kind: 'list', title: t('share.items'), items },
      { kind: 'p', text: t('share.itemsNote'), muted: true },
    ];
  }
  const total = w.money(session.totalCents);
  const size = facts.members.length;
  const text =
    session.groupMode === 'equal'
      ? size > 1
        ? t('share.equal.count', { total, count: size })
        : t('share.equal', { total })
      : session.groupMode === 'percentage' && member.basisPoints !== null
        ? t('share.percentage', {
            percent: new Intl.NumberFormat(w.lang, { style: 'percent', maximumFractionDigits: 2 }).format(
              member.basisPoints / 10_000,
            ),
            total,
          })
        : t('share.set', { total });
  return [{ kind: 'p', text }];
}

/** The whole order: its items, tax, shipping, fees and total. */
function cartBlock(session: Session, w: Words): Block {
  const { cart } = session;
  const { t } = w;
  const extra = (label: string, amount: number | undefined) =>
    amount && amount > 0 ? [w.line(label, w.money(amount))] : [];
  return {
    kind: 'list',
    title: t('cart.heading'),
    items: [
      ...cart.items.map((i) => w.line(`${i.quantity} × ${i.name}`, w.money(i.quantity * i.unit_price))),
      ...extra(t('cart.tax'), cart.tax),
      ...extra(t('cart.shipping'), cart.shipping),
      ...(cart.fees ?? []).flatMap((f) => extra(f.label || f.id || t('cart.fee'), f.amount)),
      w.line(t('cart.total'), w.money(session.totalCents)),
    ],
  };
}

/** The fee, explained in one sentence, when the payer paid one. */
const feeNote = (session: Session, w: Words): Block => ({
  kind: 'p',
  text: w.t('share.fee', {
    rate: new Intl.NumberFormat(w.lang, { style: 'percent', maximumFractionDigits: 2 }).format(
      session.consumerFeePpm / 1_000_000,
    ),
  }),
  muted: true,
});

/** Why a closed session gave the money back. */
const closedWords = (session: Session, merchant: string, w: Words) =>
  session.status === 'cancelled'
    ? w.t('mail.closed.cancelled', { merchant, order: w.order })
    : session.status === 'expired'
      ? w.t('mail.closed.expired', { merchant, order: w.order })
      : w.t('mail.closed.returned', { merchant, order: w.order });

/** A payer's receipt: what they paid (or what is held), for what, to whom, and what happens next. */
export function receiptMail(facts: MailFacts, member: Member): ComposedMail {
  const { session, merchantName: merchant } = facts;
  const w = wordsOf(session);
  const { t } = w;
  const payment = latestSucceeded(facts, member.id, ['charge', 'authorize']);
  const held = payment?.kind === 'authorize';
  const charged = payment?.amountCents ?? member.amountCents;
  const fee =
    payment?.feeCents ?? consumerFee(member.amountCents, session.consumerFeePpm, session.chargeStep);
  const amount = w.money(charged);
  const blocks: Block[] = [
    { kind: 'p', text: t('mail.hi', { name: member.name }) },
    {
      kind: 'p',
      text: held
        ? t('mail.receipt.held', { amount, merchant, order: w.order })
        : t('mail.receipt.paid', { amount, merchant, order: w.order }),
    },
    {
      kind: 'amounts',
      rows: [
        { label: t('due.share'), amount: w.money(charged - fee) },
        ...(fee > 0 ? [{ label: t('due.fee'), amount: w.money(fee) }] : []),
        { label: held ? t('mail.receipt.heldTotal') : t('mail.receipt.total'), amount, total: true },
      ],
    },
    ...cardLine(payment, w),
    ...(payment?.processorId
      ? [{ kind: 'p' as const, text: t('mail.reference', { id: payment.processorId }), muted: true }]
      : []),
    ...basisBlocks(facts, member, w),
    ...(fee > 0 ? [feeNote(session, w)] : []),
    cartBlock(session, w),
    ...(session.status === 'pending'
      ? [
          {
            kind: 'p' as const,
            text: held
              ? t('mail.receipt.ifNotHeld', { date: w.date(session.expiresAt) })
              : t('mail.receipt.ifNot', { date: w.date(session.expiresAt) }),
          },
        ]
      : []),
    { kind: 'link', text: t('mail.receipt.follow'), url: facts.shareUrl(member.shareId) },
    { kind: 'p', text: t('mail.signature') },
  ];
  return render(
    w,
    held
      ? t('mail.receipt.heldSubject', { amount, merchant })
      : t('mail.receipt.subject', { amount, merchant }),
    blocks,
  );
}

/** A payer's refund: why the money comes back, how much, to which card. */
export function refundMail(facts: MailFacts, member: Member): ComposedMail {
  const { session, merchantName: merchant } = facts;
  const w = wordsOf(session);
  const { t } = w;
  const refund = latestSucceeded(facts, member.id, ['refund']);
  const payment = latestSucceeded(facts, member.id, ['charge', 'capture']);
  const amount = w.money(refund?.amountCents ?? payment?.amountCents ?? member.amountCents);
  const card = latestSucceeded(facts, member.id, ['charge', 'authorize']);
  return render(w, t('mail.refund.subject', { amount, merchant }), [
    { kind: 'p', text: t('mail.hi', { name: member.name }) },
    { kind: 'p', text: closedWords(session, merchant, w) },
    { kind: 'amounts', rows: [{ label: t('mail.refund.label'), amount, total: true }] },
    // Less than the payment: a lost dispute returned the rest through the payer's bank (refundDue).
    {
      kind: 'p',
      text:
        refund && payment && refund.amountCents < payment.amountCents
          ? t('mail.refund.restText', { amount })
          : t('mail.refund.text', { amount }),
    },
    ...cardLine(card, w),
    ...(refund?.processorId
      ? [{ kind: 'p' as const, text: t('mail.refundReference', { id: refund.processorId }), muted: true }]
      : []),
    cartBlock(session, w),
    { kind: 'p', text: t('mail.signature') },
  ]);
}

/** A payer whose hold was released: nothing was charged. */
export function releaseMail(facts: MailFacts, member: Member): ComposedMail {
  const { session, merchantName: merchant } = facts;
  const w = wordsOf(session);
  const { t } = w;
  const hold = latestSucceeded(facts, member.id, ['authorize']);
  const amount = w.money(hold?.amountCents ?? member.amountCents);
  return render(w, t('mail.release.subject', { merchant }), [
    { kind: 'p', text: t('mail.hi', { name: member.name }) },
    { kind: 'p', text: closedWords(session, merchant, w) },
    { kind: 'p', text: t('mail.release.text', { amount }) },
    ...cardLine(hold, w),
    cartBlock(session, w),
    { kind: 'p', text: t('mail.signature') },
  ]);
}

/** The organizer: every share is paid. */
export function fundedMail(facts: MailFacts): ComposedMail {
  const { session, merchantName: merchant } = facts;
  const w = wordsOf(session);
  const { t } = w;
  const total = w.money(session.totalCents);
  return render(w, t('mail.funded.subject', { total, merchant }), [
    { kind: 'p', text: t('mail.hi', { name: organizerName(facts, w) }) },
    { kind: 'p', text: t('mail.funded.text', { total, merchant, order: w.order }) },
    {
      kind: 'list',
      title: t('mail.funded.who'),
      items: facts.members.map((m) => w.line(m.name, w.money(m.amountCents))),
    },
    { kind: 'p', text: t('finished.funded.organizer') },
    cartBlock(session, w),
    { kind: 'p', text: t('mail.signature') },
  ]);
}

/**
 * The organizer: a member's share failed — their card declined when they paid (`attempt`: that payment),
 * or their hold declined at capture once the group was complete — and is open again.
 */
export function shareFailedMail(facts: MailFacts, member: Member, how: 'declined' | 'capture'): ComposedMail {
  const { session, merchantName: merchant } = facts;
  const w = wordsOf(session);
  const { t } = w;
  const amount = w.money(member.amountCents);
  return render(w, t('mail.failed.subject', { name: member.name, merchant }), [
    { kind: 'p', text: t('mail.hi', { name: organizerName(facts, w) }) },
    {
      kind: 'p',
      text:
        how === 'capture'
          ? t('mail.failed.capture', { name: member.name, amount, merchant, order: w.order })
          : t('mail.failed.declined', { name: member.name, amount, merchant, order: w.order }),
    },
    { kind: 'link', text: t('mail.failed.link', { name: member.name }), url: facts.shareUrl(member.shareId) },
    { kind: 'p', text: t('mail.failed.manage') },
    { kind: 'p', text: t('mail.expires', { date: w.date(session.expiresAt) }) },
    { kind: 'p', text: t('mail.signature') },
  ]);
}

/** A pending member reminded of their share (flows/reminders.ts): what they owe, where to pay, by when. */
export function reminderMail(
  session: Session,
  merchantName: string,
  member: Member,
  link: string,
): ComposedMail {
  const w = wordsOf(session);
  const { t } = w;
  const merchant = merchantName;
  const amount = w.money(member.amountCents);
  const fee = consumerFee(member.amountCents, session.consumerFeePpm, session.chargeStep);
  const organizer = session.customer?.name ?? t('mail.someone');
  return render(w, t('mail.reminder.subject', { amount, merchant }), [
    { kind: 'p', text: t('mail.hi', { name: member.name }) },
    {
      kind: 'p',
      text: member.isOrganizer
        ? t('mail.reminder.organizer', { merchant, order: w.order })
        : t('mail.reminder.member', { organizer, merchant, order: w.order }),
    },
    {
      kind: 'p',
      text: fee > 0 ? t('mail.shareWithFee', { amount, fee: w.money(fee) }) : t('mail.share', { amount }),
    },
    { kind: 'link', text: t('mail.payHere'), url: link },
    { kind: 'p', text: t('mail.expires', { date: w.date(session.expiresAt) }) },
    { kind: 'p', text: t('mail.signature') },
  ]);
}

/** Replaces {link} in a message: the text part gets the address, the HTML part an anchor. */
const LINK = '{link}';

function render(w: Words, subject: string, blocks: readonly Block[]): ComposedMail {
  return { subject, text: renderText(w, blocks), html: renderHtml(w.lang, subject, blocks) };
}

function renderText(w: Words, blocks: readonly Block[]): string {
  return `${blocks.map((b) => blockText(w, b)).join('\n\n')}\n`;
}

function blockText(w: Words, b: Block): string {
  switch (b.kind) {
    case 'p':
      return b.text;
    case 'link':
      return b.text.replace(LINK, b.url);
    case 'list':
      return [b.title, ...b.items.map((i) => `- ${i}`)].join('\n');
    case 'amounts':
      return b.rows.map((r) => w.line(r.label, r.amount)).join('\n');
  }
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);

/** Styles inline on each element: mail readers drop <style> and never fetch a stylesheet. */
const STYLE = {
  body: 'margin:0;padding:0;background:#f5f5f4;',
  box: "max-width:560px;margin:0 auto;padding:24px;background:#ffffff;color:#1c1917;font:16px/1.5 -apple-system,BlinkMacSystemFont,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;",
  p: 'margin:0 0 16px;',
  listTitle: 'margin:0 0 4px;',
  muted: 'margin:0 0 16px;color:#57534e;font-size:14px;',
  table: 'border-collapse:collapse;margin:0 0 16px;min-width:260px;',
  cell: 'padding:4px 16px 4px 0;',
  num: 'padding:4px 0;text-align:right;white-space:nowrap;',
  total:
    'padding:6px 0 4px;text-align:right;white-space:nowrap;font-weight:bold;border-top:1px solid #d6d3d1;',
  totalLabel: 'padding:6px 16px 4px 0;font-weight:bold;border-top:1px solid #d6d3d1;',
  ul: 'margin:0 0 16px;padding-left:20px;',
  a: 'color:#1d4ed8;',
};

function renderHtml(lang: Locale, subject: string, blocks: readonly Block[]): string {
  const body = blocks.map(blockHtml).join('\n');
  return `<!doctype html>
<html lang="${lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escapeHtml(subject)}</title></head>
<body style="${STYLE.body}"><div style="${STYLE.box}">
${body}
</div></body></html>
`;
}

function blockHtml(b: Block): string {
  switch (b.kind) {
    case 'p':
      return `<p style="${b.muted ? STYLE.muted : STYLE.p}">${escapeHtml(b.text)}</p>`;
    case 'link': {
      const [before = '', after = ''] = b.text.split(LINK);
      const url = escapeHtml(b.url);
      return `<p style="${STYLE.p}">${escapeHtml(before)}<a href="${url}" style="${STYLE.a}">${url}</a>${escapeHtml(after)}</p>`;
    }
    case 'list':
      return `<p style="${STYLE.listTitle}">${escapeHtml(b.title)}</p><ul style="${STYLE.ul}">${b.items.map((i) => `<li>${escapeHtml(i)}</li>`).join('')}</ul>`;
    case 'amounts':
      return `<table role="presentation" style="${STYLE.table}">${b.rows
        .map(
          (r) =>
            `<tr><td style="${r.total ? STYLE.totalLabel : STYLE.cell}">${escapeHtml(r.label)}</td><td style="${r.total ? STYLE.total : STYLE.num}">${escapeHtml(r.amount)}</td></tr>`,
        )
        .join('')}</table>`;
  }
}
