// Baseline B, the reference for POST /v1/sessions: bare Fastify that does the irreducible work of a
// session create: parse the JSON body, canonicalize the cart with the shared canonicalCart, verify the
// HMAC in constant time, insert one row with better-sqlite3 (with the service's SQLite settings, store/db.ts
// SQLITE_PRAGMAS). No auth, validation, rate limiting or logging. Started by run.ts in its own process.
//
// With BENCH_REFERENCE_MODE=full it writes instead what the service's create writes, on the service's
// own schema (its migrations): the session, the organizer member and the group.created outbox event in
// one transaction, after the same created_at read. Still with raw prepared statements and no auth,
// validation, query builder or logging: the floor for a transactional create on this machine. The full
// mode also serves the same-writes reference for paying a share (reference-pay.ts), on the same database.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { type Cart, canonicalCart } from '@group-checkout/node';
import SQLite from 'better-sqlite3';
import Fastify from 'fastify';
import { openDb, SQLITE_PRAGMAS } from '../src/store/db.ts';
import { migrateToLatest } from '../src/store/migrations/index.ts';
import { registerPay } from './reference-pay.ts';
import { registerSameBytes } from './same-bytes.ts';

const port = Number(process.env.PORT);
const dbFile = process.env.BENCH_REFERENCE_DB;
const signingSecret = process.env.BENCH_SIGNING_SECRET;
if (!dbFile || !signingSecret) throw new Error('BENCH_REFERENCE_DB and BENCH_SIGNING_SECRET are required');

const full = process.env.BENCH_REFERENCE_MODE === 'full';
if (full) {
  const schema = openDb(`sqlite:${dbFile}`);
  await migrateToLatest(schema);
  await schema.kysely
    .insertInto('merchants')
    .values({
      id: 'm',
      name: 'Reference',
      environment: 'test',
      headless_api_enabled: 1,
      payout_mode: 'checkout',
      payout_currency: null,
      merchant_fee_ppm: 20_100,
      consumer_fee_ppm: 10_000,
      fx_fee_ppm: 10_000,
      signing_secret: signingSecret,
      session_webhook_secret: 'whsec_x',
      allowed_origins: '[]',
      processor_account_id: null,
      created_at: 0,
    })
    .execute();
  await schema.close();
}

const db = new SQLite(dbFile);
// The service's own settings: foreign keys checked, the same WAL checkpointing (store/db.ts).
for (const pragma of SQLITE_PRAGMAS) db.pragma(pragma);
if (!full) {
  db.exec(`create table if not exists sessions (
    id text primary key,
    total integer not null,
    currency text not null,
    cart text not null,
    created_at integer not null
  )`);
}
const insertOne = full
  ? undefined
  : db.prepare('insert into sessions (id, total, currency, cart, created_at) values (?, ?, ?, ?, ?)');
const lastCreated = full
  ? db.prepare("select max(created_at) from sessions where merchant_id = 'm'").pluck()
  : undefined;
const insertSession = full
  ? db.prepare(`insert into sessions (id, merchant_id, status, cart, currency, total_cents, order_ref, group_id,
      group_mode, group_config, group_set_up_at, customer, success_url, cancel_url, webhook_url, embed_origins,
      organizer_token_hash, group_token, merchant_fee_ppm, consumer_fee_ppm, created_at, updated_at, expires_at,
      closed_at) values (?, 'm', 'pending', ?, ?, ?, ?, ?, 'equal', ?, null, null, null, null, null, '[]', ?, ?,
      20100, 10000, ?, ?, ?, null)`)
  : undefined;
const insertMember = full
  ? db.prepare(`insert into members (id, session_id, merchant_id, position, name, email, amount_cents, basis_points,
      items, share_id, status, is_organizer, last_reminded_at, created_at, updated_at)
      values (?, ?, 'm', 0, 'Organizer', null, ?, null, null, ?, 'pending', 1, null, ?, ?)`)
  : undefined;
const insertEvent = full
  ? db.prepare(`insert into events (id, merchant_id, session_id, type, payload, created_at)
      values (?, 'm', ?, 'group.created', ?, ?)`)
  : undefined;
const GROUP_CONFIG = JSON.stringify({
  minSize: 2,
  maxSize: 10,
  defaultMode: 'equal',
  allowedModes: ['equal', 'itemized', 'custom', 'percentage', 'host-pays'],
  expiryHours: 48,
});
const token = () => randomBytes(20).toString('hex');
const createFull = db.transaction((cart: Cart, id: string) => {
  const now = Date.now();
  const createdAt = Math.max(now, ((lastCreated?.get() as number | null) ?? 0) + 1);
  const cartText = JSON.stringify(cart);
  insertSession?.run(
    id,
    cartText,
    cart.currency,
    cart.total,
    cart.metadata?.order_ref ?? null,
    `grp_${token()}`,
    GROUP_CONFIG,
    token(),
    `gat_${token()}`,
    createdAt,
    createdAt,
    createdAt + 48 * 3_600_000,
  );
  insertMember?.run(`mem_${token()}`, id, cart.total, `shr_${token()}`, createdAt, createdAt);
  const event = {
    id: `evt_${token()}`,
    type: 'group.created',
    timestamp: new Date(now).toISOString(),
    data: {
      session_id: id,
      order_ref: cart.metadata?.order_ref ?? null,
      status: 'pending',
      total_cents: cart.total,
      currency: cart.currency,
      paid_amount: 0,
      pending_amount: cart.total,
      charges: [],
    },
  };
  insertEvent?.run(event.id, id, JSON.stringify(event), createdAt);
});
const key = Buffer.from(signingSecret, 'utf8');
const HEX = /^[0-9a-f]{64}$/i;

const app = Fastify({ logger: false });
if (full) {
  registerPay(app, db, 'm');
  // The mixed scenario's reference: its polled GETs answered from memory beside these writes.
  registerSameBytes(app, '/v1/sessions/:id');
}
app.post('/v1/sessions', async (request, reply) => {
  const body = request.body as { cart?: Cart; signature?: unknown } | null;
  const cart = body?.cart;
  const signature = body?.signature;
  if (!cart || typeof signature !== 'string' || !HEX.test(signature)) {
    return reply.code(400).send({ error: 'cart and a hex signature are required' });
  }
  const expected = createHmac('sha256', key).update(canonicalCart(cart), 'utf8').digest();
  if (!timingSafeEqual(Buffer.from(signature, 'hex'), expected)) {
    return reply.code(400).send({ error: 'invalid signature' });
  }
  const id = `gs_${randomBytes(16).toString('hex')}`;
  if (full) createFull(cart, id);
  else insertOne?.run(id, cart.total, cart.currency, JSON.stringify(cart), Date.now());
  return { session_id: id, status: 'pending' };
});

function close() {
  void app.close().then(() => {
    db.close();
    process.exit(0);
  });
}
process.once('SIGTERM', close);
process.once('SIGINT', close);
await app.listen({ port, host: '127.0.0.1' });
