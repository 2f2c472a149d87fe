// Baseline B, the reference for POST /v1/sessions: bare Fastify that does the irreducible work of a
// session create: parse the JSON body, canonicalize the cart with the shared canonicalCart, verify the
// HMAC in constant time, insert one row with better-sqlite3 (WAL, synchronous=NORMAL as the service
// uses). No auth, validation, rate limiting or logging. Started by run.ts in its own process.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { type Cart, canonicalCart } from '@group-checkout/node';
import SQLite from 'better-sqlite3';
import Fastify from 'fastify';

const port = Number(process.env.PORT);
const dbFile = process.env.BENCH_REFERENCE_DB;
const signingSecret = process.env.BENCH_SIGNING_SECRET;
if (!dbFile || !signingSecret) throw new Error('BENCH_REFERENCE_DB and BENCH_SIGNING_SECRET are required');

const db = new SQLite(dbFile);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.exec(`create table if not exists sessions (
  id text primary key,
  total integer not null,
  currency text not null,
  cart text not null,
  created_at integer not null
)`);
const insert = db.prepare(
  'insert into sessions (id, total, currency, cart, created_at) values (?, ?, ?, ?, ?)',
);
const key = Buffer.from(signingSecret, 'utf8');
const HEX = /^[0-9a-f]{64}$/i;

const app = Fastify({ logger: false });
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
  insert.run(id, cart.total, cart.currency, JSON.stringify(cart), Date.now());
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
