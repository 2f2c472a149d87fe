// Creates for one merchant from two service processes on one PostgreSQL at once (docs/decisions.md,
// session list paging): created_at is unique per merchant, and processes taking the same millisecond
// must take their turns — every create succeeds, each with its own created_at, none answered 500.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { RELAXED_LIMITS, requestOver } from '../helpers/app.ts';
import { postgresCase } from '../helpers/databases.ts';
import { type CrashFixture, crashFixture, freePort, ServerProcess } from '../helpers/server-process.ts';
import { sampleCart } from '../helpers/sessions.ts';

const PER_PROCESS = 60;

describe('creates for one merchant from two processes on one PostgreSQL', { skip: postgresCase.skip }, () => {
  let f: CrashFixture;
  let second: ServerProcess;
  before(async () => {
    f = await crashFixture(postgresCase, RELAXED_LIMITS);
    const port = await freePort();
    second = new ServerProcess({ ...f.server.env, PORT: String(port) }, `http://127.0.0.1:${port}`);
    await Promise.all([f.server.start(), second.start()]);
  });
  after(async () => {
    await second?.stop();
    await f?.close();
  });

  test('all succeed at once, each with a created_at of its own', async () => {
    const create = (baseUrl: string) =>
      requestOver(baseUrl, 'POST', '/v1/sessions', {
        key: f.merchant.secretKey,
        body: { cart: sampleCart() },
      });
    const answers = await Promise.all(
      [f.server.baseUrl, second.baseUrl].flatMap((url) =>
        Array.from({ length: PER_PROCESS }, () => create(url)),
      ),
    );
    const statuses = answers.map((a) => a.status);
    assert.deepEqual(
      statuses.filter((s) => s !== 200),
      [],
      `every create succeeds: ${answers.find((a) => a.status >= 300)?.text ?? ''}`,
    );
    const rows = await f.db.kysely.selectFrom('sessions').select(['created_at']).execute();
    const times = rows.map((r) => Number(r.created_at));
    assert.equal(times.length, 2 * PER_PROCESS);
    assert.equal(new Set(times).size, times.length, 'no two sessions of the merchant share a created_at');
  });
});
