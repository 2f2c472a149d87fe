// The README as a newcomer follows it (#19): every code block in it is either run here as written, or
// named with the suite that runs it. "Try it from a terminal" runs in bash, exactly as written, against a
// real service on a free port (its PORT set, as a reader who moved it has), and "Your own server" runs as server.mjs
// against the same service: the cart it signs makes a session, and it hears a signed group.funded.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { generateTestHeaders } from '@group-checkout/node';
import { freePort, ServerProcess } from './helpers/server-process.ts';

// The repository itself even when this file runs compiled (scripts/test.mjs sets TEST_SOURCE_ROOT).
const ROOT = process.env.TEST_SOURCE_ROOT ?? fileURLToPath(new URL('../../../', import.meta.url));
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

interface Block {
  lang: string;
  code: string;
  /** The heading it sits under. */
  section: string;
}

function codeBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  let section = '';
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line.startsWith('## ')) section = line.slice(3);
    const open = /^```(\w*)$/.exec(line);
    if (!open) continue;
    const end = lines.indexOf('```', i + 1);
    blocks.push({ lang: open[1] ?? '', code: lines.slice(i + 1, end).join('\n'), section });
    i = end;
  }
  return blocks;
}

/** The blocks not run here, and where they are: every other block must be run by this file. */
const RUN_ELSEWHERE: Record<string, string> = {
  'npm ci && npm start':
    'examples/shop/test/start.test.ts runs npm start as written; npm ci is how this suite got here',
  'npm test': 'the whole suite: this file is one of its parts',
  'export SERVICE_ENV=production':
    'production needs real Stripe keys and servers; config.test.ts checks its refusals',
};

// Without the repository's NODE_OPTIONS (its export condition loads sources): the README's reader has none.
const { NODE_OPTIONS: _repositoryOnly, ...plainEnv } = process.env;

describe('README.md', () => {
  const blocks = codeBlocks(README);
  let dir: string;
  let port: number;
  let service: ServerProcess;
  let env: Record<string, string>;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gc-readme-'));
    port = await freePort();
    env = {
      PORT: String(port),
      DATABASE_URL: `sqlite:${join(dir, 'gc.db')}`,
      DEMO_SHOP: '0',
      MAIL_OUTBOX_DIR: join(dir, 'outbox'),
      LOG_LEVEL: 'warn',
      SETTLE_INTERVAL_MS: '100',
    };
    service = new ServerProcess(env, `http://127.0.0.1:${port}`);
    await service.start();
  });
  after(async () => {
    await service?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('every code block is run here or by a named suite', () => {
    const runHere = ['Try it from a terminal', 'Your own server'];
    const unknown = blocks.filter(
      (b) =>
        !runHere.includes(b.section) &&
        b.lang !== '' && // the repository's tree, not code
        !Object.keys(RUN_ELSEWHERE).some((first) => b.code.trimStart().startsWith(first)),
    );
    assert.deepEqual(
      unknown.map((b) => `${b.section}: ${b.code.split('\n')[0]}`),
      [],
    );
    assert.equal(blocks.filter((b) => runHere.includes(b.section)).length, 3);
  });

  test('"Try it from a terminal" runs as written: a merchant, a session split three ways, paid, funded, reconciled', async () => {
    const block = blocks.find((b) => b.section === 'Try it from a terminal') as Block;
    // Every URL goes through $API, which follows PORT: the block runs on whatever port the service took.
    // (The shell's default-value expansion, as the block writes it: a dollar and a brace, not a template.)
    assert.deepEqual(block.code.match(/localhost:\S*/g), [`localhost:\${PORT:-4000}`]);
    const run = await new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
      const child = spawn('bash', ['-euo', 'pipefail', '-c', block.code], {
        cwd: ROOT,
        env: { ...plainEnv, ...env },
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (c) => (out += c));
      child.stderr.on('data', (c) => (err += c));
      child.once('close', (code) => resolve({ code, out, err }));
    });
    assert.equal(run.code, 0, `${run.out}\n${run.err}`);
    const lines = run.out.trim().split('\n');
    assert.equal(lines[0], 'Camping Co', 'who am I');
    assert.match(lines[1] as string, new RegExp(`^http://localhost:${port}/session/gs_\\w+\\?access=`));
    assert.deepEqual(lines.slice(2, 5), ['paid', 'paid', 'paid']);
    assert.equal(lines[5], 'funded');
    assert.match(lines[6] as string, /^reconcile: \d+ sessions? checked, clean$/);
  });

  test('"Your own server" signs a cart the service accepts and hears a signed group.funded', async () => {
    const block = blocks.find((b) => b.section === 'Your own server') as Block;
    const app = mkdtempSync(join(tmpdir(), 'gc-readme-server-'));
    // A merchant's project with @group-checkout/node installed (the repository's, built by npm ci).
    symlinkSync(join(ROOT, 'node_modules'), join(app, 'node_modules'));
    writeFileSync(join(app, 'server.mjs'), block.code);
    const created = JSON.parse(
      await new Promise<string>((resolve, reject) => {
        const child = spawn(
          process.execPath,
          [
            join(ROOT, 'packages/server/bin/group-checkout.js'),
            'merchant',
            'create',
            '--name',
            'Tents',
            '--json',
          ],
          { env: { ...process.env, ...env } },
        );
        let out = '';
        child.stdout.on('data', (c) => (out += c));
        child.once('close', (code) => (code === 0 ? resolve(out) : reject(new Error(out))));
      }),
    ) as { publishable_key: string; secret_key: string; signing_secret: string };
    // The README's curl registers the endpoint, with the merchant's key and on this service's port: its
    // answer holds the secret the server is started with.
    const register = blocks.filter((b) => b.section === 'Your own server')[1] as Block;
    assert.match(register.code, /^curl -s http:\/\/localhost:4000\/v1\/webhooks/);
    const registered = JSON.parse(
      await new Promise<string>((resolve, reject) => {
        const code = register.code
          .replace('localhost:4000', `127.0.0.1:${port}`)
          .replace('svc_sk_test_…', created.secret_key);
        const child = spawn('bash', ['-euo', 'pipefail', '-c', code], { env: plainEnv });
        let out = '';
        child.stdout.on('data', (c) => (out += c));
        child.once('close', (exit) => (exit === 0 ? resolve(out) : reject(new Error(out))));
      }),
    ) as { url: string; events: string[]; secret: string };
    assert.equal(registered.url, 'http://localhost:3000/webhooks/group-checkout');
    assert.deepEqual(registered.events, ['*']);
    const webhookSecret = registered.secret;
    assert.match(webhookSecret, /^whsec_/);
    const serverPort = await freePort();
    let said = '';
    const server: ChildProcess = spawn(process.execPath, ['server.mjs'], {
      cwd: app,
      env: {
        ...plainEnv,
        GC_SIGNING_SECRET: created.signing_secret,
        GC_WEBHOOK_SECRET: webhookSecret,
        PORT: String(serverPort),
      },
    });
    server.stdout?.on('data', (c) => (said += c));
    server.stderr?.on('data', (c) => (said += c));
    const url = `http://127.0.0.1:${serverPort}`;
    try {
      for (let i = 0; i < 100; i++) {
        if (
          await fetch(url).then(
            () => true,
            () => false,
          )
        )
          break;
        await sleep(50);
      }
      const cart = {
        total: 18900 + 2 * 2450,
        currency: 'usd',
        items: [
          { id: 'sku_tent', name: 'Tent', quantity: 1, unit_price: 18900 },
          { id: 'sku_lantern', name: 'Lantern', quantity: 2, unit_price: 2450 },
        ],
        metadata: { order_ref: 'ORD-7' },
      };
      const sign = (c: unknown) =>
        fetch(`${url}/api/cart/sign`, { method: 'POST', body: JSON.stringify({ cart: c }) });
      const signed = await sign(cart);
      assert.equal(signed.status, 200, said);
      const { signature } = (await signed.json()) as { signature: string };
      // The browser SDK's call, with the publishable key and that signature: the service accepts it.
      const session = await fetch(`http://127.0.0.1:${port}/v1/sessions`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${created.publishable_key}`,
          'content-type': 'application/json',
          origin: 'http://localhost:3000', // the merchant's page, as the browser says it
        },
        body: JSON.stringify({ cart, signature }),
      });
      assert.equal(session.status, 200, await session.clone().text());
      // A price the catalogue does not have is not signed.
      const cheap = { ...cart, items: [{ ...cart.items[0], unit_price: 100 }], total: 100 };
      assert.equal((await sign(cheap)).status, 400);
      // A malformed body is answered 400 with a JSON error, and the server goes on answering.
      for (const body of ['not json', '{"cart":{}}', 'null', '{"cart":{"items":[null]}}']) {
        const refused = await fetch(`${url}/api/cart/sign`, { method: 'POST', body });
        assert.equal(refused.status, 400, body);
        assert.equal(typeof ((await refused.json()) as { error?: unknown }).error, 'string', body);
      }
      const unsigned = await fetch(`${url}/webhooks/group-checkout`, { method: 'POST', body: 'not json' });
      assert.equal(unsigned.status, 400);
      assert.equal(typeof ((await unsigned.json()) as { error?: unknown }).error, 'string');
      assert.equal((await sign(cart)).status, 200, `still answering after bad requests: ${said}`);

      const funded = generateTestHeaders(
        { id: 'evt_1', type: 'group.funded', data: { order_ref: 'ORD-7' } },
        webhookSecret,
      );
      const hook = (headers: Record<string, string>) =>
        fetch(`${url}/webhooks/group-checkout`, { method: 'POST', headers, body: funded.body });
      assert.equal((await hook(funded.headers)).status, 200);
      for (let i = 0; i < 40 && !said.includes('ORD-7'); i++) await sleep(25);
      assert.match(said, /order ORD-7 is paid: ship it/);
      // Delivery is at least once: the same event again is answered 200 and not applied again.
      assert.equal((await hook(funded.headers)).status, 200);
      await sleep(200);
      assert.equal(said.match(/order ORD-7 is paid/g)?.length, 1, said);
      const forged = generateTestHeaders(
        { id: 'evt_2', type: 'group.funded' },
        `whsec_${Buffer.alloc(32, 1).toString('base64')}`,
      );
      assert.equal((await hook(forged.headers)).status, 400);
    } finally {
      server.kill('SIGKILL');
      rmSync(app, { recursive: true, force: true });
    }
  });
});
