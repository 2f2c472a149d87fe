// The data of the table-size benchmark (bench/growth-postgres.ts): a few template sessions made through the
// service in every state a session ends in, then copied set-based (INSERT … SELECT over generate_series) on
// the service's own schema, so a million sessions take minutes and every copy is as consistent as its
// template (reconcile finds nothing in them). Each copy gets ids of its own (the template's id, its
// prefix kept, the rest a hash of the id and the copy's number, so references stay references), a creation
// time spread over 30 days, a merchant (five, one with half the sessions), and a state fit for its age:
// younger than two days, pending (nothing paid, one share paid, two holds) or funded; older, funded,
// expired or cancelled (with refunds or released holds). One in five has a webhook_url of its own. Every
// event is fanned out: one delivery to the merchant's endpoint, one to the session's URL; those of the
// last 30 minutes are pending (retrying: their receivers are behind), the rest delivered.
import type { Client } from 'pg';
import type { buildApp } from '../src/app.ts';
import type { Deps } from '../src/deps.ts';
import { createMerchant } from '../src/flows/merchants.ts';
import { settleSession } from '../src/flows/settle.ts';
import { createWebhookEndpoint } from '../src/flows/webhooks.ts';

const DAY = 24 * 60 * 60 * 1000;
/** Copies are numbered below 2^20; their creation times are 30 days split in 2^20 steps (2.47 s). */
const BITS = 20;
const MAX_COPIES = 2 ** BITS;
const STEP_MS = Math.floor((30 * DAY) / MAX_COPIES);
/** Deliveries of events younger than this are pending when seeded. */
const PENDING_WINDOW_MS = 30 * 60_000;

interface SeededMerchant {
  id: string;
  secretKey: string;
}

export interface Seed {
  merchants: SeededMerchant[];
  /** Copies are older than this (milliseconds): the youngest template was made just after. */
  end: number;
}

type App = Awaited<ReturnType<typeof buildApp>>;

/** Five merchants, each with one webhook endpoint, and the templates, made by the first one. */
export async function seedTemplates(deps: Deps, app: App, sql: Client): Promise<Seed> {
  const merchants: SeededMerchant[] = [];
  for (let i = 0; i < 5; i++) {
    const { merchant, secretKey } = await createMerchant(
      deps.db,
      {
        name: `Growth Shop ${i}`,
        environment: 'test',
        headlessApiEnabled: true,
        payoutCurrency: null,
        allowedOrigins: [],
      },
      Date.now(),
    );
    await createWebhookEndpoint(deps, merchant.id, {
      url: `https://hooks.shop${i}.example/gc`,
      events: ['*'],
    });
    merchants.push({ id: merchant.id, secretKey });
  }
  const key = (merchants[0] as SeededMerchant).secretKey;
  const call = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown, auth = false) => {
    const res = await app.inject({
      method,
      url,
      headers: { 'content-type': 'application/json', ...(auth && { authorization: `Bearer ${key}` }) },
      ...(payload !== undefined && { payload: JSON.stringify(payload) }),
    });
    if (res.statusCode >= 300)
      throw new Error(`template: ${method} ${url} answered ${res.statusCode}: ${res.body}`);
    return JSON.parse(res.body) as Record<string, unknown>;
  };
  const card = { number: '4242424242424242', exp_month: 12, exp_year: 2099, cvc: '123' };
  /** A session with a group of three (equal), `paid` of its shares paid; answers its id. */
  const make = async (capture: 'immediate' | 'on_funded', paid: number) => {
    const created = await call(
      'POST',
      '/v1/sessions',
      {
        cart: {
          total: 9_000,
          currency: 'usd',
          items: [{ id: 'sku-tent', name: 'Tent', quantity: 1, unit_price: 9_000 }],
          metadata: { order_ref: 'ORD-template' },
        },
        customer: { name: 'Ann', email: 'ann@example.com' },
        group_config: { capture },
      },
      true,
    );
    const access = new URL(created.session_url as string).searchParams.get('access');
    const group = (await call('PUT', `/api/v1/session/group?access=${access}`, {
      mode: 'equal',
      members: [{ name: 'Ann' }, { name: 'Ben' }, { name: 'Cy' }],
    })) as { group: { members: { share_id: string }[] } };
    for (const m of group.group.members.slice(0, paid))
      await call('POST', `/api/v1/shares/${m.share_id}/pay`, { card });
    return created.session_id as string;
  };
  const close = async (id: string, how: 'cancel' | 'expire') => {
    await call(
      'POST',
      how === 'cancel' ? `/v1/sessions/${id}/cancel` : `/v1/test_helpers/sessions/${id}/expire`,
      {},
      true,
    );
    await settleSession(deps, id);
  };
  const templates: Record<string, string> = {
    P0: await make('immediate', 0),
    P1: await make('immediate', 1),
    P2: await make('on_funded', 2),
    F0: await make('immediate', 3),
    F1: await make('on_funded', 3),
    E0: await make('immediate', 0),
    E1: await make('immediate', 1),
    C0: await make('immediate', 0),
    C1: await make('immediate', 1),
    R0: await make('on_funded', 1),
  };
  await close(templates.E0 as string, 'expire');
  await close(templates.E1 as string, 'expire');
  await close(templates.C0 as string, 'cancel');
  await close(templates.C1 as string, 'cancel');
  await close(templates.R0 as string, 'expire');
  for (const id of [templates.F0, templates.F1]) await settleSession(deps, id as string);

  // What the copies are made with: the templates, a copy's ids and its numbering over 30 days.
  await sql.query(
    'create table growth_templates (kind text primary key, id text not null, created_at bigint not null)',
  );
  for (const [kind, id] of Object.entries(templates))
    await sql.query('insert into growth_templates select $1, id, created_at from sessions where id = $2', [
      kind,
      id,
    ]);
  // The prefix (up to the first underscore) kept, the rest a hash as long as it was: null stays null.
  await sql.query(`
    create function growth_id(id text, n int) returns text language sql immutable parallel safe as $$
      select left(id, strpos(id, '_')) ||
        left(md5(id || n::text) || md5(n::text || id), greatest(length(id) - strpos(id, '_'), 12))
    $$`);
  await sql.query(`
    create function growth_rev(n int) returns int language plpgsql immutable as $$
      declare r int := 0;
      begin
        for i in 0..${BITS - 1} loop r := (r << 1) | ((n >> i) & 1); end loop;
        return r;
      end $$`);
  await sql.query(`
    create table growth_plan (
      n int primary key, template text not null, kind text not null, merchant int not null,
      sid text not null, created bigint not null, delta bigint not null, hook boolean not null)`);
  // The templates' events are fanned out already, as the service would have done.
  await sql.query('update events set dispatched_at = created_at where dispatched_at is null');
  const { rows } = await sql.query<{ min: string }>('select min(created_at) as min from growth_templates');
  return { merchants, end: Number(rows[0]?.min) - 1 };
}

/**
 * Copies numbered [from, to): the plan, then each table in one statement per chunk of copies, then the
 * deliveries of their events and the URLs' queue rows. `log` hears of progress.
 */
export async function seedCopies(
  sql: Client,
  seed: Seed,
  from: number,
  to: number,
  log: (line: string) => void,
): Promise<void> {
  if (to > MAX_COPIES) throw new Error(`at most ${MAX_COPIES} sessions`);
  const merchants = seed.merchants.map((m) => m.id);
  const recent = 46 * 60 * 60_000;
  await sql.query(
    `insert into growth_plan (n, template, kind, merchant, sid, created, delta, hook)
     select s.n, t.id, t.kind, s.merchant, growth_id(t.id, s.n), s.created, s.created - t.created_at, s.hook
     from (
       select n, created, merchant, hook,
         case when $3::bigint - created < ${recent} then
           case when u < 3500 then 'P0' when u < 5500 then 'P1' when u < 6500 then 'P2' when u < 9000 then 'F0' else 'F1' end
         else
           case when u < 4000 then 'F0' when u < 5000 then 'F1' when u < 7000 then 'E0' when u < 7500 then 'E1'
                when u < 8500 then 'C0' when u < 9200 then 'C1' else 'R0' end
         end as kind
       from (
         select n, $3::bigint - 1 - growth_rev(n)::bigint * ${STEP_MS} as created,
           (hashint4(n) & 2147483647) % 10000 as u,
           case when (hashint4(n + 1000003) & 2147483647) % 100 < 50 then 0
                when (hashint4(n + 1000003) & 2147483647) % 100 < 75 then 1
                when (hashint4(n + 1000003) & 2147483647) % 100 < 88 then 2
                when (hashint4(n + 1000003) & 2147483647) % 100 < 95 then 3 else 4 end as merchant,
           (hashint4(n + 2000003) & 2147483647) % 5 = 0 as hook
         from generate_series($1::int, $2::int - 1) as n
       ) r
     ) s join growth_templates t on t.kind = s.kind`,
    [from, to, seed.end],
  );
  const merchantOf = `($merchants::text[])[p.merchant + 1]`;
  const id = (column: string) => `growth_id(t.${column}, p.n)`;
  const at = (column: string) => `t.${column} + p.delta`;
  const tables: { table: string; columns: Record<string, string>; from: string }[] = [
    {
      table: 'sessions',
      from: 'sessions t join growth_plan p on t.id = p.template',
      columns: {
        id: 'p.sid',
        merchant_id: merchantOf,
        order_ref: `'ORD-' || p.n`,
        group_id: id('group_id'),
        organizer_token_hash: id('organizer_token_hash'),
        group_token: id('group_token'),
        webhook_url: `case when p.hook then 'https://shop' || p.merchant || '.example/hooks/' || p.sid else t.webhook_url end`,
        group_set_up_at: at('group_set_up_at'),
        created_at: 'p.created',
        updated_at: at('updated_at'),
        expires_at: at('expires_at'),
        closed_at: at('closed_at'),
        funded_at: at('funded_at'),
        settled_at: at('settled_at'),
        settle_after: at('settle_after'),
      },
    },
    {
      table: 'members',
      from: 'members t join growth_plan p on t.session_id = p.template',
      columns: {
        id: id('id'),
        session_id: 'p.sid',
        merchant_id: merchantOf,
        share_id: id('share_id'),
        paying_attempt_id: id('paying_attempt_id'),
        last_reminded_at: at('last_reminded_at'),
        created_at: at('created_at'),
        updated_at: at('updated_at'),
      },
    },
    {
      table: 'attempts',
      from: 'attempts t join growth_plan p on t.session_id = p.template',
      columns: {
        id: id('id'),
        idempotency_key: id('idempotency_key'),
        merchant_id: merchantOf,
        session_id: 'p.sid',
        member_id: id('member_id'),
        target_id: id('target_id'),
        processor_id: id('processor_id'),
        client_secret: id('client_secret'),
        created_at: at('created_at'),
        updated_at: at('updated_at'),
      },
    },
    {
      table: 'ledger_lines',
      from: 'ledger_lines t join growth_plan p on t.session_id = p.template',
      columns: {
        id: id('id'),
        entry_id: id('entry_id'),
        merchant_id: merchantOf,
        session_id: 'p.sid',
        member_id: id('member_id'),
        attempt_id: id('attempt_id'),
        created_at: at('created_at'),
      },
    },
    {
      table: 'sandbox_operations',
      from: `sandbox_operations t join attempts a on a.idempotency_key = t.idempotency_key
             join growth_plan p on a.session_id = p.template`,
      columns: {
        idempotency_key: id('idempotency_key'),
        id: id('id'),
        target_id: id('target_id'),
        client_secret: id('client_secret'),
        outcome: `case when t.id is null then t.outcome else replace(t.outcome, t.id, ${id('id')}) end`,
        created_at: at('created_at'),
        updated_at: at('updated_at'),
      },
    },
    {
      table: 'events',
      from: 'events t join growth_plan p on t.session_id = p.template',
      columns: {
        id: id('id'),
        merchant_id: merchantOf,
        session_id: 'p.sid',
        payload: 'replace(t.payload, t.session_id, p.sid)',
        created_at: at('created_at'),
        dispatched_at: `${at('created_at')} + 50`,
        seq: '',
      },
    },
  ];
  const CHUNK = 100_000;
  for (const spec of tables) {
    const { rows } = await sql.query<{ column_name: string }>(
      `select column_name from information_schema.columns where table_schema = 'public' and table_name = $1
       order by ordinal_position`,
      [spec.table],
    );
    const names = rows.map((r) => r.column_name).filter((c) => spec.columns[c] !== '');
    const select = names.map((c) => spec.columns[c] ?? `t.${c}`).join(', ');
    const started = performance.now();
    for (let lo = from; lo < to; lo += CHUNK) {
      const hi = Math.min(to, lo + CHUNK);
      await sql.query(
        `insert into ${spec.table} (${names.join(', ')}) select ${select.replaceAll('$merchants', '$3')}
         from ${spec.from} where p.n >= $1 and p.n < $2 and cardinality($3::text[]) > 0 order by p.n`,
        [lo, hi, merchants],
      );
    }
    log(`${spec.table}: ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  // Deliveries: each copied event to its merchant's endpoint and, when it has one, the session's URL, in
  // the events' order (the queue's order); pending when younger than the window, else delivered.
  const started = performance.now();
  for (let lo = from; lo < to; lo += CHUNK) {
    const hi = Math.min(to, lo + CHUNK);
    await sql.query(
      `insert into deliveries (id, event_id, merchant_id, webhook_id, url, state, attempt_count, next_attempt_at,
                               created_at, updated_at)
       select 'dlv_' || left(md5(e.id || ':' || d.url), 24), e.id, e.merchant_id, d.webhook_id, d.url,
         case when pending then 'pending' else 'delivered' end, 1,
         case when pending then e.created_at + 60000 end,
         e.created_at + 5, case when pending then e.created_at + 5 else e.created_at + 300 end
       from growth_plan p
       join events e on e.session_id = p.sid
       join sessions s on s.id = p.sid
       join webhook_endpoints w on w.merchant_id = e.merchant_id
       cross join lateral (values (w.id, w.url), (null, s.webhook_url)) as d(webhook_id, url)
       cross join lateral (select $3::bigint - e.created_at < ${PENDING_WINDOW_MS} as pending) as q
       where p.n >= $1 and p.n < $2 and d.url is not null
       order by e.seq`,
      [lo, hi, seed.end],
    );
  }
  await sql.query(
    `insert into delivery_urls (url, due_at, holder, held_until)
     select url, min(next_attempt_at), null, null from deliveries where state = 'pending' group by url
     on conflict (url) do update set due_at = excluded.due_at`,
  );
  log(`deliveries: ${((performance.now() - started) / 1000).toFixed(1)} s`);
}
