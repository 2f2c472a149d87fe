// Every migration, in order. Names are YYYY_MM_DD_HHMM_what; a landed migration never changes.
import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from 'kysely';
import type { Db } from '../db.ts';
import * as foundation from './2026_11_21_0000_foundation.ts';
import * as sessions from './2026_11_21_0100_sessions.ts';
import * as rotationGrace from './2026_11_22_1000_rotation_grace.ts';
import * as payments from './2026_11_23_0000_payments.ts';
import * as deliveries from './2026_11_24_0000_deliveries.ts';
import * as chargeStep from './2026_11_25_1200_charge_step.ts';
import * as realMoney from './2026_11_26_0000_real_money.ts';
import * as browserTrust from './2026_11_27_0100_browser_trust.ts';
import * as deliveryOrder from './2026_11_27_0200_delivery_order.ts';
import * as sessionLocale from './2026_11_27_0300_session_locale.ts';
import * as dashboard from './2026_11_28_0000_dashboard.ts';
import * as mails from './2026_11_29_0100_mails.ts';
import * as apiRequestLog from './2026_11_29_0200_api_request_log.ts';
import * as reconcileWatermark from './2026_11_30_0000_reconcile_watermark.ts';
import * as lastSessionAt from './2026_11_30_0100_last_session_at.ts';
import * as refundPending from './2026_12_01_0000_refund_pending.ts';
import * as publishableKeyShown from './2026_12_02_0000_publishable_key_shown.ts';

const migrations: Record<string, Migration> = {
  '2026_11_21_0000_foundation': foundation,
  '2026_11_21_0100_sessions': sessions,
  '2026_11_22_1000_rotation_grace': rotationGrace,
  '2026_11_23_0000_payments': payments,
  '2026_11_24_0000_deliveries': deliveries,
  '2026_11_25_1200_charge_step': chargeStep,
  '2026_11_26_0000_real_money': realMoney,
  '2026_11_27_0100_browser_trust': browserTrust,
  '2026_11_27_0200_delivery_order': deliveryOrder,
  '2026_11_27_0300_session_locale': sessionLocale,
  '2026_11_28_0000_dashboard': dashboard,
  '2026_11_29_0100_mails': mails,
  '2026_11_29_0200_api_request_log': apiRequestLog,
  '2026_11_30_0000_reconcile_watermark': reconcileWatermark,
  '2026_11_30_0100_last_session_at': lastSessionAt,
  '2026_12_01_0000_refund_pending': refundPending,
  '2026_12_02_0000_publishable_key_shown': publishableKeyShown,
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

/**
 * Applies every pending migration; returns the names applied. Throws with the failing name.
 *
 * Several processes may start on one database at once (docs/operations.md). On PostgreSQL, Kysely's
 * migrator takes an advisory lock. On SQLite it takes none (it assumes one process), so two processes
 * starting on a new file could both read "nothing applied" and both create the tables: here the whole
 * run is one `BEGIN IMMEDIATE` transaction, which takes SQLite's write lock before reading what was
 * applied, so a second process waits (busy_timeout) and then finds the migrations done.
 */
export async function migrateToLatest(db: Db): Promise<string[]> {
  if (db.dialect === 'postgres') return run(db.kysely, false);
  return db.kysely.connection().execute(async (connection) => {
    await sql`begin immediate`.execute(connection);
    try {
      const applied = await run(connection, true);
      await sql`commit`.execute(connection);
      return applied;
    } catch (error) {
      await sql`rollback`.execute(connection);
      throw error;
    }
  });
}

async function run(
  // biome-ignore lint/suspicious/noExplicitAny: the migrator works on any schema
  db: Kysely<any>,
  inOurTransaction: boolean,
): Promise<string[]> {
  const migrator = new Migrator({ db, provider, disableTransactions: inOurTransaction });
  const { error, results = [] } = await migrator.migrateToLatest();
  const failed = results.find((r) => r.status === 'Error');
  if (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`migration ${failed?.migrationName ?? '(setup)'} failed: ${reason}`);
  }
  return results.filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
