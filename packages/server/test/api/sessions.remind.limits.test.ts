// Reminders never become a way to mail anyone (docs/api.md#reminders): limits are keyed by the recipient's
// address, so re-saving the group (new member ids) resets nothing; a session sends at most 3 rounds; one
// address gets at most 3 reminders a day from one merchant, whatever the session; no Reply-To of the
// browser's choosing. On PostgreSQL, two server processes reminding at once stay within the daily limit.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { type ManualClock, MINUTE_MS, manualClock } from '../helpers/clock.ts';
import { DIALECTS, postgresCase } from '../helpers/databases.ts';
import { assertError } from '../helpers/errors.ts';
import { type CrashFixture, crashFixture, freePort, ServerProcess } from '../helpers/server-process.ts';
import { type Created, createSession, organizerToken, SESSION_ENV } from '../helpers/sessions.ts';
import { type SmtpReceiver, startSmtpServer } from '../helpers/smtp.ts';

const HOUR_MS = 60 * MINUTE_MS;
const VICTIMS = ['victim1@example.org', 'victim2@example.org', 'victim3@example.org'];

/** What an abusive organizer sets up: victims' addresses, a phishing line for a name. */
const victimGroup = (emails: string[] = VICTIMS) => ({
  mode: 'equal',
  members: [
    { name: 'Organizer' },
    ...emails.map((email, i) => ({ name: `URGENT: verify your account at evil.example (${i})`, email })),
  ],
});

const recipients = (smtp: SmtpReceiver) => smtp.messages.flatMap((m) => m.to).sort();

for (const dialect of DIALECTS) {
  describe(`reminder limits on ${dialect.name}`, { skip: dialect.skip }, () => {
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

    const newSession = (merchant: TestMerchant = t.merchant) =>
      createSession(t, { merchant, customer: { name: 'Mallory', email: 'mallory@attacker.example' } });
    const saveGroup = async (created: Created, emails?: string[]) => {
      const res = await t.request('PUT', `/api/v1/session/group?access=${organizerToken(created)}`, {
        body: victimGroup(emails),
      });
      assert.equal(res.status, 200, res.text);
      return res.body.group.members.map((m: { id: string }) => m.id) as string[];
    };
    const remind = (created: Created, merchant: TestMerchant = t.merchant) =>
      t.request('POST', `/v1/sessions/${created.session_id}/remind`, { key: merchant.secretKey });
    /** The organizer's own button, on the pay-page API: the same limits. */
    const remindFromPage = (created: Created) =>
      t.request('POST', `/api/v1/session/remind?access=${organizerToken(created)}`);

    test('re-saving the group resets nothing; 3 rounds per session; 3 a day per address; no Reply-To', async () => {
      smtp.messages.length = 0;
      const created = await newSession();
      const firstIds = await saveGroup(created);
      const first = await remind(created);
      assert.deepEqual([first.body.reminded, first.body.skipped], [4, 0], first.text);
      assert.deepEqual(recipients(smtp), ['mallory@attacker.example', ...VICTIMS].sort());
      for (const mail of smtp.messages) assert.equal(mail.headers['reply-to'], undefined, mail.raw);

      // New member ids, the same addresses: still reminded within the hour, so nothing goes out.
      const secondIds = await saveGroup(created);
      // (The organizer stays member one; the others are new members.)
      assert.equal(
        secondIds.slice(1).some((id) => firstIds.includes(id)),
        false,
        'the victims are new members',
      );
      smtp.messages.length = 0;
      for (const res of [await remind(created), await remindFromPage(created)]) {
        assert.equal(res.status, 200, res.text);
        assert.deepEqual([res.body.reminded, res.body.skipped], [0, 4]);
      }
      assert.equal(smtp.messages.length, 0);

      // Rounds 2 and 3, an hour apart, re-saving in between; the fourth is refused.
      for (const round of [2, 3]) {
        clock.advance(HOUR_MS + MINUTE_MS);
        await saveGroup(created);
        const res = round === 2 ? await remind(created) : await remindFromPage(created);
        assert.equal(res.body.reminded, 4, `round ${round}: ${res.text}`);
      }
      clock.advance(HOUR_MS + MINUTE_MS);
      await saveGroup(created);
      smtp.messages.length = 0;
      assertError(await remind(created), 409, 'reminder_limit_reached');
      assertError(await remindFromPage(created), 409, 'reminder_limit_reached');
      assert.equal(smtp.messages.length, 0);

      // Each victim had 3 today from this merchant: a new session (any session) mails them no more.
      const another = await newSession();
      await saveGroup(another, [...VICTIMS, 'fresh@example.org']);
      const capped = await remind(another);
      assert.deepEqual([capped.body.reminded, capped.body.skipped], [1, 4], capped.text);
      assert.deepEqual(recipients(smtp), ['fresh@example.org']);

      // Another merchant has its own count; and a day after the first, this merchant may mail them again.
      const other = await t.createMerchant({ name: 'Other Shop' });
      const elsewhere = await newSession(other);
      await saveGroup(elsewhere);
      assert.equal((await remind(elsewhere, other)).body.reminded, 4, 'Mallory and the victims, afresh');
      clock.advance(24 * HOUR_MS);
      smtp.messages.length = 0;
      const tomorrow = await remind(another);
      assert.equal(tomorrow.body.reminded, 5, tomorrow.text);
    });

    test('one address twice in a group (in another case) is mailed once', async () => {
      smtp.messages.length = 0;
      const created = await newSession();
      await saveGroup(created, ['TWICE@Example.net', 'twice@example.net']);
      const res = await remind(created);
      const toTwice = smtp.messages.filter((m) => m.to.join().toLowerCase().includes('twice@example.net'));
      assert.equal(toTwice.length, 1, res.text);
    });
  });
}

describe('reminder limits across two server processes on PostgreSQL', { skip: postgresCase.skip }, () => {
  let fixture: CrashFixture;
  let second: ServerProcess;
  let smtp: SmtpReceiver;
  before(async () => {
    smtp = await startSmtpServer();
    fixture = await crashFixture(postgresCase, { SMTP_URL: smtp.url });
    await fixture.server.start();
    const port = await freePort();
    second = new ServerProcess({ ...fixture.server.env, PORT: String(port) }, `http://127.0.0.1:${port}`);
    await second.start();
  });
  after(async () => {
    await second?.stop();
    await fixture?.close();
    await smtp?.close();
  });

  test('ten sessions reminding one address at once, through both processes: 3 mails, no more', async () => {
    const key = fixture.merchant.secretKey;
    const servers = [fixture.server.baseUrl, second.baseUrl];
    const call = (base: string, method: string, path: string, body?: unknown) =>
      fetch(base + path, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }).then(async (r) => ({ status: r.status, body: await r.json() }));
    const sessions: string[] = [];
    for (let i = 0; i < 10; i++) {
      const created = await call(servers[i % 2] as string, 'POST', '/v1/sessions', {
        cart: {
          total: 1000,
          currency: 'usd',
          items: [{ id: 'a', name: 'A', quantity: 1, unit_price: 1000 }],
        },
        customer: { name: 'Mallory', email: `mallory${i}@attacker.example` },
      });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const access = new URL(created.body.session_url).searchParams.get('access');
      const put = await call(servers[i % 2] as string, 'PUT', `/api/v1/session/group?access=${access}`, {
        mode: 'equal',
        members: [{ name: 'Organizer' }, { name: 'Victim', email: 'target@example.org' }],
      });
      assert.equal(put.status, 200, JSON.stringify(put.body));
      sessions.push(created.body.session_id);
    }
    smtp.messages.length = 0;
    const answers = await Promise.all(
      sessions.map((id, i) => call(servers[i % 2] as string, 'POST', `/v1/sessions/${id}/remind`)),
    );
    for (const a of answers) assert.equal(a.status, 200, JSON.stringify(a.body));
    const toTarget = smtp.messages.filter((m) => m.to.includes('target@example.org'));
    assert.equal(toTarget.length, 3, 'at most 3 a day to one address from one merchant');
    assert.equal(
      answers.reduce((sum, a) => sum + a.body.reminded, 0),
      3 + 10,
      'each organizer got their own, the target 3',
    );
  });
});
