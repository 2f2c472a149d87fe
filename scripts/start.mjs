// npm start: the service (packages/server/src/main.ts) and, in the sandbox, the demo shop (examples/shop)
// beside it, each its own process, as a merchant's server is apart from ours (docs/decisions.md#demo-shop).
// The shop starts once the service listens and its settings file exists (the service writes it with its
// demo merchant, one file per database, and names it when it says it listens: ./data/demo-shop.json for the
// default SQLite database); until the shop has printed its URL the service's output is held back, so that the
// shop's URL comes first, before the demo merchant's credentials. Ctrl-C (SIGINT) or SIGTERM stops both.
// SERVICE_ENV=production or DEMO_SHOP=0 runs the service alone.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const SERVICE = fileURLToPath(new URL('../packages/server/src/main.ts', import.meta.url));
const SHOP = fileURLToPath(new URL('../examples/shop/src/main.ts', import.meta.url));
/** How long the children have to stop after SIGTERM before they are killed, milliseconds. */
const STOP_GRACE_MS = 10_000;
/** How long the service's output may be held back at most (a slow start must not look like a hung one). */
const HOLD_AT_MOST_MS = 30_000;

// tsx resolved from this file, not from the working directory, so that npm start works from anywhere.
const NODE_ARGS = ['--conditions=@group-checkout/source', '--import', import.meta.resolve('tsx')];

const env = process.env;
const shopWanted =
  env.SERVICE_ENV !== 'production' && !['0', 'false', 'no'].includes((env.DEMO_SHOP ?? '').toLowerCase());

/** The service's output while it is held back, in order, as [stream, chunk]. */
const held = [];
let holding = shopWanted;
if (holding) setTimeout(release, HOLD_AT_MOST_MS).unref();
function release() {
  if (!holding) return;
  holding = false;
  for (const [stream, chunk] of held) stream.write(chunk);
  held.length = 0;
}
const pass = (stream) => (chunk) => (holding ? held.push([stream, chunk]) : stream.write(chunk));

const children = new Set();
function run(file, onMessage, extraEnv = {}) {
  const child = spawn(process.execPath, [...NODE_ARGS, file], {
    stdio: ['inherit', 'pipe', 'pipe', 'ipc'],
    env: { ...env, ...extraEnv },
  });
  children.add(child);
  child.once('close', () => children.delete(child));
  child.on('message', (message) => onMessage?.(message));
  return child;
}

let stopping = false;
function stop(code) {
  if (stopping) return;
  stopping = true;
  release();
  for (const child of children) child.kill('SIGTERM');
  const killer = setTimeout(() => {
    for (const child of children) child.kill('SIGKILL');
  }, STOP_GRACE_MS);
  killer.unref();
  const waitAll = () => (children.size === 0 ? process.exit(code) : setTimeout(waitAll, 20));
  waitAll();
}
// A terminal's Ctrl-C reaches the children as well (one process group); SIGTERM to this process alone
// (a supervisor, a test) is passed on as SIGTERM, which each child handles once.
process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));

/** `settingsFile`: the demo shop's settings for the service's database, as the service named them. */
function startShop(settingsFile) {
  if (!existsSync(settingsFile)) {
    process.stdout.write(
      `Demo shop not started: ${settingsFile} is missing. The sandbox writes it when it creates its demo merchant on an empty database; see examples/shop/README.md.\n`,
    );
    release();
    return;
  }
  const shop = run(
    SHOP,
    (message) => {
      if (message?.type === 'listening') release();
    },
    { DEMO_SHOP_SETTINGS: settingsFile },
  );
  // The shop's own output is never held: its first line is its URL.
  shop.stdout.on('data', (chunk) => process.stdout.write(chunk));
  shop.stderr.on('data', (chunk) => process.stderr.write(chunk));
  shop.once('close', (code, signal) => {
    release();
    if (!stopping)
      process.stderr.write(`demo shop stopped (${signal ?? `exit code ${code}`}); the service runs on\n`);
  });
}

const service = run(SERVICE, (message) => {
  if (message?.type === 'listening' && shopWanted && !stopping) startShop(message.demoShopFile);
});
service.stdout.on('data', pass(process.stdout));
service.stderr.on('data', pass(process.stderr));
service.once('close', (code, signal) => {
  // The service ended by itself (a bad setting, a crash): say so with its code, and stop the shop.
  if (!stopping) stop(code ?? (signal ? 1 : 0));
});
