import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { type ManualClock, MINUTE_MS, manualClock } from '../helpers/clock.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { assertError } from '../helpers/errors.ts';
import { type Created, createSession, organizerToken, PAY_URL, SESSION_ENV } from '../helpers/sessions.ts';
import { parseMessage, type SmtpReceiver, startSmtpServer } from '../helpers/smtp.ts';

const ORGANIZER = { name: 'Ada', email: 'ada@example.com' };

// Limits are kept per address and merchant (at most 3 reminders a day), so each test mails addresses of its
// own: `run` makes them unique (ada+3@example.com), as if each test were another group of people.
let run = 0;

interface PageMember {
  id: string;
  name: string;
  email: string | null;
  amount_cents: number;
  share_url: string;
}

/** A session of 100.00 USD split equally between Ada (organizer), Ben (with email) and Cy (without). */
async function groupOfThree(t: TestApp, customer: Record<string, unknown> | undefined = ORGANIZER) {
  run++;
  const unique = (email: unknown) => (typeof email === 'string' ? email.replace('@', `+${run}@`) : email);
  const created = await createSession(
    t,
    customer
      ? { customer: { ...customer, ...(customer.email ? { email: unique(customer.email) } : {}) } }
      : {},
  );
  const put = await t.request('PUT', `/api/v1/session/group?access=${organizerToken(created)}`, {
    body: {
      mode: 'equal',
      members: [{ name: 'Ada' }, { name: 'Ben', email: unique('ben@example.com') }, { name: 'Cy' }],
    },
  });
  assert.equal(put.status, 200, put.text);
  const members: PageMember[] = put.body.group.members;
  return { created, members };
}

const remind = (t: TestApp, created: Created, key = t.merchant.secretKey) =>
  t.request('POST', `/v1/sessions/${created.session_id}/remind`, { key });

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

for (const dialect of DIALECTS) {
  describe(`POST /v1/sessions/{id}/remind on ${dialect.name}, with an SMTP server`, {
    skip: dialect.skip,
  }, () => {
    let t: TestApp;
    let smtp: SmtpReceiver;
    let clock: ManualClock;
    before(async () => {
      smtp = await startSmtpServer();
      clock = manualClock();
      t = await startTestApp(dialect, { env: { ...SESSION_ENV, SMTP_URL: smtp.url }, clock });
    });
    after(async () => {
      await t?.close();
      await smtp?.close();
    });

    test('mails each pending member with an email once: merchant, amount, share link and expiry', async () => {
      smtp.messages.length = 0;
      const { created, members } = await groupOfThree(t);
      const res = await remind(t, created);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(
        { ...res.body, request_id: 'x' },
        { request_id: 'x', session_id: created.session_id, reminded: 2, skipped: 1, failed: 0 },
      );
      assert.equal(smtp.messages.length, 2);
      const byRecipient = new Map(smtp.messages.map((m) => [m.to.join(',').replace(/\+\d+@/, '@'), m]));
      assert.deepEqual([...byRecipient.keys()].sort(), ['ada@example.com', 'ben@example.com']);

      const [ada, ben] = members as [PageMember, PageMember, PageMember];
      assert.equal(ada.amount_cents, 3334);
      assert.match(ada.share_url, new RegExp(`^${PAY_URL}/s/shr_[0-9A-Za-z]{22,}$`));
      for (const [address, member, amount] of [
        ['ada@example.com', ada, '$33.34'],
        ['ben@example.com', ben, '$33.33'],
      ] as const) {
        const mail = byRecipient.get(address)!;
        assert.ok(mail.subject.includes(`${amount} share for Test Shop`), mail.subject);
        assert.ok(mail.text.includes(`Hi ${member.name},`), mail.text);
        assert.ok(mail.text.includes('Test Shop'), mail.text);
        assert.ok(mail.text.includes(`Your share: ${amount}`), mail.text);
        assert.ok(mail.text.includes(`Pay it here: ${member.share_url}`), mail.text);
        const expiry = new Intl.DateTimeFormat('en', {
          dateStyle: 'full',
          timeStyle: 'short',
          timeZone: 'UTC',
        });
        assert.ok(
          mail.text.includes(`expires on ${expiry.format(Date.parse(created.expires_at))} (UTC)`),
          mail.text,
        );
        assert.ok(mail.text.includes('ORD-1001'), mail.text);
      }
      // No Reply-To: the organizer's address was typed in a browser (docs/api.md#reminders).
      const adaMail = byRecipient.get('ada@example.com')!;
      const benMail = byRecipient.get('ben@example.com')!;
      assert.equal(benMail.headers['reply-to'], undefined);
      assert.ok(benMail.text.includes('Ada is buying from Test Shop'), benMail.text);
      assert.equal(adaMail.headers['reply-to'], undefined);
      assert.ok(adaMail.text.includes('You are buying from Test Shop'), adaMail.text);
      // Each mail carries its own member's link, never another's.
      assert.ok(!byRecipient.get('ben@example.com')!.text.includes(ada.share_url));
    });

    test('a second call within the hour skips them; 61 minutes later they are reminded again', async () => {
      const { created } = await groupOfThree(t);
      assert.equal((await remind(t, created)).body.reminded, 2);
      smtp.messages.length = 0;

      const again = await remind(t, created);
      assert.equal(again.status, 200);
      assert.deepEqual([again.body.reminded, again.body.skipped, again.body.failed], [0, 3, 0]);
      clock.advance(59 * MINUTE_MS);
      assert.deepEqual([(await remind(t, created)).body.reminded, smtp.messages.length], [0, 0]);

      clock.advance(2 * MINUTE_MS);
      const later = await remind(t, created);
      assert.deepEqual([later.body.reminded, later.body.skipped, later.body.failed], [2, 1, 0]);
      assert.equal(smtp.messages.length, 2);
    });

    test('concurrent calls never mail one member twice', async () => {
      const { created } = await groupOfThree(t);
      smtp.messages.length = 0;
      const results = await Promise.all(Array.from({ length: 5 }, () => remind(t, created)));
      assert.equal(
        results.reduce((sum, r) => sum + r.body.reminded, 0),
        2,
      );
      assert.equal(smtp.messages.length, 2);
    });

    test('without the organizer’s customer.email every pending member is skipped', async () => {
      smtp.messages.length = 0;
      const { created } = await groupOfThree(t, { name: 'Ada' });
      const res = await remind(t, created);
      assert.equal(res.status, 200);
      assert.deepEqual([res.body.reminded, res.body.skipped, res.body.failed], [0, 3, 0]);
      assert.equal(smtp.messages.length, 0);
    });

    test('a session whose group was never set up reminds the organizer alone', async () => {
      smtp.messages.length = 0;
      run++;
      const created = await createSession(t, { customer: { ...ORGANIZER, email: `ada+${run}@example.com` } });
      const res = await remind(t, created);
      assert.deepEqual([res.body.reminded, res.body.skipped], [1, 0]);
      assert.deepEqual(smtp.messages[0]?.to, [`ada+${run}@example.com`]);
      assert.ok(smtp.messages[0]?.text.includes('Your share: $100.00'));
    });

    test('a share of 0 owes nothing: its member is skipped, and no round or limit is spent on it', async () => {
      smtp.messages.length = 0;
      run++;
      const organizer = `ada+${run}@example.com`;
      const created = await createSession(t, { customer: { ...ORGANIZER, email: organizer } });
      const put = await t.request('PUT', `/api/v1/session/group?access=${organizerToken(created)}`, {
        body: {
          mode: 'host-pays',
          members: [{ name: 'Ada' }, { name: 'Ben', email: `ben+${run}@example.com`, amount_cents: 10_000 }],
        },
      });
      assert.equal(put.status, 200, put.text);
      assert.deepEqual(
        put.body.group.members.map((m: PageMember) => m.amount_cents),
        [0, 10_000],
      );
      const first = await remind(t, created);
      assert.equal(first.status, 200, first.text);
      assert.deepEqual([first.body.reminded, first.body.skipped], [1, 1]);
      assert.deepEqual(
        smtp.messages.map((m) => m.to),
        [[`ben+${run}@example.com`]],
        'only Ben, who owes 100.00',
      );
      // Ada's address was not mailed: reminding only her (once Ben is out of the way) has no round to spend.
      const counted = await t.deps.db.kysely
        .selectFrom('reminder_mails')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('address', '=', organizer)
        .executeTakeFirstOrThrow();
      assert.equal(Number(counted.n), 0);
    });

    test('409 on a cancelled session, 404 on an unknown one, 403 with a publishable key', async () => {
      smtp.messages.length = 0;
      const { created } = await groupOfThree(t);
      const forbidden = await remind(t, created, t.merchant.publishableKey);
      assertError(forbidden, 403, 'secret_key_required');
      await t.request('POST', `/v1/sessions/${created.session_id}/cancel`, { key: t.merchant.secretKey });
      const res = await remind(t, created);
      assertError(res, 409, 'session_not_pending');
      assert.equal(
        res.body.error,
        'The session is cancelled; only a pending session can be changed or paid.',
      );
      const unknown = await t.request('POST', '/v1/sessions/gs_unknown000000000/remind', {
        key: t.merchant.secretKey,
      });
      assertError(unknown, 404, 'session_not_found');
      assert.equal(smtp.messages.length, 0);
    });
  });

  describe(`POST /v1/sessions/{id}/remind on ${dialect.name}, SMTP server down`, {
    skip: dialect.skip,
  }, () => {
    let t: TestApp;
    before(async () => {
      const port = await closedPort();
      t = await startTestApp(dialect, { env: { ...SESSION_ENV, SMTP_URL: `smtp://127.0.0.1:${port}` } });
    });
    after(() => t?.close());

    test('the refused mails count as failed: neither they nor their round count against a limit', async () => {
      const { created } = await groupOfThree(t);
      const res = await remind(t, created);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual([res.body.reminded, res.body.skipped, res.body.failed], [0, 1, 2]);
      const kysely = t.deps.db.kysely;
      const of = (table: 'reminder_mails' | 'reminder_rounds') =>
        kysely.selectFrom(table).selectAll().where('session_id', '=', created.session_id).execute();
      assert.deepEqual(await of('reminder_mails'), []);
      assert.deepEqual(await of('reminder_rounds'), []);
      // Nothing was sent, so calls past the 3 rounds still try them again at once.
      for (let i = 0; i < 4; i++) assert.equal((await remind(t, created)).body.failed, 2);
    });
  });

  describe(`POST /v1/sessions/{id}/remind on ${dialect.name}, no SMTP_URL`, { skip: dialect.skip }, () => {
    let t: TestApp;
    let outbox: string;
    before(async () => {
      outbox = mkdtempSync(join(tmpdir(), 'gc-outbox-'));
      t = await startTestApp(dialect, { env: { ...SESSION_ENV, MAIL_OUTBOX_DIR: outbox } });
    });
    after(async () => {
      await t?.close();
      rmSync(outbox, { recursive: true, force: true });
    });

    test('the reminder is written as an .eml file to the outbox folder', async () => {
      const { created, members } = await groupOfThree(t);
      const res = await remind(t, created);
      assert.deepEqual([res.body.reminded, res.body.skipped, res.body.failed], [2, 1, 0]);
      const files = readdirSync(outbox).filter((f) => f.endsWith('.eml'));
      assert.equal(files.length, 2);
      const mails = files.map((f) => parseMessage(readFileSync(join(outbox, f), 'utf8')));
      const toBen = mails.find((m) => m.headers.to === `ben+${run}@example.com`);
      assert.ok(toBen, 'a mail to Ben');
      assert.ok(toBen.text.includes(`Pay it here: ${members[1]?.share_url}`), toBen.text);
      assert.ok(toBen.text.includes('$33.33'));
    });
  });
}
