// group-checkout reconcile: checks the ledger, the statuses and the processor's records against each
// other (flows/reconcile.ts); exit code 1 when anything does not match, each mismatch on stdout.
import { systemClock } from '../clock.ts';
import { type ReconcileReport, reconcile as reconcileAll } from '../flows/reconcile.ts';
import { processorFor } from '../processor/index.ts';
import { type Command, jsonFlag, print, SaidOnStdout, withDb } from './command.ts';

export const reconcile: Command = {
  name: 'reconcile',
  usage: '[--json]',
  async run(args, config) {
    const json = jsonFlag(args);
    const report = await withDb(config, async (db) =>
      reconcileAll({
        db,
        processor: await processorFor(config, db, systemClock),
        clock: systemClock,
        config,
      }),
    );
    const { ok, checked, mismatches } = report;
    print(json, { ok, checked, mismatches }, reconcileLines(report));
    if (!ok) throw new SaidOnStdout();
  },
};

function reconcileLines(report: ReconcileReport): string[] {
  const lines = report.mismatches.map((m) => `${m.kind}  ${m.session_id ?? '-'}  ${m.detail}`);
  const n = report.checked.sessions;
  const count = report.mismatches.length;
  lines.push(
    `reconcile: ${n} sessions checked, ${count === 0 ? 'clean' : `${count} mismatch${count === 1 ? '' : 'es'}`}`,
  );
  return lines;
}
