// group-checkout migrate: brings the database's schema up to date, and says what it applied.
import { openDb } from '../store/db.ts';
import { migrateToLatest } from '../store/migrations/index.ts';
import type { Command } from './command.ts';

export const migrate: Command = {
  name: 'migrate',
  usage: '',
  async run(_args, config) {
    const db = openDb(config.databaseUrl);
    try {
      const applied = await migrateToLatest(db);
      process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
    } finally {
      await db.close();
    }
  },
};
