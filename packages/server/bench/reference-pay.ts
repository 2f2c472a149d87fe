// The same-writes reference for POST /api/v1/shares/{shareId}/pay (sandbox, capture immediate), mounted
// by reference-server.ts in its full mode: bare Fastify doing the service's writes for a paid share, on
// the service's schema, with raw better-sqlite3 prepared statements, in the service's shape: two
// transactions around a "processor" step that writes its own sandbox_operations row, on its own.
//
//   claim:     select the member by share; lock the session (update updated_at, returning the row);
//              count the member's attempts (the try number); insert the attempt; mark the member
//              paying; set settle_after (recovery)
//   processor: its sandbox_operations row, inserted unless its key has one (on conflict do nothing; the
//              key's record read only then), no transaction
//   record:    lock the session; settle the attempt; move the member to paid; 3 ledger lines; the
//              group's paid total and shares still owing, and its charge ids (what the event reports
//              and whether this payment funds the session); the group.share_paid event, its time read
//              by its insert (after the session's newest event: the outbox order); settle_after
//   fan-out:   what the service's dispatcher does for each event it commits (one transaction for the
//              events committed meanwhile): take the undispatched events in order, read their sessions'
//              webhook_url and their merchant's endpoints, read the events' payloads and the addresses of
//              the organizer and member each names (for the receipt mail), mark them dispatched. The
//              bench's merchant has no endpoint and its payers give no address, so no delivery or mail
//              row is written here, nor by the service.
//
//   funding:   the last share of a group (1 pay in 50) funds the session in the record's transaction,
//              as the service does: the session funded (its transfer due now), the merchant's fees
//              (read from its row) as two ledger lines, the group.funded event; then, in the same request,
//              the transfer: claim (lock; the fees booked; the merchant's account; the attempt;
//              settle_after), the processor's record (one insert), record (lock; settle the
//              attempt; 2 ledger lines; the session settled)
//
// The card is checked as the service checks it (domain/card.ts) and the ids come from the service's
// generator. It keeps no checks the service makes beyond those (a share not pending, a payment in
// flight, a closed session: 409) and reads nothing the brief above does not list. It reads, as
// aggregates, what the rules need from the group under the session's lock (another process may have
// changed it): this is what a hand-written pay path would do. POST /bench/seed makes the sessions and
// groups to pay.
import type { Cart } from '@group-checkout/node';
import type SQLite from 'better-sqlite3';
import type { FastifyInstance } from 'fastify';
import { cardBrand, checkCard, normalizeCardNumber } from '../src/domain/card.ts';
import { ids } from '../src/ids.ts';

/** What a seeded group looks like: one session of `members` shares, split as run.ts splits it. */
interface SeedBody {
  sessions: number;
  members: number;
  cart: Cart;
}

interface SessionRow {
  id: string;
  merchant_id: string;
  status: string;
  cart: string;
  currency: string;
  total_cents: number;
  order_ref: string | null;
  consumer_fee_ppm: number;
  merchant_fee_ppm: number;
  expires_at: number;
  settle_after: number | null;
}

interface MemberRow {
  id: string;
  session_id: string;
  name: string;
  amount_cents: number;
  share_id: string;
  status: string;
  paying_attempt_id: string | null;
  failure: string | null;
}

interface PayBody {
  card?: { number?: unknown; exp_month?: unknown; exp_year?: unknown; cvc?: unknown };
}

const RECOVERY_AFTER_MS = 90_000;
const GROUP_CONFIG = JSON.stringify({
  minSize: 2,
  maxSize: 50,
  defaultMode: 'equal',
  allowedModes: ['equal', 'itemized', 'custom', 'percentage', 'host-pays'],
  expiryHours: 48,
  capture: 'immediate',
});

/** round_half_up(share × ppm / 1e6), as domain/fees.ts. */
const feeFor = (cents: number, ppm: number) => Math.floor((cents * ppm + 500_000) / 1_000_000);

class Refused extends Error {}

export function registerPay(app: FastifyInstance, db: SQLite.Database, merchantId: string): void {
  const findMember = db.prepare('select * from members where share_id = ?');
  const lockOpen = db.prepare(
    `update sessions set updated_at = ? where id = ? and status = 'pending' and expires_at > ? returning *`,
  );
  const insertAttempt = db.prepare(`insert into attempts (id, idempotency_key, kind, merchant_id, session_id,
    member_id, target_id, amount_cents, fee_cents, currency, payment_method, state, processor_id, card_brand,
    card_last4, decline_code, error, created_at, updated_at)
    values (?, ?, 'charge', ?, ?, ?, null, ?, ?, ?, null, 'started', null, null, null, null, null, ?, ?)`);
  const startPaying = db.prepare(`update members set paying_attempt_id = ?, updated_at = ?
    where id = ? and status = 'pending' and paying_attempt_id is null`);
  const schedule = db.prepare('update sessions set settle_after = ? where id = ?');
  const insertOperation = db.prepare(`insert into sandbox_operations (idempotency_key, id, kind, target_id,
    amount_cents, currency, state, outcome, created_at, updated_at)
    values (?, ?, 'charge', null, ?, ?, 'succeeded', ?, ?, ?)
    on conflict (idempotency_key) do nothing returning idempotency_key`);
  const lock = db.prepare('update sessions set updated_at = ? where id = ? returning *');
  const settleAttempt = db.prepare(`update attempts set state = 'succeeded', processor_id = ?, card_brand = ?,
    card_last4 = ?, decline_code = null, error = null, updated_at = ? where id = ? and state = 'started'`);
  const movePaid = db.prepare(`update members set status = 'paid', updated_at = ?, failure = null,
    paying_attempt_id = null where id = ? and status = 'pending' and paying_attempt_id = ?`);
  const insertLines =
    db.prepare(`insert into ledger_lines (id, entry_id, kind, account, amount_cents, currency,
    merchant_id, session_id, member_id, attempt_id, created_at)
    values (?, ?, 'charge', 'payer_cards', ?, ?, ?, ?, ?, ?, ?),
      (?, ?, 'charge', 'session_funds', ?, ?, ?, ?, ?, ?, ?),
      (?, ?, 'consumer_fee', 'consumer_fees', ?, ?, ?, ?, ?, ?, ?)`);
  // The event's time is max(now, the session's newest event + 1), read by the insert itself.
  const insertEvent = db.prepare(`insert into events (id, merchant_id, session_id, type, payload, created_at)
    select ?, ?, ?, 'group.share_paid', ?,
      case when max(created_at) >= ? then max(created_at) + 1 else ? end from events where session_id = ?`);

  const countAttempts = db
    .prepare('select count(*) from attempts where session_id = ? and member_id = ?')
    .pluck();
  const findOperation = db.prepare('select * from sandbox_operations where idempotency_key = ?');
  /** The processor's record by its key, once: the key's earlier record read only when it had one. */
  const keepOperation = (statement: SQLite.Statement, ...values: unknown[]) => {
    if (statement.get(...values) === undefined) findOperation.get(values[0]);
  };
  const groupTotals = db.prepare(`select
      coalesce(sum(case when status in ('paid', 'authorized') then amount_cents else 0 end), 0) as paid,
      coalesce(sum(case when amount_cents > 0 and (status <> 'paid' or paying_attempt_id is not null) then 1 else 0 end), 0) as owing
    from members where session_id = ?`);
  const chargeIds = db
    .prepare(`select processor_id from attempts where session_id = ? and state = 'succeeded'
      and kind in ('charge', 'capture') order by created_at, id`)
    .pluck();
  const fundSession = db.prepare(`update sessions set status = 'funded', funded_at = ?, updated_at = ?,
    settle_after = ? where id = ? and status = 'pending'`);
  const merchantFees = db.prepare(
    'select fx_fee_ppm, payout_mode, payout_currency from merchants where id = ?',
  );
  const insertFeeLines =
    db.prepare(`insert into ledger_lines (id, entry_id, kind, account, amount_cents, currency,
    merchant_id, session_id, member_id, attempt_id, created_at)
    values (?, ?, 'merchant_fee', 'session_funds', ?, ?, ?, ?, null, null, ?),
      (?, ?, 'merchant_fee', 'merchant_fees', ?, ?, ?, ?, null, null, ?)`);
  const insertFundedEvent =
    db.prepare(`insert into events (id, merchant_id, session_id, type, payload, created_at)
    select ?, ?, ?, 'group.funded', ?,
      case when max(created_at) >= ? then max(created_at) + 1 else ? end from events where session_id = ?`);
  const bookedFees = db
    .prepare(`select coalesce(sum(amount_cents), 0) from ledger_lines where session_id = ?
      and account in ('merchant_fees', 'fx_fees')`)
    .pluck();
  const destination = db.prepare('select processor_account_id from merchants where id = ?').pluck();
  const insertTransfer = db.prepare(`insert into attempts (id, idempotency_key, kind, merchant_id, session_id,
    member_id, target_id, amount_cents, fee_cents, currency, payment_method, destination, state,
    processor_id, card_brand, card_last4, decline_code, error, created_at, updated_at)
    values (?, ?, 'transfer', ?, ?, null, null, ?, 0, ?, null, ?, 'started', null, null, null, null, null, ?, ?)`);
  const insertTransferOperation = db.prepare(`insert into sandbox_operations (idempotency_key, id, kind,
    target_id, amount_cents, currency, state, outcome, created_at, updated_at)
    values (?, ?, 'transfer', null, ?, ?, 'succeeded', ?, ?, ?)
    on conflict (idempotency_key) do nothing returning idempotency_key`);
  const settleTransfer = db.prepare(`update attempts set state = 'succeeded', processor_id = ?, updated_at = ?
    where id = ? and state = 'started'`);
  const insertTransferLines =
    db.prepare(`insert into ledger_lines (id, entry_id, kind, account, amount_cents, currency,
    merchant_id, session_id, member_id, attempt_id, created_at)
    values (?, ?, 'transfer', 'session_funds', ?, ?, ?, ?, null, ?, ?),
      (?, ?, 'transfer', 'merchant_payouts', ?, ?, ?, ?, null, ?, ?)`);
  const settled = db.prepare('update sessions set settled_at = ?, settle_after = null where id = ?');

  interface Claimed {
    session: SessionRow;
    member: MemberRow;
    attemptId: string;
    key: string;
    fee: number;
    now: number;
  }

  const claim = db.transaction((shareId: string, now: number): Claimed => {
    const member = findMember.get(shareId) as MemberRow | undefined;
    if (!member) throw new Refused('share_not_found');
    const session = lockOpen.get(now, member.session_id, now) as SessionRow | undefined;
    if (!session) throw new Refused('session_not_pending');
    if (member.status !== 'pending' || member.amount_cents === 0) throw new Refused('share_not_pending');
    if (member.paying_attempt_id !== null) throw new Refused('payment_in_progress');
    const fee = feeFor(member.amount_cents, session.consumer_fee_ppm);
    const attemptId = ids.attempt();
    const key = `gc_charge_${member.id}_${(countAttempts.get(session.id, member.id) as number) + 1}`;
    insertAttempt.run(
      attemptId,
      key,
      session.merchant_id,
      session.id,
      member.id,
      member.amount_cents + fee,
      fee,
      session.currency,
      now,
      now,
    );
    if (startPaying.run(attemptId, now, member.id).changes !== 1) throw new Refused('payment_in_progress');
    const recoverAt = now + RECOVERY_AFTER_MS;
    if (session.settle_after === null || session.settle_after > recoverAt)
      schedule.run(recoverAt, session.id);
    return { session, member, attemptId, key, fee, now };
  });

  const charge = (key: string, id: string, amount: number, currency: string, outcome: string) => {
    const now = Date.now();
    keepOperation(insertOperation, key, id, amount, currency, outcome, now, now);
  };

  const record = db.transaction((c: Claimed, chargeId: string, brand: string, last4: string) => {
    const now = Date.now();
    const session = lock.get(now, c.session.id) as SessionRow;
    settleAttempt.run(chargeId, brand, last4, now, c.attemptId);
    if (movePaid.run(now, c.member.id, c.attemptId).changes !== 1)
      throw new Error(`member ${c.member.id} was not paying`);
    const { merchant_id: merchant, id: sessionId, currency } = session;
    const entry = ids.ledgerEntry();
    const share = c.member.amount_cents;
    const memberId = c.member.id;
    insertLines.run(
      ...[
        [ids.ledgerLine(), entry, -(share + c.fee)],
        [ids.ledgerLine(), entry, share],
        [ids.ledgerLine(), entry, c.fee],
      ].flatMap((line) => [...line, currency, merchant, sessionId, memberId, c.attemptId, now]),
    );
    const totals = groupTotals.get(sessionId) as { paid: number; owing: number };
    const total = { paid: totals.paid, charges: chargeIds.all(sessionId) as string[] };
    const event = {
      id: ids.event(),
      type: 'group.share_paid',
      timestamp: new Date(now).toISOString(),
      data: {
        session_id: sessionId,
        order_ref: session.order_ref,
        status: session.status,
        total_cents: session.total_cents,
        currency,
        paid_amount: total.paid,
        pending_amount: session.total_cents - total.paid,
        charges: total.charges,
        member: { id: memberId, name: c.member.name, amount_cents: share, status: 'paid' },
      },
    };
    insertEvent.run(event.id, merchant, sessionId, JSON.stringify(event), now, now, sessionId);
    if (totals.owing > 0 || session.status !== 'pending') {
      schedule.run(null, sessionId);
      return { session, funds: false };
    }
    // The last share: the session is funded, its fees booked, group.funded written; the transfer is due.
    fundSession.run(now, now, now, sessionId);
    const payout = merchantFees.get(merchant) as { fx_fee_ppm: number };
    const fee = feeFor(session.total_cents, session.merchant_fee_ppm);
    const feeEntry = ids.ledgerEntry();
    insertFeeLines.run(
      ...[
        [ids.ledgerLine(), feeEntry, -fee],
        [ids.ledgerLine(), feeEntry, fee],
      ].flatMap((line) => [...line, currency, merchant, sessionId, now]),
    );
    const funded = {
      id: ids.event(),
      type: 'group.funded',
      timestamp: new Date(now).toISOString(),
      data: {
        ...event.data,
        member: undefined,
        status: 'funded',
        fx_fee_ppm: payout.fx_fee_ppm,
      },
    };
    insertFundedEvent.run(funded.id, merchant, sessionId, JSON.stringify(funded), now, now, sessionId);
    return { session: { ...session, status: 'funded' }, funds: true };
  });

  // The transfer of a funded session, as the service's settling runs it within the last pay's request:
  // claim, the processor's record, record, each its own transaction.
  const claimTransfer = db.transaction((sessionId: string) => {
    const now = Date.now();
    const session = lock.get(now, sessionId) as SessionRow;
    const amount = session.total_cents - (bookedFees.get(sessionId) as number);
    const attemptId = ids.attempt();
    const key = `gc_transfer_${sessionId}_1`;
    insertTransfer.run(
      attemptId,
      key,
      session.merchant_id,
      sessionId,
      amount,
      session.currency,
      destination.get(session.merchant_id) as string | null,
      now,
      now,
    );
    schedule.run(now + RECOVERY_AFTER_MS, sessionId);
    return { attemptId, key, amount, session };
  });
  const transferOperation = (key: string, id: string, amount: number, currency: string, outcome: string) => {
    const now = Date.now();
    keepOperation(insertTransferOperation, key, id, amount, currency, outcome, now, now);
  };
  const recordTransfer = db.transaction(
    (t: { attemptId: string; amount: number; session: SessionRow }, transferId: string) => {
      const now = Date.now();
      const session = lock.get(now, t.session.id) as SessionRow;
      settleTransfer.run(transferId, now, t.attemptId);
      const entry = ids.ledgerEntry();
      insertTransferLines.run(
        ...[
          [ids.ledgerLine(), entry, -t.amount],
          [ids.ledgerLine(), entry, t.amount],
        ].flatMap((line) => [...line, session.currency, session.merchant_id, session.id, t.attemptId, now]),
      );
      settled.run(now, session.id);
    },
  );
  const transfer = (sessionId: string) => {
    const t = claimTransfer(sessionId);
    const transferId = ids.sandboxTransfer();
    const outcome = { status: 'succeeded', processorId: transferId, amountCents: t.amount };
    transferOperation(t.key, transferId, t.amount, t.session.currency, JSON.stringify({ outcome }));
    recordTransfer(t, transferId);
  };

  // The fan-out, as the service's dispatcher runs it: woken by each commit of an event, one transaction
  // for every event committed before it runs.
  const takeEvents = db.prepare(`select id, merchant_id, session_id, type from events
    where dispatched_at is null order by seq limit 100`);
  const endpointsOf = db.prepare(`select * from webhook_endpoints where merchant_id = ? and revoked_at is null
    order by created_at, id`);
  const prepared = new Map<string, SQLite.Statement>();
  /** A statement prepared on its first use (its text depends on the lengths of its lists). */
  const once = (text: string) => {
    let statement = prepared.get(text);
    if (!statement) {
      statement = db.prepare(text);
      prepared.set(text, statement);
    }
    return statement;
  };
  const list = (n: number) => `(${Array(n).fill('?').join(', ')})`;
  const fanOut = db.transaction((): number => {
    const events = takeEvents.all() as {
      id: string;
      merchant_id: string;
      session_id: string;
      type: string;
    }[];
    if (events.length === 0) return 0;
    const ids = events.map((e) => e.id);
    const sessionIds = [...new Set(events.map((e) => e.session_id))];
    once(`select id, webhook_url from sessions where id in ${list(sessionIds.length)}`).all(...sessionIds);
    for (const merchant of new Set(events.map((e) => e.merchant_id))) endpointsOf.all(merchant);
    const mailing = once(
      `select id, type, session_id, payload from events where id in ${list(ids.length)} and session_id is not null`,
    ).all(...ids) as { payload: string }[];
    const memberIds = mailing.flatMap((e) => {
      const id = (JSON.parse(e.payload) as { data: { member?: { id: string } } }).data.member?.id;
      return id === undefined ? [] : [id];
    });
    once(`select id, merchant_id, customer from sessions where id in ${list(sessionIds.length)}`).all(
      ...sessionIds,
    );
    once(
      `select id, session_id, email, is_organizer, status from members where session_id in ${list(sessionIds.length)}
        and (is_organizer = 1 or id in ${list(memberIds.length)})`,
    ).all(...sessionIds, ...memberIds);
    once(`update events set dispatched_at = ? where id in ${list(ids.length)}`).run(Date.now(), ...ids);
    return events.length;
  });
  let fanOutQueued = false;
  const fanOutSoon = () => {
    if (fanOutQueued) return;
    fanOutQueued = true;
    setImmediate(() => {
      fanOutQueued = false;
      while (fanOut() === 100);
    });
  };

  app.post('/api/v1/shares/:shareId/pay', async (request, reply) => {
    const { shareId } = request.params as { shareId: string };
    const card = (request.body as PayBody | null)?.card;
    if (
      !card ||
      typeof card.number !== 'string' ||
      typeof card.exp_month !== 'number' ||
      typeof card.exp_year !== 'number' ||
      typeof card.cvc !== 'string'
    ) {
      return reply.code(400).send({ error: 'card {number, exp_month, exp_year, cvc} is required' });
    }
    const fields = { number: card.number, expMonth: card.exp_month, expYear: card.exp_year, cvc: card.cvc };
    const errors = checkCard(fields, new Date());
    if (errors.length > 0) return reply.code(400).send({ error: errors[0] });

    let claimed: Claimed;
    try {
      claimed = claim(shareId, Date.now());
    } catch (error) {
      if (error instanceof Refused) return reply.code(409).send({ error: error.message });
      throw error;
    }
    // The processor: its own record in its own transaction (the test card 4242… always succeeds).
    const digits = normalizeCardNumber(fields.number);
    const brand = cardBrand(digits);
    const last4 = digits.slice(-4);
    const chargeId = ids.sandboxCharge();
    const amount = claimed.member.amount_cents + claimed.fee;
    const outcome = {
      status: 'succeeded',
      processorId: chargeId,
      amountCents: amount,
      card: { brand, last4 },
    };
    charge(claimed.key, chargeId, amount, claimed.session.currency, JSON.stringify({ outcome }));
    const { session, funds } = record(claimed, chargeId, brand, last4);
    if (funds) transfer(session.id);
    fanOutSoon();

    const cart = JSON.parse(session.cart) as Cart;
    const member = claimed.member;
    return {
      request_id: ids.request(),
      share_id: member.share_id,
      session_id: session.id,
      session_status: session.status,
      merchant_name: 'Reference',
      order_ref: session.order_ref,
      currency: session.currency,
      expires_at: new Date(session.expires_at).toISOString(),
      member: { id: member.id, name: member.name, amount_cents: member.amount_cents, status: 'paid' },
      consumer_fee_cents: claimed.fee,
      amount_due_cents: amount,
      capture: 'immediate',
      failure: null,
      payment: { id: chargeId, kind: 'charge', amount_cents: amount, card_brand: brand, card_last4: last4 },
      cart: { items: cart.items, tax: cart.tax ?? 0, shipping: cart.shipping ?? 0, fees: cart.fees ?? [] },
    };
  });

  // Set-up, not measured: open sessions with their groups, as the service's create and group set-up
  // leave them. Answers the share ids, session by session.
  const insertSession =
    db.prepare(`insert into sessions (id, merchant_id, status, cart, currency, total_cents,
      order_ref, group_id, group_mode, group_config, group_set_up_at, customer, success_url, cancel_url,
      webhook_url, embed_origins, organizer_token_hash, group_token, merchant_fee_ppm, consumer_fee_ppm,
      created_at, updated_at, expires_at, closed_at) values (?, ?, 'pending', ?, ?, ?, ?, ?, 'custom', ?, ?,
      null, null, null, null, '[]', ?, ?, 20100, 10000, ?, ?, ?, null)`);
  const insertMember = db.prepare(`insert into members (id, session_id, merchant_id, position, name, email,
      amount_cents, basis_points, items, share_id, status, is_organizer, last_reminded_at, created_at, updated_at)
      values (?, ?, ?, ?, ?, null, ?, null, null, ?, 'pending', ?, null, ?, ?)`);
  const lastCreated = db.prepare('select max(created_at) from sessions where merchant_id = ?').pluck();
  const seed = db.transaction((body: SeedBody): string[] => {
    const shares: string[] = [];
    const { cart, members } = body;
    const each = Math.floor(cart.total / members);
    // created_at is unique per merchant (the listing's order), as the service's create keeps it.
    let now = Math.max(Date.now(), ((lastCreated.get(merchantId) as number | null) ?? 0) + 1);
    for (let s = 0; s < body.sessions; s++, now++) {
      const id = ids.session();
      insertSession.run(
        id,
        merchantId,
        JSON.stringify(cart),
        cart.currency,
        cart.total,
        cart.metadata?.order_ref ?? null,
        ids.group(),
        GROUP_CONFIG,
        now,
        ids.organizerToken(),
        ids.groupToken(),
        now,
        now,
        now + 48 * 3_600_000,
      );
      for (let m = 0; m < members; m++) {
        const shareId = ids.share();
        const amount = m === 0 ? cart.total - each * (members - 1) : each;
        insertMember.run(
          ids.member(),
          id,
          merchantId,
          m,
          `Member ${m}`,
          amount,
          shareId,
          m === 0 ? 1 : 0,
          now,
          now,
        );
        shares.push(shareId);
      }
    }
    return shares;
  });
  app.post('/bench/seed', async (request) => ({ shares: seed(request.body as SeedBody) }));
}
