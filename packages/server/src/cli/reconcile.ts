// group-checkout reconcile: checks the ledger, the statuses and the processor's records against each
// other (flows/reconcile.ts); exit code 1 when anything does not match, each mismatch on stdout. By
// default every session and the whole ledger, as the command has always promised; --changed reads the
// sessions changed since the last such run instead, at most --limit of them (docs/operations.md).
import { parseArgs } from 'node:util';
import { systemClock } from '../clock.ts';
import { type ReconcileReport, reconcile as reconcileAll } from '../flows/reconcile.ts';
import { processorFor } from '../processor/index.ts';
import { type Command, print, SaidOnStdout, UsageError, withDb } from './command.ts';

/** Changed sessions one run checks at most, unless --limit says otherwise. */
const DEFAULT_LIMIT = 100_000;

export const reconcile: Command = {
  name: 'reconcile',
  usage: '[--changed [--limit N]] [--json]',
  async run(args, config) {
    const { values } = parseArgs({
      args,
      options: {
        json: { type: 'boolean', default: false },
        changed: { type: 'boolean', default: false },
        limit: { type: 'string' },
      },
      strict: true,
    });
    if (!values.changed && values.limit !== undefined)
      throw new UsageError('--limit bounds a run of the changed sessions: give it with --changed');
    const limit = values.limit === undefined ? DEFAULT_LIMIT : Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1)
      throw new UsageError(`--limit must be a whole number of sessions, 1 or more; got "${values.limit}"`);
    const report = await withDb(config, async (db) =>
      reconcileAll(
        { db, processor: await processorFor(config, db, systemClock), clock: systemClock, config },
        values.changed ? { changed: { limit } } : {},
      ),
    );
    const { ok, scope, since, more, checked, mismatches } = report;
    // The whole database's answer keeps its documented shape; a changed-only run says what it covered.
    const answer =
      scope === 'full' ? { ok, checked, mismatches } : { ok, scope, since, more, checked, mismatches };
    print(values.json ?? false, answer, reconcileLines(report));
    if (!ok) throw new SaidOnStdout();
  },
};

function reconcileLines(report: ReconcileReport): string[] {
  const lines = report.mismatches.map((m) => `${m.kind}  ${m.session_id ?? '-'}  ${m.detail}`);
  const n = report.checked.sessions;
  const count = report.mismatches.length;
  lines.push(
    `reconcile: ${n} session${n === 1 ? '' : 's'} checked, ${count === 0 ? 'clean' : `${count} mismatch${count === 1 ? '' : 'es'}`}` +
      (report.more ? '; more changed sessions wait: run it again' : ''),
  );
  return lines;
}
