// Child processes of the benchmark: free loopback ports, spawning with output kept for diagnosis,
// readiness polling, and stopping every child on exit, error or signal.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const GUARD = fileURLToPath(new URL('./child-guard.ts', import.meta.url));
/** Output lines of a child echoed to stderr before the rest is only kept for error messages. */
const ECHO_LINES = 20;
const KEEP_LINES = 40;
/** USER_HZ of /proc/<pid>/stat; 100 on every Linux architecture Node supports. */
const CLOCK_TICKS = 100;

export interface Child {
  name: string;
  port: number;
  process: ChildProcess;
  /** The child's last output lines, for error messages. */
  tail: string[];
  exited: Promise<number | null>;
}

const children = new Set<Child>();

/** A port that was free on 127.0.0.1 a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Starts `node --import tsx [nodeArgs] script` with an IPC channel, so the child dies with us. */
export function startChild(
  name: string,
  script: string,
  options: { port: number; env: NodeJS.ProcessEnv; cwd: string; nodeArgs?: string[] },
): Child {
  const args = ['--import', 'tsx', '--import', GUARD, ...(options.nodeArgs ?? []), script];
  const proc = spawn(process.execPath, args, {
    cwd: options.cwd,
    env: { ...options.env, PORT: String(options.port) },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  const tail: string[] = [];
  let echoed = 0;
  const onData = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (!line.trim()) continue;
      tail.push(line);
      if (tail.length > KEEP_LINES) tail.shift();
      if (echoed < ECHO_LINES) process.stderr.write(`[${name}] ${line}\n`);
      else if (echoed === ECHO_LINES) process.stderr.write(`[${name}] (further output not shown)\n`);
      echoed++;
    }
  };
  proc.stdout?.on('data', onData);
  proc.stderr?.on('data', onData);
  const child: Child = {
    name,
    port: options.port,
    process: proc,
    tail,
    exited: new Promise((resolve) => {
      proc.once('exit', (code) => {
        children.delete(child);
        resolve(code);
      });
    }),
  };
  children.add(child);
  return child;
}

/** User + system CPU seconds the child has used so far (all its threads), or null off Linux. */
export function cpuSeconds(child: Child): number | null {
  try {
    const stat = readFileSync(`/proc/${child.process.pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may hold spaces: utime is the 12th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

/** Waits until `url` answers at all (any status), or fails when the child exits or time runs out. */
export async function waitReady(child: Child, url: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void child.exited.then(() => {
    exited = true;
  });
  while (Date.now() < deadline) {
    if (exited) break;
    try {
      await fetch(url, { signal: AbortSignal.timeout(1000) });
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  const why = exited ? `exited with code ${child.process.exitCode}` : `did not answer within ${timeoutMs} ms`;
  throw new Error(`${child.name} ${why}:\n${child.tail.join('\n')}`);
}

/** Runs a command to completion and answers its stdout; rejects with its stderr on failure. */
export function runCommand(
  args: string[],
  options: { env: NodeJS.ProcessEnv; cwd: string },
): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { ...options, timeout: 60_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${args.join(' ')} failed: ${stderr || error.message}`));
      else resolve(stdout);
    });
  });
}

/** SIGTERM to every child (so a --cpu-prof profile gets written), then SIGKILL to any still running. */
export async function stopChildren(graceMs = 5000): Promise<void> {
  const all = [...children];
  for (const child of all) child.process.kill('SIGTERM');
  await Promise.all(
    all.map((child) =>
      Promise.race([
        child.exited,
        new Promise((resolve) => setTimeout(resolve, graceMs).unref()).then(() => {
          child.process.kill('SIGKILL');
        }),
      ]),
    ),
  );
}

/** Kills whatever still runs, synchronously: the last resort of the 'exit' handler. */
function killChildrenNow(): void {
  for (const child of children) child.process.kill('SIGKILL');
}

/** Stops the children on SIGINT/SIGTERM and on uncaught errors, and kills them on any exit. */
export function installCleanup(onFatal: (error: unknown) => void): void {
  process.once('exit', killChildrenNow);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      process.stderr.write(`\n${signal}: stopping the servers\n`);
      void stopChildren(2000).finally(() => process.exit(130));
    });
  }
  process.once('uncaughtException', onFatal);
  process.once('unhandledRejection', onFatal);
}
