// Reconcile at the end of a payment suite: whatever the suite did with money, the ledger, the statuses
// and the processor's records must still agree (docs/decisions.md#ledger-and-reconciliation).
import assert from 'node:assert/strict';
import { type ReconcileReport, reconcile } from '../../src/flows/reconcile.ts';
import type { TestApp } from './app.ts';

/** Runs reconcile on the app's database and processor; fails with every mismatch when it is not clean. */
export async function assertReconciled(t: TestApp): Promise<ReconcileReport> {
  const report = await reconcile(t.deps);
  assert.ok(
    report.ok,
    `reconcile found ${report.mismatches.length} mismatches:\n${report.mismatches
      .map((m) => `  ${m.kind} ${m.session_id ?? '-'}: ${m.detail}`)
      .join('\n')}`,
  );
  assert.deepEqual(report.mismatches, []);
  return report;
}
