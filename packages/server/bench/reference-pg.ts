// The same-statement reference on PostgreSQL (docs/benchmarks.md#hot-paths-on-postgresql): bare Fastify
// (no logger, hooks, schemas or rate limits) and raw `pg`, sending PostgreSQL the statements the service
// sends for POST /v1/sessions, GET /v1/sessions/{id} and POST /api/v1/shares/{id}/pay (sandbox, capture
// immediate), with the same texts, in the same order, in the same transactions, through a pool of the
// same size (10) that parses bigint and numeric as numbers, as the service's does. Read off the service
// with log_statement=all (2026-11-25); test/payments/query-counts.test.ts pins their count (create 5,
// pay 16, not counting begin and commit). Started by bench/postgres.ts, as one or two processes on one
// database made by the service's own migrations (`group-checkout merchant create`).
//
// POST /v1/sessions (publishable key; 5 statements, one transaction, one commit):
//   select the key joined to its merchant by key_hash (not revoked, not expired)
//   begin; update the merchant's last_session_at to max(now, its newest session's created_at + 1)
//   returning it (created_at is unique per merchant; the row's lock makes processes creating for one
//   merchant take turns); insert the session;
//   insert the organizer member; insert the group.created event with pg_notify(…) (one statement: a
//   CTE); commit
// GET /v1/sessions/{id} (secret key; 3 statements, no transaction):
//   select the key joined to its merchant; select the session by id and merchant; select its members
//   by position (and, once a member has moved or the session is funded, its attempts and disputes)
// POST /api/v1/shares/{id}/pay (16 statements, two transactions):
//   select the member's ids by share_id joined to its merchant's name
//   claim:     begin; lock the open session (update updated_at … returning *); select the member by id;
//              count the member's attempts (the try number); insert the attempt; mark the member paying;
//              set settle_after (the recovery); commit
//   processor: insert the sandbox_operations row … on conflict (its key) do nothing returning (no
//              transaction; the row by key is read only when the key had one)
//   record:    begin; lock the session (update updated_at … returning *); settle the attempt
//              (… returning *); move the member to paid (… returning *); 3 ledger lines; the group's
//              sums; its live attempts (started, and succeeded charges: the charge ids); insert
//              group.share_paid, its created_at after the session's last event's read by the insert,
//              with pg_notify(…) (one statement: a CTE); set settle_after; commit
// And what follows from them, as the service does it:
//   each merchant API answer (create, GET) is a row of api_requests, written in batches apart from the
//   request: one insert … from jsonb_array_elements($1) per batch, at most 100 ms after its first row;
//   each NOTIFY wakes the fan-out of events (LISTEN, one round at a time, the rounds wakes ask for at
//   least 50 ms apart, as jobs/dispatcher.ts paces them):
//   begin; pg_try_advisory_xact_lock; up to 100 undispatched events by seq; their sessions'
//   webhook_url; the merchant's webhook endpoints; for group.share_paid events the rows the mails are
//   made from (the events' payloads, the sessions' customer, the addresses of the organizers and of the
//   members the events name); mark them
//   dispatched; commit; then claim due delivery URLs (update delivery_urls … skip locked) and read when
//   a lease held elsewhere ends. The bench's merchant has no endpoints and its members no address, so no
//   delivery and no mail row is written, on either side.
//
// Not mirrored: the service's periodic loops (expiry, settling, processor events, mails, housekeeping: a
// few statements a second whatever the load), and a group's last share, which funds the session and
// transfers its money (about 40 more statements in five more transactions): bench/postgres.ts pays
// every share but the last of each group, on the service as on this reference. Ids come from the
// service's generator; the card is checked as the service checks it (domain/card.ts); the cart's
// signature is verified against the signing secret the key's row carries. Nothing else is validated,
// logged or rate limited.
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { type Cart, canonicalCart } from '@group-checkout/node';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import pg from 'pg';
import { cardBrand, checkCard, normalizeCardNumber } from '../src/domain/card.ts';
import { ids, sha256 } from '../src/ids.ts';

const port = Number(process.env.PORT);
const databaseUrl = process.env.BENCH_REFERENCE_PG_URL;
if (!databaseUrl) throw new Error('BENCH_REFERENCE_PG_URL is required');
const payUrl = `http://127.0.0.1:${port}`;

const PG_INT8 = 20;
const PG_NUMERIC = 1700;
const types = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') =>
    oid === PG_INT8 || oid === PG_NUMERIC ? Number : pg.types.getTypeParser(oid, format),
};
const pool = new pg.Pool({ connectionString: databaseUrl, types, max: 10 });
pool.on('error', () => undefined);

// The service's statements, as its log shows them.
const SQL = {
  key: `select "merchants".*, "api_keys"."id" as "key_id", "api_keys"."kind" as "key_kind", "api_keys"."environment" as "key_environment", "api_keys"."key_hash" as "key_hash", "api_keys"."expires_at" as "key_expires_at" from "api_keys" inner join "merchants" on "merchants"."id" = "api_keys"."merchant_id" where "api_keys"."key_hash" = $1 and "api_keys"."revoked_at" is null and ("api_keys"."expires_at" is null or "api_keys"."expires_at" > $2)`,
  takeCreatedAt:
    'update "merchants" set "last_session_at" = greatest($1, greatest("last_session_at", (select max("created_at") from "sessions" where "merchant_id" = $2)) + 1) where "id" = $3 returning "last_session_at"',
  insertSession: `insert into "sessions" ("id", "merchant_id", "status", "cart", "currency", "total_cents", "order_ref", "group_id", "group_mode", "group_config", "group_set_up_at", "customer", "success_url", "cancel_url", "webhook_url", "embed_origins", "organizer_token_hash", "group_token", "merchant_fee_ppm", "consumer_fee_ppm", "charge_step", "locale", "mail_locale", "created_at", "updated_at", "expires_at", "closed_at", "funded_at", "settled_at", "settle_after") values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30)`,
  insertMember: `insert into "members" ("id", "session_id", "merchant_id", "position", "name", "email", "amount_cents", "basis_points", "items", "share_id", "status", "is_organizer", "last_reminded_at", "paying_attempt_id", "failure", "created_at", "updated_at") values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`,
  // The session's first event, and NOTIFY, in one statement.
  insertFirstEvent: `with "written" as (insert into "events" ("id", "merchant_id", "session_id", "type", "payload", "created_at") values ($1, $2, $3, $4, $5, $6) returning "seq") select pg_notify($7, '') as "notified" from "written"`,
  // A later event: created_at the next millisecond after the session's newest event when that is not
  // earlier than now, read by the insert; and NOTIFY, in one statement.
  insertNextEvent: `with "written" as (insert into "events" ("id", "merchant_id", "session_id", "type", "payload", "created_at") select $1 as "id", $2 as "merchant_id", $3 as "session_id", $4 as "type", $5 as "payload", case when max("created_at") >= $6 then max("created_at") + 1 else $7 end as "created_at" from "events" where "session_id" = $8 returning "seq") select pg_notify($9, '') as "notified" from "written"`,
  sessionById: 'select * from "sessions" where "id" = $1 and "merchant_id" = $2',
  members: 'select * from "members" where "session_id" = $1 order by "position" asc',
  attempts: 'select * from "attempts" where "session_id" = $1 order by "created_at" asc, "id" asc',
  disputes: 'select * from "disputes" where "session_id" = $1 order by "created_at", "id"',
  shareToPay:
    'select "members"."id", "members"."session_id", "members"."share_id", "merchants"."name" from "members" inner join "merchants" on "merchants"."id" = "members"."merchant_id" where "members"."share_id" = $1',
  lockOpen:
    'update "sessions" set "updated_at" = $1 where "id" = $2 and "status" = $3 and "expires_at" > $4 returning *',
  memberById: 'select * from "members" where "id" = $1',
  countAttempts: 'select count(*) as "n" from "attempts" where "session_id" = $1 and "member_id" = $2',
  insertAttempt: `insert into "attempts" ("id", "idempotency_key", "kind", "merchant_id", "session_id", "member_id", "target_id", "amount_cents", "fee_cents", "currency", "payment_method", "destination", "state", "processor_id", "card_brand", "card_last4", "decline_code", "error", "client_secret", "processor_pending", "created_at", "updated_at") values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22)`,
  startPaying:
    'update "members" set "paying_attempt_id" = $1, "updated_at" = $2 where "session_id" = $3 and "id" = $4 and "status" = $5 and "paying_attempt_id" is null',
  schedule: 'update "sessions" set "settle_after" = $1 where "id" = $2',
  findOperation: 'select * from "sandbox_operations" where "idempotency_key" = $1',
  insertOperation: `insert into "sandbox_operations" ("idempotency_key", "id", "kind", "target_id", "amount_cents", "currency", "state", "outcome", "client_secret", "created_at", "updated_at") values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) on conflict ("idempotency_key") do nothing returning "idempotency_key"`,
  lock: 'update "sessions" set "updated_at" = $1 where "id" = $2 returning *',
  settleAttempt: `update "attempts" set "state" = $1, "processor_id" = coalesce($2, "processor_id"), "card_brand" = coalesce($3, "card_brand"), "card_last4" = coalesce($4, "card_last4"), "decline_code" = $5, "error" = $6, "processor_pending" = $7, "updated_at" = $8 where "session_id" = $9 and "id" = $10 and "state" = $11 returning *`,
  movePaid: `update "members" set "status" = $1, "updated_at" = $2, "failure" = $3, "paying_attempt_id" = $4 where "session_id" = $5 and "id" = $6 and "status" = $7 and "paying_attempt_id" = $8 returning *`,
  insertLines: `insert into "ledger_lines" ("id", "entry_id", "kind", "account", "amount_cents", "currency", "merchant_id", "session_id", "member_id", "attempt_id", "created_at") values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11), ($12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22), ($23, $24, $25, $26, $27, $28, $29, $30, $31, $32, $33)`,
  sumGroup: `select coalesce(sum(case when status in ('paid', 'authorized') then amount_cents else 0 end), 0) as "paid_cents", coalesce(sum(case when status = 'paid' then 1 else 0 end), 0) as "paid", coalesce(sum(case when status = 'authorized' then 1 else 0 end), 0) as "authorized", coalesce(sum(case when amount_cents > 0 and (status <> 'paid' or paying_attempt_id is not null) then 1 else 0 end), 0) as "unpaid", coalesce(sum(case when amount_cents > 0 and (status not in ('paid', 'authorized') or paying_attempt_id is not null) then 1 else 0 end), 0) as "unready" from "members" where "session_id" = $1`,
  liveAttempts: `select "state", "processor_id", "client_secret", "created_at", "updated_at" from "attempts" where "session_id" = $1 and ("state" = $2 or ("state" = $3 and "kind" in ($4, $5))) order by "created_at" asc, "id" asc`,
  requestLog:
    'insert into api_requests (id, merchant_id, method, route, status, duration_us, key_prefix, created_at) select r ->> 0, r ->> 1, r ->> 2, r ->> 3, (r ->> 4)::integer, (r ->> 5)::integer, r ->> 6, (r ->> 7)::bigint from jsonb_array_elements($1::jsonb) as r',
  fanOutLock: '\n\t      select pg_try_advisory_xact_lock($1) as locked',
  undispatched:
    'select "id", "merchant_id", "session_id", "type" from "events" where "dispatched_at" is null order by "seq" limit $1',
  endpoints:
    'select * from "webhook_endpoints" where "merchant_id" = $1 and "revoked_at" is null order by "created_at" asc, "id" asc',
  takeDueUrls: `
\t    update delivery_urls set holder = $1, held_until = $2
\t    where url in (select url from delivery_urls where due_at <= $3 and (held_until is null or held_until <= $4)  order by due_at limit $5 for update skip locked)
\t      and due_at <= $6 and (held_until is null or held_until <= $7) 
\t    returning url, due_at`,
  heldElsewhere:
    'select min("held_until") as "at" from "delivery_urls" where "due_at" <= $1 and "held_until" > $2',
} as const;
/** `… in ($1, $2, …)`, as Kysely writes a list. */
const list = (from: number, n: number) => Array.from({ length: n }, (_, i) => `$${from + i}`).join(', ');

const CHANNEL = 'group_checkout_events';
const FAN_OUT_LOCK = 0x67632d66616e;
const FAN_OUT_BATCH = 100;
const RECOVERY_AFTER_MS = 300_000;
const HOUR_MS = 3_600_000;
const KEY_PREFIX_LENGTH = 16;
const HEX = /^[0-9a-f]{64}$/i;

interface KeyRow {
  id: string;
  signing_secret: string;
  merchant_fee_ppm: number;
  consumer_fee_ppm: number;
  key_kind: string;
  key_hash: string;
}

interface SessionRow {
  id: string;
  merchant_id: string;
  status: string;
  cart: string;
  currency: string;
  total_cents: number;
  order_ref: string | null;
  group_id: string;
  group_mode: string;
  group_config: string;
  customer: string | null;
  consumer_fee_ppm: number;
  charge_step: number;
  created_at: number;
  expires_at: number;
  settle_after: number | null;
}

interface MemberRow {
  id: string;
  session_id: string;
  name: string;
  amount_cents: number;
  basis_points: number | null;
  share_id: string;
  status: string;
  paying_attempt_id: string | null;
  failure: string | null;
}

interface AttemptRow {
  kind: string;
  state: string;
  processor_id: string | null;
  client_secret: string | null;
  created_at: number;
  updated_at: number;
}

class Refused extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const iso = (ms: number) => new Date(ms).toISOString();
const rate = (ppm: number) => ppm / 1_000_000;
/** round_half_up(share × ppm / 1e6) to a multiple of the charge step, as domain/money.ts feeFor. */
const feeFor = (cents: number, ppm: number, step: number) =>
  Math.floor((cents * ppm + 500_000 * step) / (1_000_000 * step)) * step;

/** A transaction on one pooled connection, as Kysely's: begin, the work, commit (rollback on error). */
async function transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    const result = await work(client);
    await client.query('commit');
    return result;
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

// The API request log (flows/request-log.ts): rows wait at most 100 ms, 500 go at once, one write at a time.
type LogRow = [string, string, string, string, number, number, string, number];
let waiting: LogRow[] = [];
let writing: Promise<void> | undefined;
let flushTimer: NodeJS.Timeout | undefined;
function logRequest(row: LogRow): void {
  waiting.push(row);
  if (waiting.length >= 500) startLogWrite();
  else flushTimer ??= setTimeout(startLogWrite, 100);
}
function startLogWrite(): void {
  clearTimeout(flushTimer);
  flushTimer = undefined;
  writing ??= (async () => {
    const batch = waiting;
    waiting = [];
    await pool.query(SQL.requestLog, [JSON.stringify(batch)]);
  })()
    .catch(() => undefined)
    .finally(() => {
      writing = undefined;
      if (waiting.length >= 500) startLogWrite();
      else if (waiting.length > 0) flushTimer ??= setTimeout(startLogWrite, 100);
    });
}

/** The key's merchant, or a refusal; `secret` when the route takes the secret key only. */
async function authenticate(request: FastifyRequest, secret: boolean): Promise<{ key: string; row: KeyRow }> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
  const key = match?.[1];
  if (!key) throw new Refused(401, 'missing_api_key');
  const hash = sha256(key);
  const row = (await pool.query<KeyRow>(SQL.key, [hash, Date.now()])).rows[0];
  if (!row || !timingSafeEqual(Buffer.from(row.key_hash), Buffer.from(hash)))
    throw new Refused(401, 'invalid_api_key');
  if (secret && row.key_kind !== 'secret') throw new Refused(403, 'secret_key_required');
  return { key, row };
}

const answerRefusal = (reply: FastifyReply, error: unknown) => {
  if (error instanceof Refused) return reply.code(error.status).send({ error: error.message });
  throw error;
};

const app = Fastify({ logger: false });

app.post('/v1/sessions', async (request, reply) => {
  const started = Date.now();
  const arrived = process.hrtime.bigint();
  let caller: { key: string; row: KeyRow };
  try {
    caller = await authenticate(request, false);
  } catch (error) {
    return answerRefusal(reply, error);
  }
  const merchant = caller.row;
  const body = request.body as {
    cart?: Cart;
    signature?: unknown;
    group_config?: { max_size?: number; capture?: string };
  } | null;
  const cart = body?.cart;
  const signature = body?.signature;
  if (!cart || typeof signature !== 'string' || !HEX.test(signature))
    return reply.code(400).send({ error: 'cart and a hex signature are required' });
  const expected = createHmac('sha256', merchant.signing_secret).update(canonicalCart(cart), 'utf8').digest();
  if (!timingSafeEqual(Buffer.from(signature, 'hex'), expected))
    return reply.code(400).send({ error: 'invalid signature' });

  const now = Date.now();
  const sessionId = ids.session();
  const organizerToken = ids.organizerToken();
  const groupToken = ids.groupToken();
  const groupConfig = JSON.stringify({
    minSize: 2,
    maxSize: body?.group_config?.max_size ?? 10,
    defaultMode: 'equal',
    allowedModes: ['equal', 'itemized', 'custom', 'percentage', 'host-pays'],
    expiryHours: 48,
    capture: body?.group_config?.capture ?? 'immediate',
  });
  const origin = request.headers.origin;
  const embedOrigins = caller.row.key_kind === 'publishable' && origin ? JSON.stringify([origin]) : '[]';
  const orderRef = cart.metadata?.order_ref ?? null;
  const createdAt = await transaction(async (client) => {
    // Locks the merchant's row and answers max(now, its newest session's created_at + 1).
    const at = (
      await client.query<{ last_session_at: number }>(SQL.takeCreatedAt, [now, merchant.id, merchant.id])
    ).rows[0]?.last_session_at as number;
    await client.query(SQL.insertSession, [
      sessionId,
      merchant.id,
      'pending',
      JSON.stringify(cart),
      cart.currency,
      cart.total,
      orderRef,
      ids.group(),
      'equal',
      groupConfig,
      null,
      null,
      null,
      null,
      null,
      embedOrigins,
      sha256(organizerToken),
      groupToken,
      merchant.merchant_fee_ppm,
      merchant.consumer_fee_ppm,
      1,
      'auto',
      'en',
      at,
      at,
      at + 48 * HOUR_MS,
      null,
      null,
      null,
      null,
    ]);
    await client.query(SQL.insertMember, [
      ids.member(),
      sessionId,
      merchant.id,
      0,
      'Organizer',
      null,
      cart.total,
      null,
      null,
      ids.share(),
      'pending',
      1,
      null,
      null,
      null,
      at,
      at,
    ]);
    const eventId = ids.event();
    const event = {
      id: eventId,
      type: 'group.created',
      timestamp: iso(at),
      data: {
        session_id: sessionId,
        order_ref: orderRef,
        status: 'pending',
        total_cents: cart.total,
        currency: cart.currency,
        paid_amount: 0,
        pending_amount: cart.total,
        charges: [],
      },
    };
    await client.query(SQL.insertFirstEvent, [
      eventId,
      merchant.id,
      sessionId,
      'group.created',
      JSON.stringify(event),
      at,
      CHANNEL,
    ]);
    return at;
  });
  const answer = {
    session_id: sessionId,
    session_url: `${payUrl}/session/${sessionId}?access=${organizerToken}`,
    status: 'pending',
    expires_at: iso(createdAt + 48 * HOUR_MS),
    merchant_fee_rate: rate(merchant.merchant_fee_ppm),
    consumer_fee_rate: rate(merchant.consumer_fee_ppm),
    group_access_token: groupToken,
  };
  const durationUs = Number((process.hrtime.bigint() - arrived) / 1000n);
  logRequest([
    ids.request(),
    merchant.id,
    'POST',
    '/v1/sessions',
    200,
    durationUs,
    caller.key.slice(0, KEY_PREFIX_LENGTH),
    started,
  ]);
  return answer;
});

app.get('/v1/sessions/:sessionId', async (request, reply) => {
  const started = Date.now();
  const arrived = process.hrtime.bigint();
  let caller: { key: string; row: KeyRow };
  try {
    caller = await authenticate(request, false);
  } catch (error) {
    return answerRefusal(reply, error);
  }
  const { sessionId } = request.params as { sessionId: string };
  const session = (await pool.query<SessionRow>(SQL.sessionById, [sessionId, caller.row.id])).rows[0];
  if (!session) return reply.code(404).send({ error: 'session_not_found' });
  const members = (await pool.query<MemberRow>(SQL.members, [sessionId])).rows;
  const moved = session.status === 'funded' || members.some((m) => m.status !== 'pending');
  const attempts = moved ? (await pool.query<AttemptRow>(SQL.attempts, [sessionId])).rows : [];
  if (moved) await pool.query(SQL.disputes, [sessionId]);
  let paid = 0;
  for (const m of members) if (m.status === 'paid' || m.status === 'authorized') paid += m.amount_cents;
  const succeeded = attempts.filter((a) => a.state === 'succeeded' && a.processor_id !== null);
  const answer = {
    session_id: session.id,
    status: session.status,
    created_at: iso(session.created_at),
    expires_at: iso(session.expires_at),
    order_ref: session.order_ref,
    currency: session.currency,
    total_cents: session.total_cents,
    group: {
      id: session.group_id,
      size: members.length,
      mode: session.group_mode,
      paid_amount: paid,
      pending_amount: session.total_cents - paid,
      members: members.map((m) => ({
        id: m.id,
        name: m.name,
        amount_cents: m.amount_cents,
        status: m.status,
      })),
    },
    charges: succeeded.filter((a) => a.kind === 'charge' || a.kind === 'capture').map((a) => a.processor_id),
    transfer: succeeded.find((a) => a.kind === 'transfer')?.processor_id ?? null,
    disputes: [],
    refunds: [],
    ...(caller.row.key_kind === 'secret' && session.customer
      ? { customer: JSON.parse(session.customer) }
      : {}),
  };
  logRequest([
    ids.request(),
    caller.row.id,
    'GET',
    '/v1/sessions/:sessionId',
    200,
    Number((process.hrtime.bigint() - arrived) / 1000n),
    caller.key.slice(0, KEY_PREFIX_LENGTH),
    started,
  ]);
  return answer;
});

interface PayBody {
  card?: { number?: unknown; exp_month?: unknown; exp_year?: unknown; cvc?: unknown };
}

app.post('/api/v1/shares/:shareId/pay', async (request, reply) => {
  const { shareId } = request.params as { shareId: string };
  const card = (request.body as PayBody | null)?.card;
  if (
    !card ||
    typeof card.number !== 'string' ||
    typeof card.exp_month !== 'number' ||
    typeof card.exp_year !== 'number' ||
    typeof card.cvc !== 'string'
  )
    return reply.code(400).send({ error: 'card {number, exp_month, exp_year, cvc} is required' });
  const fields = { number: card.number, expMonth: card.exp_month, expYear: card.exp_year, cvc: card.cvc };
  const errors = checkCard(fields, new Date());
  if (errors.length > 0) return reply.code(400).send({ error: errors[0] });

  // The share with its merchant's name, in one statement.
  const found = (
    await pool.query<{ id: string; session_id: string; share_id: string; name: string }>(SQL.shareToPay, [
      shareId,
    ])
  ).rows[0];
  if (!found) return reply.code(404).send({ error: 'share_not_found' });
  const merchantName = found.name;

  // 1. Claim, under the session's lock.
  const now = Date.now();
  let claimed: { session: SessionRow; member: MemberRow; attemptId: string; key: string; fee: number };
  try {
    claimed = await transaction(async (client) => {
      const session = (await client.query<SessionRow>(SQL.lockOpen, [now, found.session_id, 'pending', now]))
        .rows[0];
      if (!session) throw new Refused(409, 'session_not_pending');
      const member = (await client.query<MemberRow>(SQL.memberById, [found.id])).rows[0];
      if (!member) throw new Refused(404, 'share_not_found');
      if (member.status !== 'pending' || member.amount_cents === 0)
        throw new Refused(409, 'share_not_pending');
      if (member.paying_attempt_id !== null) throw new Refused(409, 'payment_in_progress');
      const kind =
        (JSON.parse(session.group_config) as { capture?: string }).capture === 'on_funded'
          ? 'authorize'
          : 'charge';
      const fee = feeFor(member.amount_cents, session.consumer_fee_ppm, session.charge_step);
      const earlier =
        (await client.query<{ n: number }>(SQL.countAttempts, [session.id, member.id])).rows[0]?.n ?? 0;
      const attemptId = ids.attempt();
      const key = `gc_${kind}_${member.id}_${earlier + 1}`;
      await client.query(SQL.insertAttempt, [
        attemptId,
        key,
        kind,
        session.merchant_id,
        session.id,
        member.id,
        null,
        member.amount_cents + fee,
        fee,
        session.currency,
        null,
        null,
        'started',
        null,
        null,
        null,
        null,
        null,
        null,
        0,
        now,
        now,
      ]);
      const paying = await client.query(SQL.startPaying, [attemptId, now, session.id, member.id, 'pending']);
      if (paying.rowCount !== 1) throw new Refused(409, 'payment_in_progress');
      const recoverAt = now + RECOVERY_AFTER_MS;
      if (session.settle_after === null || session.settle_after > recoverAt)
        await client.query(SQL.schedule, [recoverAt, session.id]);
      return { session, member, attemptId, key, fee };
    });
  } catch (error) {
    return answerRefusal(reply, error);
  }

  // 2. The sandbox processor: its record, unless its key has one (then that record is read), in one
  // statement with no transaction.
  const digits = normalizeCardNumber(fields.number);
  const brand = cardBrand(digits);
  const last4 = digits.slice(-4);
  const { session: claimedSession, member, attemptId, fee } = claimed;
  const amount = member.amount_cents + fee;
  let chargeId = ids.sandboxCharge();
  const called = Date.now();
  const outcome = {
    status: 'succeeded',
    processorId: chargeId,
    amountCents: amount,
    card: { brand, last4 },
  };
  const kept = await pool.query(SQL.insertOperation, [
    claimed.key,
    chargeId,
    'charge',
    null,
    amount,
    claimedSession.currency,
    'succeeded',
    JSON.stringify({ outcome }),
    null,
    called,
    called,
  ]);
  if (kept.rowCount === 0)
    chargeId = (await pool.query<{ id: string }>(SQL.findOperation, [claimed.key])).rows[0]?.id ?? chargeId;

  // 3. Record, under the session's lock again.
  const session = await transaction(async (client) => {
    const at = Date.now();
    const locked = (await client.query<SessionRow>(SQL.lock, [at, claimedSession.id])).rows[0] as SessionRow;
    const settled = await client.query(SQL.settleAttempt, [
      'succeeded',
      chargeId,
      brand,
      last4,
      null,
      null,
      0,
      at,
      locked.id,
      attemptId,
      'started',
    ]);
    if (settled.rowCount !== 1) throw new Error(`attempt ${attemptId} was settled elsewhere`);
    const moved = await client.query<MemberRow>(SQL.movePaid, [
      'paid',
      at,
      null,
      null,
      locked.id,
      member.id,
      'pending',
      attemptId,
    ]);
    if (moved.rowCount !== 1) throw new Error(`member ${member.id} was not paying`);
    const entry = ids.ledgerEntry();
    const share = member.amount_cents;
    const line = (kind: string, account: string, cents: number) => [
      ids.ledgerLine(),
      entry,
      kind,
      account,
      cents,
      locked.currency,
      locked.merchant_id,
      locked.id,
      member.id,
      attemptId,
      at,
    ];
    await client.query(SQL.insertLines, [
      ...line('charge', 'payer_cards', -(share + fee)),
      ...line('charge', 'session_funds', share),
      ...line('consumer_fee', 'consumer_fees', fee),
    ]);
    const group = (
      await client.query<{ paid_cents: number; paid: number; unpaid: number }>(SQL.sumGroup, [locked.id])
    ).rows[0] as { paid_cents: number; paid: number; unpaid: number };
    if (locked.status === 'pending' && group.paid > 0 && group.unpaid === 0)
      throw new Error(
        'the last share of a group funds its session: not mirrored (bench/postgres.ts skips it)',
      );
    const live = (
      await client.query<AttemptRow & { kind: string }>(SQL.liveAttempts, [
        locked.id,
        'started',
        'succeeded',
        'charge',
        'capture',
      ])
    ).rows;
    const paidMember = moved.rows[0] as MemberRow;
    const eventId = ids.event();
    const charges: string[] = [];
    let next = Number.POSITIVE_INFINITY;
    for (const a of live) {
      if (a.state === 'succeeded' && a.processor_id !== null) charges.push(a.processor_id);
      else if (a.state === 'started')
        next = Math.min(
          next,
          a.updated_at > a.created_at
            ? Math.max(a.created_at + RECOVERY_AFTER_MS, a.updated_at + 60_000)
            : a.created_at + RECOVERY_AFTER_MS,
        );
    }
    const event = {
      id: eventId,
      type: 'group.share_paid',
      timestamp: iso(at),
      data: {
        session_id: locked.id,
        order_ref: locked.order_ref,
        status: locked.status,
        total_cents: locked.total_cents,
        currency: locked.currency,
        paid_amount: group.paid_cents,
        pending_amount: locked.total_cents - group.paid_cents,
        charges,
        member: {
          id: paidMember.id,
          name: paidMember.name,
          amount_cents: paidMember.amount_cents,
          status: paidMember.status,
        },
      },
    };
    await client.query(SQL.insertNextEvent, [
      eventId,
      locked.merchant_id,
      locked.id,
      'group.share_paid',
      JSON.stringify(event),
      at,
      at,
      locked.id,
      CHANNEL,
    ]);
    const settleAfter = next === Number.POSITIVE_INFINITY ? null : next;
    if (settleAfter !== locked.settle_after) await client.query(SQL.schedule, [settleAfter, locked.id]);
    return { ...locked, member: paidMember };
  });

  const cart = JSON.parse(session.cart) as Cart;
  const paidMember = session.member;
  return {
    share_id: paidMember.share_id,
    session_status: session.status,
    merchant_name: merchantName,
    order_ref: session.order_ref,
    currency: session.currency,
    expires_at: iso(session.expires_at),
    member: {
      id: paidMember.id,
      name: paidMember.name,
      amount_cents: paidMember.amount_cents,
      status: paidMember.status,
    },
    status: paidMember.status,
    amount_cents: paidMember.amount_cents,
    consumer_fee_rate: rate(session.consumer_fee_ppm),
    consumer_fee_cents: fee,
    amount_due_cents: amount,
    capture: 'immediate',
    failure: paidMember.failure,
    failure_code: null,
    next_action: null,
    payment: { id: chargeId, kind: 'charge', amount_cents: amount, card_brand: brand, card_last4: last4 },
    cart: { items: cart.items, tax: cart.tax ?? 0, shipping: cart.shipping ?? 0, fees: cart.fees ?? [] },
    split: { mode: session.group_mode, items: null, basis_points: paidMember.basis_points },
  };
});

// The fan-out of committed events (jobs/dispatcher.ts, flows/deliveries.ts): woken by NOTIFY, one round
// at a time; a wake after a quiet spell starts a round at once, and the rounds wakes ask for start at
// least ROUND_GAP_MS apart (so a round takes every event committed meanwhile); a full batch goes round
// again at once.
const ROUND_GAP_MS = 50;
let pumping = false;
let woken = false;
let stopped = false;
let lastRoundAt = Number.NEGATIVE_INFINITY;
let roundTimer: NodeJS.Timeout | undefined;
function wake(): void {
  if (stopped) return;
  if (pumping) {
    woken = true;
    return;
  }
  if (roundTimer !== undefined) return;
  const wait = lastRoundAt + ROUND_GAP_MS - performance.now();
  if (wait <= 0) {
    void pump();
    return;
  }
  roundTimer = setTimeout(() => {
    roundTimer = undefined;
    if (!stopped && !pumping) void pump();
  }, wait);
}

async function fanOut(): Promise<boolean> {
  const taken = await transaction(async (client) => {
    const now = Date.now();
    const locked = (await client.query<{ locked: boolean }>(SQL.fanOutLock, [FAN_OUT_LOCK])).rows[0]?.locked;
    if (!locked) return 0;
    const events = (
      await client.query<{ id: string; merchant_id: string; session_id: string | null; type: string }>(
        SQL.undispatched,
        [FAN_OUT_BATCH],
      )
    ).rows;
    const sessionIds = [...new Set(events.flatMap((e) => (e.session_id ? [e.session_id] : [])))];
    if (sessionIds.length > 0)
      await client.query(
        `select "id", "webhook_url" from "sessions" where "id" in (${list(1, sessionIds.length)})`,
        sessionIds,
      );
    const merchants = new Set<string>();
    for (const event of events) {
      if (merchants.has(event.merchant_id)) continue;
      merchants.add(event.merchant_id);
      // No endpoint is registered in the bench: no delivery to queue.
      await client.query(SQL.endpoints, [event.merchant_id]);
    }
    const mailing = events.filter((e) => e.type === 'group.share_paid').map((e) => e.id);
    if (mailing.length > 0) {
      const found = (
        await client.query<{ session_id: string; payload: string }>(
          `select "id", "type", "session_id", "payload" from "events" where "id" in (${list(1, mailing.length)}) and "session_id" is not null`,
          mailing,
        )
      ).rows;
      // The members the events name, and each session's organizer.
      const named = found.flatMap((e) => {
        const id = (JSON.parse(e.payload) as { data: { member?: { id: string } } }).data.member?.id;
        return id === undefined ? [] : [id];
      });
      const sessions = [...new Set(found.map((e) => e.session_id))];
      if (sessions.length > 0) {
        await client.query(
          `select "id", "merchant_id", "customer" from "sessions" where "id" in (${list(1, sessions.length)})`,
          sessions,
        );
        const n = sessions.length;
        await client.query(
          named.length === 0
            ? `select "id", "session_id", "email", "is_organizer", "status" from "members" where "session_id" in (${list(1, n)}) and "is_organizer" = $${n + 1}`
            : `select "id", "session_id", "email", "is_organizer", "status" from "members" where "session_id" in (${list(1, n)}) and ("is_organizer" = $${n + 1} or "id" in (${list(n + 2, named.length)}))`,
          [...sessions, 1, ...named],
        );
      }
      // The bench's members have no address: no mail to queue.
    }
    if (events.length > 0)
      await client.query(
        `update "events" set "dispatched_at" = $1 where "id" in (${list(2, events.length)})`,
        [now, ...events.map((e) => e.id)],
      );
    return events.length;
  });
  return taken === FAN_OUT_BATCH;
}

async function pump(): Promise<void> {
  pumping = true;
  woken = false;
  try {
    let more: boolean;
    do {
      lastRoundAt = performance.now();
      more = await fanOut();
      const now = Date.now();
      const holder = `${process.pid}.${randomUUID()}`;
      const urls = (await pool.query(SQL.takeDueUrls, [holder, now + 26_250, now, now, 32, now, now])).rows;
      if (urls.length > 0) throw new Error('no delivery URL is expected in the bench');
      const at = Date.now();
      await pool.query(SQL.heldElsewhere, [at, at]);
    } while (more && !stopped);
  } catch (error) {
    process.stderr.write(`fan-out failed: ${(error as Error).message}\n`);
  } finally {
    pumping = false;
  }
  if (woken) wake();
}

const listener = new pg.Client({ connectionString: databaseUrl });
listener.on('notification', wake);
listener.on('error', () => undefined);
await listener.connect();
await listener.query(`listen ${CHANNEL}`);
// The service's fallback poll (WEBHOOK_POLL_INTERVAL_MS, 1 s by default).
const poll = setInterval(wake, Number(process.env.WEBHOOK_POLL_INTERVAL_MS) || 1000);
wake();

function close() {
  stopped = true;
  clearInterval(poll);
  clearTimeout(roundTimer);
  void app.close().then(async () => {
    while (pumping) await new Promise((resolve) => setTimeout(resolve, 5));
    await writing;
    await listener.end().catch(() => undefined);
    await pool.end().catch(() => undefined);
    process.exit(0);
  });
}
process.once('SIGTERM', close);
process.once('SIGINT', close);
await app.listen({ port, host: '127.0.0.1' });
