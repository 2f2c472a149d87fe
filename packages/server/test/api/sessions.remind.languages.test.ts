// Reminder mail in the session's language (docs/api.md#languages), through a real SMTP server on loopback:
// a session made with locale=fr mails in French, with amounts and the expiry as French writes them; with
// locale auto, the creator's Accept-Language chooses (German); and every mail has a plain-text part beside
// its HTML one.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CATALOGUES } from '../../src/i18n/catalogues.ts';
import { LOCALES } from '../../src/i18n/locales.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { createSession, organizerToken, SESSION_ENV } from '../helpers/sessions.ts';
import { type SmtpReceiver, startSmtpServer } from '../helpers/smtp.ts';

const dialect = DIALECTS[0] as (typeof DIALECTS)[number];

describe('reminder mail in every language (SMTP on loopback)', () => {
  let t: TestApp;
  let smtp: SmtpReceiver;
  before(async () => {
    smtp = await startSmtpServer();
    t = await startTestApp(dialect, { env: { ...SESSION_ENV, SMTP_URL: smtp.url } });
  });
  after(async () => {
    await t?.close();
    await smtp?.close();
  });

  let run = 0;
  /** A session of 100.00 EUR in `extra`'s language, Ada organizing, Ben with an address; Ben's mail. */
  async function remindBen(extra: Record<string, unknown>, headers: Record<string, string> = {}) {
    run++;
    const ben = `ben+${run}@example.com`;
    const created = await createSession(t, {
      cart: {
        total: 10_000,
        currency: 'eur',
        items: [{ id: 'sku_raclette', name: 'Raclette', quantity: 1, unit_price: 10_000 }],
        metadata: { order_ref: 'ORD-7' },
      },
      customer: { name: 'Ada', email: `ada+${run}@example.com` },
      extra,
      headers,
    });
    const put = await t.request('PUT', `/api/v1/session/group?access=${organizerToken(created)}`, {
      body: { mode: 'equal', members: [{ name: 'Ada' }, { name: 'Ben', email: ben }] },
    });
    assert.equal(put.status, 200, put.text);
    const before = smtp.messages.length;
    const res = await t.request('POST', `/v1/sessions/${created.session_id}/remind`, {
      key: t.merchant.secretKey,
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.reminded, 2, res.text); // Ada, the organizer, whose own share is open too, and Ben
    const mail = smtp.messages.slice(before).find((m) => m.to.includes(ben));
    assert.ok(mail, 'Ben was mailed');
    return { mail, created };
  }

  test('locale=fr: a French mail, 50,00 € and the date as French writes them, text and HTML', async () => {
    const { mail, created } = await remindBen({ locale: 'fr' });
    const plain = (s: string) => s.replace(/[ \u00a0\u202f]+/g, ' ');
    assert.equal(plain(mail.subject), 'Rappel : votre part de 50,00 € chez Test Shop');
    assert.deepEqual(mail.parts, ['text/plain; charset=utf-8', 'text/html; charset=utf-8']);
    assert.match(mail.html ?? '', /^<!doctype html>\s*<html lang="fr">/);
    assert.match(plain(mail.html ?? ''), /Votre part : 50,00 € \(plus 0,50 € de frais de service\)/);
    const text = plain(mail.text);
    assert.match(text, /^Bonjour Ben,$/m);
    assert.match(
      text,
      /^Ada achète en groupe chez Test Shop \(commande ORD-7\), et votre part n’est pas encore payée\.$/m,
    );
    assert.match(text, /^Votre part : 50,00 € \(plus 0,50 € de frais de service\)$/m);
    const date = new Intl.DateTimeFormat('fr', {
      dateStyle: 'full',
      timeStyle: 'short',
      timeZone: 'UTC',
    }).format(Date.parse(created.expires_at));
    assert.ok(text.includes(`Le groupe expire le ${plain(date)} (UTC).`), text);
  });

  test('locale=auto: the language of whoever created the session (Accept-Language)', async () => {
    const { mail } = await remindBen({}, { 'accept-language': 'de-CH, en;q=0.5' });
    assert.match(mail.subject, /^Erinnerung: dein Anteil von /);
    assert.match(mail.text, /^Hallo Ben,$/m);
  });

  for (const lang of LOCALES) {
    test(`${lang}: every line of the mail is that language's`, async () => {
      const { mail } = await remindBen({ locale: lang });
      const catalogue = CATALOGUES[lang];
      const greeting = (catalogue['mail.hi'] as string).replace('{name}', 'Ben');
      assert.ok(mail.text.startsWith(greeting), `${lang}: ${mail.text}`);
      const link = (catalogue['mail.payHere'] as string).split('{link}')[0] as string;
      assert.ok(mail.text.includes(link), `${lang}: ${mail.text}`);
      if (lang !== 'en') assert.doesNotMatch(mail.text, /Your share|Pay it here|is buying from/);
    });
  }
});
