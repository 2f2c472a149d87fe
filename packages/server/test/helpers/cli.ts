// Runs the group-checkout CLI as an operator runs it: a child process with only the variables given.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/group-checkout.js', import.meta.url));

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI with only the variables given (plus PATH and HOME), so the caller's shell cannot leak in. */
export function cli(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** A failed run: non-zero exit, nothing on stdout, exactly one line on stderr, matching `message`. */
export function assertOneLineError(run: Run, message: RegExp) {
  assert.notEqual(run.code, 0, `exit code ${run.code}; stdout ${run.stdout}`);
  assert.equal(run.stdout, '');
  assert.match(run.stderr, /^group-checkout: [^\n]+\n$/, JSON.stringify(run.stderr));
  assert.match(run.stderr, message);
}

export function parseOnlyJson(run: Run): Record<string, string> {
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stderr, '');
  const lines = run.stdout.split('\n');
  assert.equal(lines.length, 2, `one line of output, got ${JSON.stringify(run.stdout)}`);
  assert.equal(lines[1], '');
  return JSON.parse(lines[0] as string);
}
