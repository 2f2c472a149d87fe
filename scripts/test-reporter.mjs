// Node's reporters (TAP when the output is not a terminal, spec when it is, as Node chooses by default),
// with one change: the closing "skipped" count includes skipped suites. Node counts only skipped tests
// there, and a suite skipped whole (describe(..., { skip }), e.g. every PostgreSQL variant when
// TEST_DATABASE_URL is unset) never lists its tests, so "skipped 0" would be printed while whole suites
// did not run. Each skipped suite counts as one, and a line before the totals says how many there were.
// A second change: every failed or cancelled test (a timeout counts as cancelled) is named again, with
// its file and first line of error, just before the totals, so the tail of a long CI log says what broke.
import { Readable } from 'node:stream';
import { spec, tap } from 'node:test/reporters';

const SKIPPED = /^skipped (\d+)$/;

async function* countSkippedSuites(source) {
  let skippedSuites = 0;
  const failed = [];
  for await (const event of source) {
    const { data } = event;
    if (event.type === 'test:fail' && data.details?.type !== 'suite') failed.push(describeFailure(data));
    if (event.type === 'test:pass' && data.skip !== undefined && data.details?.type === 'suite') {
      skippedSuites++;
    }
    // The run's closing totals are the diagnostics at nesting 0 that belong to no file.
    const closing = event.type === 'test:diagnostic' && data.nesting === 0 && data.file === undefined;
    if (closing && data.message.startsWith('tests ')) {
      for (const message of failed) yield { ...event, data: { ...data, message } };
    }
    if (closing && data.message.startsWith('tests ') && skippedSuites > 0) {
      yield {
        ...event,
        data: {
          ...data,
          message: `${skippedSuites} suite(s) skipped whole; each counts as 1 in "skipped" below`,
        },
      };
    }
    const skipped = closing ? SKIPPED.exec(data.message) : null;
    if (skipped) {
      yield { ...event, data: { ...data, message: `skipped ${Number(skipped[1]) + skippedSuites}` } };
    } else {
      yield event;
    }
  }
}

function describeFailure(data) {
  const error = data.details?.error;
  const cause = error?.cause ?? error;
  const firstLine = String(cause?.message ?? cause ?? error?.failureType ?? 'failed').split('\n')[0];
  return `failed: ${data.name} (${data.file ?? 'unknown file'}): ${error?.failureType ?? 'error'}: ${firstLine}`;
}

export default async function* reporter(source) {
  const events = countSkippedSuites(source);
  if (process.stdout.isTTY) yield* Readable.from(events).pipe(new spec());
  else yield* tap(events);
}
