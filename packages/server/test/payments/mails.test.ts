// Mail that follows a fact (#19, docs/decisions.md#mail), through a real SMTP server on loopback: a payer
// who gave an address gets a receipt (what they paid, for what, at which shop), then a refund or a released
// hold when the group does not complete; the organizer hears when the group is funded and when a share
// fails. Each mail is in the session's language with Intl's amounts, has a plain-text and an HTML part
// (escaped, no remote resource), and is sent once per fact, whatever the number of processes, a sender
// that died holding it, or a mail server that answered "try later".
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fanOutEvents } from '../../src/flows/deliveries.ts';
import { DECLINE_MAIL_DELAY_MS, sendDueMails } from '../../src/flows/mails.ts';
import { CATALOGUES } from '../../src/i18n/catalogues.ts';
import { LOCALES, type Locale } from '../../src/i18n/locales.ts';
import { settleDueSessions } from '../../src/jobs/settle.ts';
import { listSessionMails, takeDueMails } from '../../src/store/mails.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { manualClock } from '../helpers/clock.ts';
import { DIALECTS, sqliteCase } from '../helpers/databases.ts';
import { englishLeft } from '../helpers/english.ts';
import { CARDS, disputeEvent, pay, payOk } from '../helpers/payments.ts';
import { createSession, organizerToken, PAY_URL, SESSION_ENV } from '../helpers/sessions.ts';
import { type ReceivedMail, type SmtpReceiver, startSmtpServer } from '../helpers/smtp.ts';

const MINUTE_MS = 60_000;

/** 30.00 of raclette and 7.50 of wine, in euros: 37.50, order ORD-7. */
const CART = {
  total: 3750,
  currency: 'eur',
  items: [
    { id: 'sku_raclette', name: 'Raclette', quantity: 1, unit_price: 3000 },
    { id: 'sku_wine', name: 'Vin', quantity: 1, unit_price: 750 },
  ],
  metadata: { order_ref: 'ORD-7' },
};

/**
 * Fans out the events committed so far (queueing their mails), then sends what is due. A fan-out that
 * met another process's write on SQLite ("database is locked") is done again, as the dispatcher's next
 * round would.
 */
async function deliver(t: TestApp): Promise<number> {
  for (;;) {
    try {
      if (!(await fanOutEvents(t.deps))) break;
    } catch (error) {
      if (!String((error as { code?: string }).code).startsWith('SQLITE_BUSY')) throw error;
    }
  }
  return sendDueMails(t.deps);
}

const plain = (s: string) => s.replace(/[\u00a0\u202f]/g, ' ');
/** Words only: links, ids and amounts out (an id's letters may spell anything). */
const wordsOnly = (s: string) => s.replace(/https?:\/\/\S+/g, ' ').replace(/\S*[_\d]\S*/g, ' ');
const htmlText = (html: string) =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');

/**
 * What every mail must be: a text and an HTML part, in `lang` throughout (no message key, no placeholder,
 * no English word but the loanwords and the data), the HTML escaped, fetching nothing, linking only to the
 * pay pages.
 */
function checkMail(mail: ReceivedMail, lang: Locale, data: string[], what: string) {
  const where = `${lang} ${what}`;
  assert.deepEqual(
    mail.parts?.map((p) => p.split(';')[0]),
    ['text/plain', 'text/html'],
    `${where}: a text and an HTML part`,
  );
  const html = mail.html ?? '';
  assert.match(html, new RegExp(`^<!doctype html>\\s*<html lang="${lang}">`), `${where}: lang`);
  assert.doesNotMatch(html, /<img|<link|<script|<style|<iframe|\bsrc=|url\(|@import/i, `${where}: fetches`);
  for (const [, href] of html.matchAll(/href="([^"]*)"/g))
    assert.ok(href?.startsWith(`${PAY_URL}/`), `${where}: links to ${href}`);
  // Every tag's attributes are name="value" pairs and nothing else: a quote inside a value (a font name
  // in a style) would end the attribute early and lose the rest of the style.
  for (const [tag] of html.matchAll(/<[a-z][^>]*>/g))
    assert.match(tag, /^<[a-z0-9]+(?:\s+[a-z-]+="[^"<>]*")*\s*>$/, `${where}: a broken tag ${tag}`);
  for (const [, style] of html.matchAll(/style="([^"]*)"/g))
    assert.match(style ?? '', /^(?:[a-z-]+:[^;]+;)+$/, `${where}: a style cut short: ${style}`);
  for (const [part, text] of [
    ['subject', mail.subject],
    ['text', mail.text],
    ['html', htmlText(html)],
  ] as const) {
    assert.doesNotMatch(text, /\{\w+\}/, `${where} ${part}: a placeholder is left`);
    assert.doesNotMatch(wordsOnly(text), /\b[a-z]+\.[a-z]+[A-Z.]\w*\b/, `${where} ${part}: a message key`);
    assert.deepEqual(englishLeft(wordsOnly(text), lang, data), [], `${where} ${part}: English left\n${text}`);
  }
  // The HTML says what the text says: every line of the text part is in it (a label and its amount are
  // two cells there, "label: amount" one line here).
  const squeeze = (s: string) => plain(s).replace(/[\s:]/g, '');
  const flat = squeeze(htmlText(html));
  for (const line of mail.text.split('\n').filter(Boolean))
    assert.ok(flat.includes(squeeze(line.replace(/^- /, ''))), `${where}: the HTML lacks "${line}"`);
}

describe('mail that follows a fact (SMTP on loopback)', () => {
  const clock = manualClock(Date.now());
  let t: TestApp;
  let smtp: SmtpReceiver;
  before(async () => {
    smtp = await startSmtpServer();
    t = await startTestApp(sqliteCase, { clock, env: { ...SESSION_ENV, SMTP_URL: smtp.url } });
  });
  after(async () => {
    await t?.close();
    await smtp?.close();
  });

  let run = 0;
  /** A session of Ann (organizing), Bea and Cato, each with an address, split as `group` says. */
  async function groupOf(extra: Record<string, unknown>, group: Record<string, unknown> = { mode: 'equal' }) {
    run++;
    const at = (name: string) => `${name.toLowerCase()}+${run}@example.com`;
    const created = await createSession(t, {
      cart: CART,
      customer: { name: 'Ann', email: at('Ann') },
      extra,
    });
    const res = await t.request('PUT', `/api/v1/session/group?access=${organizerToken(created)}`, {
      body: {
        members: [{ name: 'Ann' }, { name: 'Bea', email: at('Bea') }, { name: 'Cato', email: at('Cato') }],
        ...group,
      },
    });
    assert.equal(res.status, 200, res.text);
    const [ann, bea, cato] = res.body.group.members as { share_id: string }[];
    return {
      created,
      ann: ann?.share_id as string,
      bea: bea?.share_id as string,
      cato: cato?.share_id as string,
      at,
    };
  }

  /** The mails sent to `address` since `from` (an index into the receiver's list). */
  const mailsTo = (address: string, from = 0) =>
    smtp.messages.slice(from).filter((m) => m.to.includes(address));

  const DATA = ['Ann', 'Bea', 'Cato', 'Raclette', 'Vin', 'Test Shop', 'ORD-7', 'Visa'];

  for (const lang of LOCALES) {
    test(`${lang}: receipt, the organizer told of a declined card and of the funded group, refund`, async () => {
      const start = smtp.messages.length;
      const g = await groupOf({ locale: lang });
      await payOk(t, g.bea);
      assert.equal((await pay(t, g.cato, CARDS.declined)).status, 402);
      assert.equal(await deliver(t), 1, 'only the receipt goes at once');
      const [receipt] = mailsTo(g.at('Bea'), start);
      assert.ok(receipt, 'Bea has her receipt');
      checkMail(receipt, lang, DATA, 'receipt');
      const catalogue = CATALOGUES[lang];
      assert.ok(receipt.text.startsWith((catalogue['mail.hi'] as string).replace('{name}', 'Bea')));

      // A quarter of an hour later Cato has still not paid: Ann hears of it, in her language.
      clock.advance(DECLINE_MAIL_DELAY_MS + MINUTE_MS);
      assert.equal(await deliver(t), 1);
      const [failed] = mailsTo(g.at('Ann'), start);
      assert.ok(failed, 'Ann is told');
      checkMail(failed, lang, DATA, "organizer's mail of a declined card");
      assert.ok(plain(failed.text).includes(`${PAY_URL}/s/${g.cato}`), "Cato's own link");

      // The group is cancelled: Bea's money comes back, and she is told so.
      const cancel = await t.request('POST', `/v1/sessions/${g.created.session_id}/cancel`, {
        key: t.merchant.secretKey,
      });
      assert.equal(cancel.status, 200, cancel.text);
      assert.equal(await deliver(t), 1);
      const refund = mailsTo(g.at('Bea'), start)[1];
      assert.ok(refund, 'Bea is told of her refund');
      checkMail(refund, lang, DATA, 'refund');
      assert.notEqual(refund.subject, receipt.subject);

      // Another group is paid in full: each payer's receipt, and Ann told the group is funded.
      const funded = await groupOf({ locale: lang });
      const before = smtp.messages.length;
      for (const share of [funded.ann, funded.bea, funded.cato]) await payOk(t, share);
      assert.equal(await deliver(t), 4);
      const ann = mailsTo(funded.at('Ann'), before);
      assert.equal(ann.length, 2, "Ann's receipt (the shop's address for her) and the funded mail");
      for (const mail of ann) checkMail(mail, lang, DATA, "organizer's mails");
      checkMail(mailsTo(funded.at('Cato'), before)[0] as ReceivedMail, lang, DATA, 'receipt');
    });
  }

  test('fr: what the receipt, the refund and the funded mail say, as French writes amounts', async () => {
    const start = smtp.messages.length;
    const g = await groupOf({ locale: 'fr' });
    await payOk(t, g.bea);
    await deliver(t);
    const receipt = mailsTo(g.at('Bea'), start)[0] as ReceivedMail;
    assert.equal(plain(receipt.subject), 'Reçu : 12,63 € pour votre part chez Test Shop');
    const text = plain(receipt.text);
    assert.match(text, /^Bonjour Bea,$/m);
    assert.match(
      text,
      /^Merci : votre paiement de 12,63 € pour votre part de la commande groupée chez Test Shop \(commande ORD-7\) est passé\.$/m,
    );
    assert.match(text, /^Votre part : 12,50 €\nFrais de service : 0,13 €\nVous avez payé : 12,63 €$/m);
    assert.match(text, /^Carte : Visa se terminant par 4242$/m);
    assert.match(text, /^Une part égale des 37,50 € de la commande, partagée entre 3 personnes\.$/m);
    assert.match(text, /^Les frais de service \(1.%/m);
    assert.match(
      text,
      /^La commande complète\n- 1 × Raclette : 30,00 €\n- 1 × Vin : 7,50 €\n- Total : 37,50 €$/m,
    );
    assert.match(text, new RegExp(`^Suivez le groupe ici : ${PAY_URL}/s/${g.bea}$`, 'm'));

    await t.request('POST', `/v1/sessions/${g.created.session_id}/cancel`, { key: t.merchant.secretKey });
    await deliver(t);
    const refund = mailsTo(g.at('Bea'), start)[1] as ReceivedMail;
    assert.equal(plain(refund.subject), 'Remboursement : 12,63 € rendus par Test Shop');
    assert.match(
      plain(refund.text),
      /^La commande groupée chez Test Shop \(commande ORD-7\) a été annulée avant que toutes les parts soient payées\.$/m,
    );
    assert.match(plain(refund.text), /^Remboursé : 12,63 €$/m);
    // The refund's own id, named as a refund's: not the payment's reference.
    assert.match(plain(refund.text), /^Référence du remboursement : re_\w+$/m);
    assert.doesNotMatch(plain(refund.text), /Référence du paiement/);
  });

  test('fr: a refund of the rest after a dispute lost for part of the payment does not say all of it comes back', async () => {
    const start = smtp.messages.length;
    const g = await groupOf({ locale: 'fr' });
    const paid = await payOk(t, g.bea);
    const dispute = {
      id: `dp_mail_${run}`,
      paymentId: paid.body.payment.id,
      amountCents: 263,
      currency: 'eur',
    };
    await disputeEvent(t, dispute, 'needs_response');
    await t.request('POST', `/v1/sessions/${g.created.session_id}/cancel`, { key: t.merchant.secretKey });
    await disputeEvent(t, dispute, 'lost');
    clock.advance(1_000);
    await settleDueSessions(t.deps);
    await deliver(t);
    const refund = mailsTo(g.at('Bea'), start).find((m) => /^Remboursement/.test(plain(m.subject)));
    assert.ok(refund, 'a refund mail');
    assert.equal(plain(refund.subject), 'Remboursement : 10,00 € rendus par Test Shop');
    assert.match(plain(refund.text), /^Remboursé : 10,00 €$/m);
    assert.match(
      plain(refund.text),
      /le reste de votre paiement, après la partie que votre banque vous a déjà rendue/,
    );
    assert.doesNotMatch(plain(refund.text), /L’intégralité/);
    checkMail(refund, 'fr', DATA, 'refund of the rest');
  });

  test('itemized: the receipt lists the payer’s own items, not the whole order as theirs', async () => {
    const start = smtp.messages.length;
    const g = await groupOf(
      { locale: 'de' },
      {
        mode: 'itemized',
        members: [
          { name: 'Ann', items: [] },
          { name: 'Bea', email: `bea+item@example.com`, items: [{ item_index: 1, quantity: 1 }] },
          { name: 'Cato', email: `cato+item@example.com`, items: [{ item_index: 0, quantity: 1 }] },
        ],
      },
    );
    await payOk(t, g.bea);
    await deliver(t);
    const receipt = mailsTo('bea+item@example.com', start)[0] as ReceivedMail;
    const text = plain(receipt.text);
    assert.match(text, /^Deine Artikel:\n- 1 × Vin: 7,50 €$/m);
    assert.match(text, /^Steuern, Versand und Gebühren werden anteilig nach den Artikeln verteilt\.$/m);
    checkMail(receipt, 'de', DATA, 'itemized receipt');
  });

  test('custom amounts: "an amount set by the organizer"; on_funded: a hold, then its release', async () => {
    const start = smtp.messages.length;
    const g = await groupOf(
      { locale: 'en', group_config: { capture: 'on_funded' } },
      {
        mode: 'custom',
        members: [
          { name: 'Ann', amount_cents: 1750 },
          { name: 'Bea', email: 'bea+hold@example.com', amount_cents: 1000 },
          { name: 'Cato', amount_cents: 1000 },
        ],
      },
    );
    await payOk(t, g.bea);
    await deliver(t);
    const held = mailsTo('bea+hold@example.com', start)[0] as ReceivedMail;
    assert.equal(held.subject, 'Card held: €10.10 for your share at Test Shop');
    assert.match(
      held.text,
      /^Your card is held for €10\.10, your share of the group order from Test Shop \(order ORD-7\)\./m,
    );
    assert.match(held.text, /^Held on your card: €10\.10$/m);
    assert.match(held.text, /^An amount set by the organizer, out of the order's €37\.50\.$/m);
    assert.match(held.text, /the hold is released and nothing is charged\.$/m);
    checkMail(held, 'en', DATA, 'held receipt');

    await t.request('POST', `/v1/sessions/${g.created.session_id}/cancel`, { key: t.merchant.secretKey });
    await deliver(t);
    const released = mailsTo('bea+hold@example.com', start)[1] as ReceivedMail;
    assert.equal(released.subject, 'Hold released: nothing charged by Test Shop');
    assert.match(released.text, /^The hold of €10\.10 on your card is released: nothing was charged/m);
    checkMail(released, 'en', DATA, 'released hold');
  });

  test('a hold declined at capture: the organizer is told at once, with the link to pay again', async () => {
    const start = smtp.messages.length;
    const g = await groupOf({ locale: 'it', group_config: { capture: 'on_funded' } });
    await payOk(t, g.ann);
    await payOk(t, g.bea);
    await payOk(t, g.cato, CARDS.failsAtCapture);
    await deliver(t);
    const toAnn = mailsTo(g.at('Ann'), start);
    const failed = toAnn.find((m) => m.subject.startsWith('Il pagamento di Cato'));
    assert.ok(failed, toAnn.map((m) => m.subject).join('\n'));
    assert.match(plain(failed.text), /^Quando il gruppo era completo, la carta di Cato è stata rifiutata/m);
    assert.ok(failed.text.includes(`${PAY_URL}/s/${g.cato}`));
    checkMail(failed, 'it', DATA, 'capture declined');
  });

  test('a declined card then paid within the quarter hour: the organizer is not bothered', async () => {
    const start = smtp.messages.length;
    const g = await groupOf({ locale: 'nl' });
    assert.equal((await pay(t, g.cato, CARDS.insufficientFunds)).status, 402);
    await payOk(t, g.cato);
    clock.advance(DECLINE_MAIL_DELAY_MS + MINUTE_MS);
    await deliver(t);
    assert.deepEqual(
      mailsTo(g.at('Ann'), start).map((m) => m.subject),
      [],
    );
    const mails = await listSessionMails(t.deps.db.kysely, g.created.session_id);
    assert.deepEqual(mails.map((m) => [m.kind, m.state]).sort(), [
      ['organizer_share_declined', 'skipped'],
      ['receipt', 'sent'],
    ]);
  });

  test('HTML is escaped: a name with markup is shown as text', async () => {
    const start = smtp.messages.length;
    const created = await createSession(t, {
      cart: CART,
      customer: { name: 'Ann', email: 'ann+x@example.com' },
    });
    const res = await t.request('PUT', `/api/v1/session/group?access=${organizerToken(created)}`, {
      body: {
        mode: 'equal',
        members: [
          { name: 'Ann' },
          { name: 'Zoë <img src=x onerror=alert(1)> & "Co"', email: 'zoe@example.com' },
        ],
      },
    });
    assert.equal(res.status, 200, res.text);
    await payOk(t, res.body.group.members[1].share_id);
    await deliver(t);
    const mail = mailsTo('zoe@example.com', start)[0] as ReceivedMail;
    assert.match(mail.html ?? '', /Zoë &lt;img src=x onerror=alert\(1\)&gt; &amp; &quot;Co&quot;/);
    assert.doesNotMatch(mail.html ?? '', /<img/);
    assert.match(mail.text, /^Hi Zoë <img src=x onerror=alert\(1\)> & "Co",$/m);
  });
});

for (const dialect of DIALECTS) {
  describe(`each fact mailed once, on ${dialect.name}`, { skip: dialect.skip }, () => {
    const clock = manualClock(Date.now());
    let a: TestApp;
    let b: TestApp;
    let smtp: SmtpReceiver;
    /** Answers per address: how many times each was offered, and what to answer. */
    const offered = new Map<string, number>();
    before(async () => {
      smtp = await startSmtpServer({
        answer(address) {
          const n = (offered.get(address) ?? 0) + 1;
          offered.set(address, n);
          if (address.startsWith('nobody')) return { code: 550, message: 'No such mailbox' };
          if (address.startsWith('busy') && n === 1) return { code: 451, message: 'Try again later' };
          return undefined;
        },
      });
      const database = await dialect.create();
      const env = { ...SESSION_ENV, SMTP_URL: smtp.url };
      a = await startTestApp(dialect, { clock, env, database });
      b = await startTestApp(dialect, { clock, env, database });
    });
    after(async () => {
      await a?.close();
      await b?.close();
      await smtp?.close();
    });

    async function paidGroup(names: { name: string; email?: string }[]) {
      const created = await createSession(a, {
        cart: CART,
        customer: { name: 'Ann', email: 'ann@example.com' },
      });
      const res = await a.request('PUT', `/api/v1/session/group?access=${organizerToken(created)}`, {
        body: { mode: 'equal', members: names },
      });
      assert.equal(res.status, 200, res.text);
      return {
        created,
        shares: res.body.group.members.map((m: { share_id: string }) => m.share_id) as string[],
      };
    }

    test('two processes fanning out and sending side by side send each mail once', async () => {
      const start = smtp.messages.length;
      const { created, shares } = await paidGroup([
        { name: 'Ann' },
        { name: 'Bea', email: 'bea@example.com' },
        { name: 'Cato', email: 'cato@example.com' },
      ]);
      await Promise.all(shares.map((s) => payOk(a, s)));
      for (let round = 0; round < 3; round++)
        await Promise.all([deliver(a), deliver(b), deliver(a), deliver(b)]);
      const sent = smtp.messages.slice(start);
      // Receipts to Ann (the shop's address for her), Bea and Cato, and Ann's funded mail: four, once each.
      assert.equal(sent.length, 4, sent.map((m) => `${m.to} ${m.subject}`).join('\n'));
      assert.deepEqual(sent.map((m) => m.to[0]).sort(), [
        'ann@example.com',
        'ann@example.com',
        'bea@example.com',
        'cato@example.com',
      ]);
      assert.equal(new Set(sent.map((m) => m.headers['message-id'])).size, 4);
      const rows = await listSessionMails(a.deps.db.kysely, created.session_id);
      assert.deepEqual(
        rows.map((m) => m.state),
        ['sent', 'sent', 'sent', 'sent'],
      );
    });

    test('a sender that died holding a mail: another sends it once its lease ran out, with the same Message-ID', async () => {
      const start = smtp.messages.length;
      const { created, shares } = await paidGroup([
        { name: 'Ann' },
        { name: 'Dee', email: 'dee@example.com' },
      ]);
      await payOk(a, shares[1] as string);
      while (await fanOutEvents(a.deps)) {
        // all fanned out
      }
      // Process a takes the receipt and dies before sending it.
      const now = clock.now();
      const taken = await takeDueMails(a.deps.db.kysely, a.deps.db.dialect, {
        now,
        holder: 'dead-process',
        until: now + 5 * MINUTE_MS,
        limit: 10,
      });
      assert.equal(taken.length, 1);
      assert.equal(await sendDueMails(b.deps), 0, 'held: not sent by another');
      clock.advance(5 * MINUTE_MS);
      assert.equal(await sendDueMails(b.deps), 1, 'the lease ran out: b sends it');
      assert.equal(await sendDueMails(a.deps), 0);
      const sent = smtp.messages.slice(start);
      assert.equal(sent.length, 1);
      const [row] = await listSessionMails(a.deps.db.kysely, created.session_id);
      assert.equal(sent[0]?.headers['message-id'], `<${row?.id}@group-checkout.localhost>`);
    });

    test('"try later" is tried again on the schedule; "no such mailbox" is not', async () => {
      const start = smtp.messages.length;
      const { created, shares } = await paidGroup([
        { name: 'Ann' },
        { name: 'Busy', email: 'busy@example.com' },
        { name: 'Nobody', email: 'nobody@example.com' },
      ]);
      await payOk(a, shares[1] as string);
      await payOk(a, shares[2] as string);
      assert.equal(await deliver(a), 0);
      const states = async () =>
        (await listSessionMails(a.deps.db.kysely, created.session_id))
          .map((m) => `${m.address} ${m.state}`)
          .sort();
      assert.deepEqual(await states(), ['busy@example.com pending', 'nobody@example.com failed']);
      assert.equal(await deliver(b), 0, 'not due yet');
      clock.advance(MINUTE_MS);
      assert.equal(await deliver(b), 1);
      assert.deepEqual(await states(), ['busy@example.com sent', 'nobody@example.com failed']);
      clock.advance(24 * 60 * MINUTE_MS);
      assert.equal(await deliver(a), 0);
      assert.equal(offered.get('nobody@example.com'), 1, 'a 550 is never offered again');
      assert.equal(smtp.messages.slice(start).length, 1);
    });
  });
}
