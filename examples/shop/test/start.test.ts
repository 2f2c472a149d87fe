// `npm start` as a developer runs it (scripts/start.mjs, in a fresh working directory, on free ports):
// the service and the demo shop both answer, the shop's URL is printed first, ./data/demo-shop.json is
// written with mode 0600 and reused by the next start, a session made from the shop's page reaches the
// shop's webhook receiver, and SIGTERM stops both processes. DEMO_SHOP=0 runs the service alone.
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../../packages/server/test/helpers/server-process.ts';

// The repository itself even when this file runs compiled (scripts/test.mjs sets TEST_SOURCE_ROOT).
const ROOT = process.env.TEST_SOURCE_ROOT ?? fileURLToPath(new URL('../../../', import.meta.url));
const START = join(ROOT, 'scripts/start.mjs');

interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const answers = (url: string) =>
  fetch(url).then(
    (r) => r.status === 200,
    () => false,
  );

describe('npm start', () => {
  let cwd: string;
  let port: number;
  let shopPort: number;
  const started: Started[] = [];
  /** The demo merchant's secret key, from the first start's output. */
  let secretKey: string;
  /** The dashboard sign-in link the first start printed. */
  let firstLink: string;

  before(async () => {
    cwd = mkdtempSync(join(tmpdir(), 'gc-start-'));
    port = await freePort();
    shopPort = await freePort();
  });
  after(() => {
    for (const s of started) if (s.child.exitCode === null) s.child.kill('SIGKILL');
    rmSync(cwd, { recursive: true, force: true });
  });

  function start(extra: Record<string, string> = {}): Started {
    const env: Record<string, string | undefined> = { ...process.env };
    for (const name of ['DATABASE_URL', 'SERVICE_ENV', 'PUBLIC_BASE_URL', 'PUBLIC_PAY_URL', 'HOST'])
      delete env[name];
    Object.assign(env, { PORT: String(port), SHOP_PORT: String(shopPort), LOG_LEVEL: 'warn', ...extra });
    if (extra.DEMO_SHOP === undefined) delete env.DEMO_SHOP;
    const child = spawn(process.execPath, [START], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout?.on('data', (chunk) => (output += chunk));
    child.stderr?.on('data', (chunk) => (output += chunk));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    const s = { child, output: () => output, exited };
    started.push(s);
    return s;
  }

  async function waitFor(s: Started, check: () => Promise<boolean>, what: string) {
    for (let i = 0; i < 400; i++) {
      if (s.child.exitCode !== null) assert.fail(`npm start exited before ${what}:\n${s.output()}`);
      if (await check()) return;
      await sleep(50);
    }
    assert.fail(`timed out waiting for ${what}:\n${s.output()}`);
  }

  /** The processes npm start runs (the service and the shop), by their parent. */
  const childrenOf = (pid: number): number[] => {
    try {
      return execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
        .split('\n')
        .filter(Boolean)
        .map(Number);
    } catch {
      return [];
    }
  };
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };

  async function stop(s: Started) {
    const pids = childrenOf(s.child.pid as number);
    s.child.kill('SIGTERM');
    const { code } = await s.exited;
    assert.equal(code, 0, s.output());
    for (let i = 0; i < 100 && pids.some(alive); i++) await sleep(50);
    assert.deepEqual(pids.filter(alive), [], 'the service and the shop stopped with npm start');
    return pids;
  }

  const service = () => `http://127.0.0.1:${port}`;
  const shop = () => `http://127.0.0.1:${shopPort}`;
  const settingsFile = () => join(cwd, 'data/demo-shop.json');

  test('package.json start runs scripts/start.mjs', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    assert.equal(pkg.scripts.start, 'node scripts/start.mjs');
  });

  test('first start: both answer, the shop URL first, the settings file 0600, webhooks reach the shop', async () => {
    const s = start();
    await waitFor(
      s,
      async () => (await answers(`${service()}/healthz`)) && (await answers(`${shop()}/`)),
      'both',
    );
    await waitFor(s, async () => s.output().includes('Lost the secret key?'), 'the credentials');
    const output = s.output();
    const lines = output.split('\n');
    assert.equal(
      lines[0],
      `Demo shop: http://localhost:${shopPort}  (orders: http://localhost:${shopPort}/orders)`,
    );
    assert.ok(output.indexOf('created a demo merchant') > 0);

    assert.equal(statSync(settingsFile()).mode & 0o777, 0o600);
    const settings = JSON.parse(readFileSync(settingsFile(), 'utf8'));
    assert.equal(settings.api_url, `http://localhost:${port}/v1`);
    assert.equal(settings.pay_url, `http://localhost:${port}`);
    assert.equal(settings.shop_url, `http://localhost:${shopPort}`);
    assert.match(settings.webhook_secret, /^whsec_/);
    assert.equal(settings.secret_key, undefined, 'the shop never gets the secret key');
    secretKey = /secret key +(svc_sk_test_\w+)/.exec(output)?.[1] as string;
    assert.ok(secretKey);

    // The demo merchant: the shop's origin allowed, its receiver registered for every event.
    const me = await fetch(`${service()}/v1/merchants/me`, {
      headers: { authorization: `Bearer ${secretKey}` },
    });
    // Under both names a browser on this machine opens the shop by (docs/decisions.md#demo-shop).
    const allowed = ((await me.json()) as { allowed_origins: string[] }).allowed_origins;
    for (const origin of [settings.shop_url, `http://127.0.0.1:${shopPort}`])
      assert.ok(allowed.includes(origin), `${origin} in ${allowed.join(' ')}`);

    // A session from the shop's page: its group.created reaches the shop (localhost, the endpoint's secret).
    const order = (await (await fetch(`${shop()}/api/orders`, { method: 'POST' })).json()) as {
      order_ref: string;
    };
    const cart = {
      total: 2450 + 202 + 900 + 200,
      currency: 'usd',
      items: [{ id: 'sku_lantern', name: 'Camp lantern', quantity: 1, unit_price: 2450 }],
      tax: 202,
      shipping: 900,
      fees: [{ id: 'fee_packing', label: 'Packing', amount: 200 }],
      metadata: { order_ref: order.order_ref },
    };
    const signed = await fetch(`${shop()}/api/cart/sign`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ cart }),
    });
    assert.equal(signed.status, 200, await signed.clone().text());
    const { signature } = (await signed.json()) as { signature: string };
    const created = await fetch(`${service()}/v1/sessions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${settings.publishable_key}`,
        'content-type': 'application/json',
        origin: settings.shop_url,
      },
      body: JSON.stringify({ cart, signature }),
    });
    assert.equal(created.status, 200, await created.clone().text());
    const { session_id: sessionId } = (await created.json()) as { session_id: string };
    // The demo merchant has registered origins, so another page's is refused even in the sandbox.
    const elsewhere = await fetch(`${service()}/v1/sessions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${settings.publishable_key}`,
        'content-type': 'application/json',
        origin: 'https://elsewhere.example',
      },
      body: JSON.stringify({ cart, signature }),
    });
    assert.equal(elsewhere.status, 403, await elsewhere.clone().text());
    await waitFor(
      s,
      async () => (await fetch(`${shop()}/orders`).then((r) => r.text())).includes(sessionId),
      'group.created at the shop',
    );

    // The start-up output's dashboard link signs the demo owner in; the shop's group is on the list.
    await waitFor(s, async () => /Dashboard: sign in/.test(s.output()), 'the dashboard link');
    const link = /(http:\/\/localhost:\d+\/dashboard\/sign-in\?token=dsl_\w+)/.exec(s.output())?.[1];
    assert.ok(link, s.output());
    firstLink = link;
    const signedIn = await fetch(service() + '/dashboard/sign-in', {
      method: 'POST',
      redirect: 'manual',
      // The page's origin is {pay_url}'s, localhost; the request goes to the address the service listens on.
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: new URL(link).origin },
      body: new URLSearchParams({ token: new URL(link).searchParams.get('token') as string }).toString(),
    });
    assert.equal(signedIn.status, 303);
    const cookie = (signedIn.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const list = await fetch(`${service()}/dashboard/sessions`, { headers: { cookie } });
    assert.equal(list.status, 200);
    assert.match(await list.text(), new RegExp(sessionId));

    const pids = await stop(s);
    assert.equal(pids.length, 2, 'two processes: the service and the shop');
  });

  test('a second start reuses the settings file and prints no credentials', async () => {
    const before = readFileSync(settingsFile(), 'utf8');
    const s = start();
    await waitFor(
      s,
      async () => (await answers(`${service()}/healthz`)) && (await answers(`${shop()}/`)),
      'both',
    );
    await waitFor(s, async () => s.output().includes('Demo shop:'), 'the shop URL');
    assert.ok(s.output().startsWith(`Demo shop: http://localhost:${shopPort}`), s.output());
    assert.doesNotMatch(s.output(), /created a demo merchant|svc_sk_test_/);
    // A fresh one-time dashboard link at every start.
    await waitFor(s, async () => /Dashboard: sign in/.test(s.output()), 'the dashboard link');
    const link = /(http:\/\/localhost:\d+\/dashboard\/sign-in\?token=dsl_\w+)/.exec(s.output())?.[1];
    assert.ok(link && link !== firstLink, s.output());
    assert.equal(readFileSync(settingsFile(), 'utf8'), before);
    await stop(s);
  });

  test('a start on another SHOP_PORT moves the webhook endpoint and the settings with it', async () => {
    const before = JSON.parse(readFileSync(settingsFile(), 'utf8'));
    shopPort = await freePort();
    const s = start();
    await waitFor(
      s,
      async () => (await answers(`${service()}/healthz`)) && (await answers(`${shop()}/`)),
      'both',
    );
    const after = JSON.parse(readFileSync(settingsFile(), 'utf8'));
    assert.equal(after.shop_url, `http://localhost:${shopPort}`);
    assert.notEqual(after.webhook_id, before.webhook_id);
    assert.equal(after.merchant_id, before.merchant_id);
    assert.equal(statSync(settingsFile()).mode & 0o777, 0o600);
    const hooks = await fetch(`${service()}/v1/webhooks`, {
      headers: { authorization: `Bearer ${secretKey}` },
    });
    const { data } = (await hooks.json()) as { data: { id: string; url: string }[] };
    assert.deepEqual(
      data.map((w) => [w.id, w.url]),
      [[after.webhook_id, `http://localhost:${shopPort}/webhooks/group-checkout`]],
    );
    await stop(s);
  });

  test('another database gets its own demo merchant and settings file; back on the default, the shop works (#19)', async () => {
    const before = readFileSync(settingsFile(), 'utf8');
    const other = start({ DATABASE_URL: 'sqlite:./data/other.db' });
    await waitFor(
      other,
      async () => (await answers(`${service()}/healthz`)) && (await answers(`${shop()}/`)),
      'both, on the other database',
    );
    await waitFor(other, async () => other.output().includes('Lost the secret key?'), 'the credentials');
    const otherFile = /demo shop settings +(\.\/data\/demo-shop\.[0-9a-f]{12}\.json)/.exec(
      other.output(),
    )?.[1];
    assert.ok(otherFile, other.output());
    const otherSettings = JSON.parse(readFileSync(join(cwd, otherFile), 'utf8'));
    assert.equal(otherSettings.database, 'sqlite:./data/other.db');
    assert.equal(statSync(join(cwd, otherFile)).mode & 0o777, 0o600);
    // The shop beside it runs on the other database's merchant…
    assert.ok((await fetch(`${shop()}/`).then((r) => r.text())).includes(otherSettings.publishable_key));
    await stop(other);
    // …and the default database's file is as it was.
    assert.equal(readFileSync(settingsFile(), 'utf8'), before);

    const back = start();
    await waitFor(
      back,
      async () => (await answers(`${service()}/healthz`)) && (await answers(`${shop()}/`)),
      'both, on the default database',
    );
    const settings = JSON.parse(before);
    assert.equal(settings.database, 'sqlite:./data/group-checkout.db');
    const page = await fetch(`${shop()}/`).then((r) => r.text());
    assert.ok(page.includes(settings.publishable_key), "the default database's merchant, whose key works");
    const me = await fetch(`${service()}/v1/sessions?limit=1`, {
      headers: { authorization: `Bearer ${secretKey}` },
    });
    assert.equal(me.status, 200);
    await stop(back);
  });

  test('DEMO_SHOP=0 runs the service alone', async () => {
    const s = start({ DEMO_SHOP: '0' });
    await waitFor(s, () => answers(`${service()}/healthz`), 'the service');
    await sleep(300);
    assert.equal(await answers(`${shop()}/`), false);
    assert.doesNotMatch(s.output(), /Demo shop/);
    const pids = await stop(s);
    assert.equal(pids.length, 1);
  });
});
