// The sandbox's first start on an empty database makes a demo merchant (docs/decisions.md#demo-shop):
// once, however many service processes start on that database at the same moment.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openDb } from '../../src/store/db.ts';
import { DIALECTS, type TestDatabase } from '../helpers/databases.ts';
import { eventually } from '../helpers/payments.ts';
import { freePort, ServerProcess } from '../helpers/server-process.ts';

const PROCESSES = 3;

for (const dialect of DIALECTS) {
  describe(`${PROCESSES} sandbox processes starting together on an empty ${dialect.name} database`, {
    skip: dialect.skip,
  }, () => {
    let database: TestDatabase;
    let outbox: string;
    const servers: ServerProcess[] = [];
    before(async () => {
      database = await dialect.create();
      outbox = mkdtempSync(join(tmpdir(), 'gc-outbox-'));
      for (let i = 0; i < PROCESSES; i++) {
        const port = await freePort();
        servers.push(
          new ServerProcess(
            {
              DATABASE_URL: database.url,
              PORT: String(port),
              SERVICE_ENV: 'sandbox',
              LOG_LEVEL: 'warn',
              MAIL_OUTBOX_DIR: outbox,
              // No demo shop: its settings file would be written to the working directory.
              DEMO_SHOP: '0',
            },
            `http://127.0.0.1:${port}`,
          ),
        );
      }
    });
    after(async () => {
      await Promise.all(servers.map((s) => s.stop()));
      await database?.drop();
      rmSync(outbox, { recursive: true, force: true });
    });

    test('make one demo merchant between them, announced by one of them', async () => {
      await Promise.all(servers.map((s) => s.start()));
      // The demo merchant is made once a process listens (main.ts), so it may come just after the start:
      // wait for its lines, and for any a second process would wrongly make or print at the same time.
      const announced = () => servers.filter((s) => s.output.includes('created a demo merchant'));
      await eventually(async () => announced().length > 0, 10_000, 'the demo merchant announced');
      await new Promise((r) => setTimeout(r, 500));
      const db = openDb(database.url);
      try {
        const merchants = await db.kysely.selectFrom('merchants').select(['name']).execute();
        assert.deepEqual(
          merchants.map((m) => m.name),
          ['Camp Supply'],
        );
      } finally {
        await db.close();
      }
      assert.equal(announced().length, 1, 'one process printed the demo merchant’s keys');
    });
  });
}
