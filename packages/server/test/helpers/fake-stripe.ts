// A fake of Stripe's API for the calls the Stripe processor makes (processor/stripe.ts), on 127.0.0.1 at a
// random port, for the real `stripe` client to talk to over plain HTTP. It answers like Stripe: form-encoded
// requests, JSON objects shaped like Stripe's, errors as {error: {type, code, decline_code, message}} with
// Stripe's HTTP statuses, and idempotency keys honoured (the same key and parameters answer the saved
// answer; the same key with other parameters is an idempotency_error). It records every request, and can be
// told to misbehave: answer an error, answer 500, hang, or lose its answer after doing the work.
//
// Amounts are checked as Stripe checks them, by the fake's own table (not the service's): a three-decimal
// amount must end in 0, an ISK or UGX amount (hundredths that are always 00) must be divisible by 100, and
// a PaymentIntent below the currency's smallest charge is amount_too_small.
//
// Payment methods behave like Stripe's test ones of the same names (pm_card_visa succeeds,
// pm_card_chargeDeclinedInsufficientFunds is declined with insufficient_funds, …), plus one of its own,
// pm_fake_declinedAtCapture, whose hold is declined when captured.
//
// Connect onboarding: accounts are made (type express, standard or custom) and account_onboarding links
// to them answered as Stripe answers them, with a URL on the fake itself whose page links back to the
// link's return_url (GET /setup/…, no key needed, as a person's browser opens it).
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Params = { [key: string]: string | Params | (string | Params)[] };

export interface RecordedRequest {
  method: string;
  /** The path without the query. */
  path: string;
  /** The form body (POST) or the query (GET), nested as Stripe reads it: metadata[session_id] → metadata.session_id. */
  params: Params;
  idempotencyKey: string | undefined;
  authorization: string | undefined;
  userAgent: string | undefined;
  /** Answered from the idempotency store rather than run. */
  replayed: boolean;
}

interface StripeErrorBody {
  type: string;
  code?: string;
  decline_code?: string;
  message: string;
  [key: string]: unknown;
}

type Json = Record<string, unknown>;

interface CardRefusal {
  code: string;
  decline_code?: string;
  message: string;
}

/** What a misbehaving request gets instead of the normal answer. */
export type Misbehaviour =
  /** 500 api_error, before anything is done (not saved under the key: a retry runs the request). */
  | { kind: 'error500' }
  /** This status and error, before anything is done (not saved under the key). */
  | { kind: 'error'; status: number; error: StripeErrorBody }
  /** No answer at all, and nothing done: the request never reached Stripe's endpoint. */
  | { kind: 'hang' }
  /** The request is done and its answer saved under its key, but the answer never comes back. */
  | { kind: 'hang-after' }
  /** The request is done, then its answer (a 200 object) is changed before it is saved and sent. */
  | { kind: 'patch'; patch: Json };

export interface MisbehaveRule {
  method?: string;
  /** Matched against the path (without the query). */
  path?: RegExp;
  /** How many matching requests misbehave (default: every one). */
  times?: number;
  answer: Misbehaviour;
}

export interface FakeStripe {
  host: string;
  port: number;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  /** Stripe's objects, by id: payment_intent, charge, refund, transfer, dispute, account, account_link. */
  objects: Map<string, Json>;
  /** The objects of one kind, in the order made. */
  all(
    object: 'payment_intent' | 'charge' | 'refund' | 'transfer' | 'dispute' | 'account' | 'account_link',
  ): Json[];
  misbehave(rule: MisbehaveRule): void;
  /**
   * The payer completes (or fails) the 3-D Secure step of a PaymentIntent in requires_action, as Stripe.js
   * handleNextAction would: it becomes succeeded (requires_capture for a hold), or waits for another
   * payment method with payment_intent_authentication_failure. Answers the PaymentIntent.
   */
  authenticate(paymentIntentId: string, outcome: 'succeed' | 'fail'): Json;
  /** A refund Stripe took fails later (the card was closed): status failed, the charge whole again. */
  failRefund(refundId: string, reason?: string): Json;
  /** The status new refunds are answered with: `succeeded` (the default), or `pending` as card refunds often are. */
  refundStatus: 'succeeded' | 'pending';
  /** A refund Stripe took pending reaches the card: status succeeded. */
  succeedRefund(refundId: string): Json;
  /** The payer's bank opens a dispute on the PaymentIntent's charge, for all of it. */
  openDispute(paymentIntentId: string, reason?: string): Json;
  /** The card network decides a dispute. */
  closeDispute(disputeId: string, status: 'won' | 'lost'): Json;
  close(): Promise<void>;
}

/** The only secret key the fake takes; any other is answered 401, as Stripe answers a wrong key. */
export const FAKE_SECRET_KEY = 'sk_test_fake0group0checkout';

/** The card and the refusal of each test payment method; a payment method not listed is pm_card_visa. */
const PAYMENT_METHODS: Record<string, { brand: string; last4: string; refusal?: CardRefusal }> = {
  pm_card_visa: { brand: 'visa', last4: '4242' },
  pm_card_mastercard: { brand: 'mastercard', last4: '4444' },
  pm_card_chargeDeclined: {
    brand: 'visa',
    last4: '0002',
    refusal: { code: 'card_declined', decline_code: 'generic_decline', message: 'Your card was declined.' },
  },
  pm_card_chargeDeclinedInsufficientFunds: {
    brand: 'visa',
    last4: '9995',
    refusal: {
      code: 'card_declined',
      decline_code: 'insufficient_funds',
      message: 'Your card has insufficient funds.',
    },
  },
  pm_card_chargeDeclinedLostCard: {
    brand: 'visa',
    last4: '9987',
    refusal: { code: 'card_declined', decline_code: 'lost_card', message: 'Your card was declined.' },
  },
  pm_card_chargeDeclinedStolenCard: {
    brand: 'visa',
    last4: '9979',
    refusal: { code: 'card_declined', decline_code: 'stolen_card', message: 'Your card was declined.' },
  },
  pm_card_chargeDeclinedExpiredCard: {
    brand: 'visa',
    last4: '0069',
    refusal: { code: 'expired_card', decline_code: 'expired_card', message: 'Your card has expired.' },
  },
  pm_card_chargeDeclinedIncorrectCvc: {
    brand: 'visa',
    last4: '0127',
    refusal: {
      code: 'incorrect_cvc',
      decline_code: 'incorrect_cvc',
      message: "Your card's security code is incorrect.",
    },
  },
  pm_card_chargeDeclinedProcessingError: {
    brand: 'visa',
    last4: '0119',
    refusal: {
      code: 'processing_error',
      message: 'An error occurred while processing your card. Try again in a little bit.',
    },
  },
  pm_card_authenticationRequired: { brand: 'visa', last4: '3184' },
  pm_fake_declinedAtCapture: { brand: 'visa', last4: '0341' },
};

class Refusal {
  constructor(
    readonly status: number,
    readonly error: StripeErrorBody,
  ) {}
}

const missing = (what: string, id: string) =>
  new Refusal(404, {
    type: 'invalid_request_error',
    code: 'resource_missing',
    message: `No such ${what}: '${id}'`,
    param: 'id',
  });

const invalid = (code: string, message: string) =>
  new Refusal(400, { type: 'invalid_request_error', code, message });

/** Stripe's three-decimal currencies, and those it counts in hundredths that must be 00. */
const THREE_DECIMAL = new Set(['bhd', 'jod', 'kwd', 'omr', 'tnd']);
const WHOLE_HUNDREDTHS = new Set(['isk', 'ugx']);

/**
 * The smallest PaymentIntent, in Stripe's unit, for the currencies the tests charge: Stripe's table where
 * it has one, else about US$0.50 converted (ISK at ~140 a dollar, in hundredths; KWD at ~0.31; MGA at ~4,600).
 */
const SMALLEST: Record<string, number> = {
  usd: 50,
  eur: 50,
  gbp: 30,
  jpy: 50,
  isk: 7000,
  kwd: 160,
  mga: 2300,
};

/** Refuses an amount Stripe would not take in `currency` (`param` names it in the error). */
function checkAmount(currency: unknown, amount: number, param: string): void {
  const code = String(currency);
  if (THREE_DECIMAL.has(code) && amount % 10 !== 0) {
    throw invalid(
      'invalid_amount',
      `Invalid ${param}: ${code.toUpperCase()} amounts must have 0 as their last digit (round to the nearest ten).`,
    );
  }
  if (WHOLE_HUNDREDTHS.has(code) && amount % 100 !== 0) {
    throw invalid(
      'invalid_amount',
      `Invalid amount. Currency ${code.toUpperCase()} has become effectively zero-decimal and charged amounts must be evenly divisible by 100.`,
    );
  }
}

/** Parses a form body or query the way Stripe reads it: a[b]=1 → {a: {b: '1'}}, a[0]=x → {a: ['x']}. */
export function parseForm(text: string): Params {
  const root: Params = {};
  for (const [fullKey, value] of new URLSearchParams(text)) {
    const parts = /^([^[]+)((?:\[[^\]]*\])*)$/.exec(fullKey);
    const path = parts
      ? [parts[1] as string, ...[...(parts[2] ?? '').matchAll(/\[([^\]]*)\]/g)].map((m) => m[1] as string)]
      : [fullKey];
    let node: Params = root;
    path.forEach((part, i) => {
      if (i === path.length - 1) {
        node[part] = value;
        return;
      }
      node[part] ??= {};
      node = node[part] as Params;
    });
  }
  return arraysOf(root) as Params;
}

/** {0: a, 1: b} → [a, b], all the way down. */
function arraysOf(node: string | Params | (string | Params)[]): string | Params | (string | Params)[] {
  if (typeof node === 'string' || Array.isArray(node)) return node;
  const keys = Object.keys(node);
  const converted = Object.fromEntries(keys.map((k) => [k, arraysOf(node[k] as Params)]));
  if (keys.length > 0 && keys.every((k, i) => k === String(i)))
    return keys.map((k) => converted[k] as string | Params);
  return converted as Params;
}

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

export async function startFakeStripe(): Promise<FakeStripe> {
  const requests: RecordedRequest[] = [];
  const objects = new Map<string, Json>();
  const rules: MisbehaveRule[] = [];
  /** Idempotency-Key → what its first request was and answered. */
  const saved = new Map<
    string,
    { method: string; path: string; params: string; status: number; body: Json }
  >();
  const hanging = new Set<ServerResponse>();
  let counter = 0;
  const newId = (prefix: string) =>
    `${prefix}_${(++counter).toString().padStart(4, '0')}${randomBytes(6).toString('hex')}`;

  const paymentMethodObject = (id: string) => {
    const card = PAYMENT_METHODS[id] ?? PAYMENT_METHODS.pm_card_visa!;
    return { id, object: 'payment_method', type: 'card', card: { brand: card.brand, last4: card.last4 } };
  };

  /** A PaymentIntent as Stripe answers it, with what `expand` asked for made whole. */
  const view = (pi: Json, expand: unknown): Json => {
    const wanted = Array.isArray(expand) ? expand : [];
    const out: Json = { ...pi };
    if (wanted.includes('payment_method') && typeof pi.payment_method === 'string') {
      out.payment_method = paymentMethodObject(pi.payment_method);
    }
    if (wanted.includes('latest_charge') && typeof pi.latest_charge === 'string') {
      out.latest_charge = { ...objects.get(pi.latest_charge) };
    }
    return out;
  };

  const paymentIntent = (id: string): Json => {
    const pi = objects.get(id);
    if (pi?.object !== 'payment_intent') throw missing('payment_intent', id);
    return pi;
  };

  const makeCharge = (pi: Json, amount: number): string => {
    const charge = {
      id: newId('ch'),
      object: 'charge',
      amount,
      amount_refunded: 0,
      refunded: false,
      currency: pi.currency,
      payment_intent: pi.id,
      payment_method: pi.payment_method,
      status: 'succeeded',
    };
    objects.set(charge.id, charge);
    return charge.id;
  };

  const cardError = (refusal: CardRefusal, pi: Json) =>
    new Refusal(402, {
      type: 'card_error',
      ...refusal,
      payment_intent: view(pi, ['payment_method']),
      payment_method: paymentMethodObject(String(pi.payment_method)),
    });

  function createPaymentIntent(p: Params): Json {
    const amount = Number(p.amount);
    if (!Number.isInteger(amount) || amount <= 0)
      throw invalid('parameter_invalid_integer', 'Invalid integer: amount');
    if (!str(p.currency)) throw invalid('parameter_missing', 'Missing required param: currency.');
    checkAmount(p.currency, amount, 'amount');
    const smallest = SMALLEST[String(p.currency)];
    if (smallest !== undefined && amount < smallest) {
      throw invalid(
        'amount_too_small',
        `Amount must be at least ${smallest} in ${String(p.currency)} (Stripe's unit).`,
      );
    }
    if ('payment_method_types' in p) {
      throw invalid(
        'payment_method_types_no_longer_supported',
        'payment_method_types is no longer supported on this API version; use automatic_payment_methods or allowed_payment_method_types.',
      );
    }
    const automatic = p.automatic_payment_methods as Params | undefined;
    if (p.confirm === 'true' && !str(p.return_url) && automatic?.allow_redirects !== 'never') {
      throw invalid(
        'parameter_missing',
        'A `return_url` must be specified because this Payment Intent is configured to automatically accept the payment methods enabled in the Dashboard, some of which may require a full page redirect to succeed. If you do not want to accept redirect-based payment methods, set `automatic_payment_methods[enabled]` to `true` and `automatic_payment_methods[allow_redirects]` to `never` when creating Setup Intents and Payment Intents.',
      );
    }
    const method = str(p.payment_method);
    if (!method) throw invalid('parameter_missing', 'Missing required param: payment_method.');
    const manual = p.capture_method === 'manual';
    const pi: Json = {
      id: newId('pi'),
      object: 'payment_intent',
      amount,
      amount_capturable: 0,
      amount_received: 0,
      currency: p.currency,
      capture_method: manual ? 'manual' : 'automatic',
      payment_method: method,
      metadata: p.metadata ?? {},
      latest_charge: null,
      last_payment_error: null,
      status: 'requires_confirmation',
    };
    pi.client_secret = `${pi.id}_secret_${randomBytes(8).toString('hex')}`;
    objects.set(pi.id as string, pi);
    if (p.confirm !== 'true') return pi;
    const card = PAYMENT_METHODS[method];
    if (card?.refusal) {
      pi.status = 'requires_payment_method';
      pi.last_payment_error = { type: 'card_error', ...card.refusal };
      throw cardError(card.refusal, pi);
    }
    if (method === 'pm_card_authenticationRequired') {
      pi.status = 'requires_action';
      pi.next_action = { type: 'use_stripe_sdk', use_stripe_sdk: {} };
    } else if (manual) {
      pi.status = 'requires_capture';
      pi.amount_capturable = amount;
      pi.latest_charge = makeCharge(pi, amount);
    } else {
      pi.status = 'succeeded';
      pi.amount_received = amount;
      pi.latest_charge = makeCharge(pi, amount);
    }
    return view(pi, p.expand);
  }

  function capture(id: string, p: Params): Json {
    const pi = paymentIntent(id);
    if (pi.status !== 'requires_capture') {
      throw invalid(
        'payment_intent_unexpected_state',
        `This PaymentIntent could not be captured because it has a status of ${pi.status}. Only a PaymentIntent with one of the following statuses may be captured: requires_capture.`,
      );
    }
    const amount =
      p.amount_to_capture === undefined ? (pi.amount_capturable as number) : Number(p.amount_to_capture);
    if (!Number.isInteger(amount) || amount <= 0 || amount > (pi.amount_capturable as number)) {
      throw invalid('amount_too_large', 'The amount to capture must be at most the amount capturable.');
    }
    checkAmount(pi.currency, amount, 'amount_to_capture');
    if (pi.payment_method === 'pm_fake_declinedAtCapture') {
      const refusal = {
        code: 'card_declined',
        decline_code: 'generic_decline',
        message: 'Your card was declined.',
      };
      throw cardError(refusal, pi);
    }
    pi.status = 'succeeded';
    pi.amount_received = amount;
    pi.amount_capturable = 0;
    const charge = objects.get(pi.latest_charge as string);
    if (charge) charge.amount = amount;
    return view(pi, p.expand);
  }

  function cancel(id: string): Json {
    const pi = paymentIntent(id);
    if (pi.status === 'succeeded' || pi.status === 'canceled') {
      throw invalid(
        'payment_intent_unexpected_state',
        `You cannot cancel this PaymentIntent because it has a status of ${pi.status}.`,
      );
    }
    pi.status = 'canceled';
    pi.amount_capturable = 0;
    pi.canceled_at = Math.floor(Date.now() / 1000);
    return { ...pi };
  }

  function createRefund(p: Params): Json {
    const piId = str(p.payment_intent);
    if (!piId) throw invalid('parameter_missing', 'Missing required param: payment_intent.');
    const pi = paymentIntent(piId);
    const charge = pi.status === 'succeeded' ? objects.get(pi.latest_charge as string) : undefined;
    if (!charge)
      throw invalid('charge_not_refundable', `PaymentIntent ${piId} has no successful charge to refund.`);
    const left = (charge.amount as number) - (charge.amount_refunded as number);
    const amount = p.amount === undefined ? left : Number(p.amount);
    if (left === 0)
      throw invalid('charge_already_refunded', `Charge ${charge.id} has already been refunded.`);
    if (!Number.isInteger(amount) || amount <= 0 || amount > left) {
      throw invalid(
        'amount_too_large',
        `Refund amount (${amount}) is greater than unrefunded amount (${left}).`,
      );
    }
    checkAmount(pi.currency, amount, 'amount');
    charge.amount_refunded = (charge.amount_refunded as number) + amount;
    charge.refunded = charge.amount_refunded === charge.amount;
    const refund = {
      id: newId('re'),
      object: 'refund',
      amount,
      currency: pi.currency,
      charge: charge.id,
      payment_intent: piId,
      metadata: p.metadata ?? {},
      status: fake.refundStatus,
    };
    objects.set(refund.id, refund);
    return { ...refund };
  }

  function createTransfer(p: Params): Json {
    const destination = str(p.destination);
    if (!destination) throw invalid('parameter_missing', 'Missing required param: destination.');
    if (!destination.startsWith('acct_')) throw missing('destination', destination);
    const amount = Number(p.amount);
    if (!Number.isInteger(amount) || amount <= 0)
      throw invalid('parameter_invalid_integer', 'Invalid integer: amount');
    checkAmount(p.currency, amount, 'amount');
    const transfer = {
      id: newId('tr'),
      object: 'transfer',
      amount,
      amount_reversed: 0,
      reversed: false,
      currency: p.currency,
      destination,
      transfer_group: p.transfer_group ?? null,
      metadata: p.metadata ?? {},
    };
    objects.set(transfer.id, transfer);
    return { ...transfer };
  }

  function createAccount(p: Params): Json {
    const type = str(p.type);
    if (type !== undefined && !['express', 'standard', 'custom'].includes(type))
      throw invalid('parameter_invalid_string', `Invalid type: must be one of express, standard, or custom`);
    const account = {
      id: newId('acct'),
      object: 'account',
      type: type ?? 'standard',
      capabilities: p.capabilities ?? {},
      charges_enabled: false,
      payouts_enabled: false,
      details_submitted: false,
      metadata: p.metadata ?? {},
    };
    objects.set(account.id, account);
    return { ...account };
  }

  function createAccountLink(p: Params): Json {
    const account = str(p.account);
    if (!account) throw invalid('parameter_missing', 'Missing required param: account.');
    retrieve(account, 'account');
    const type = str(p.type);
    if (type !== 'account_onboarding' && type !== 'account_update')
      throw invalid(
        'parameter_invalid_string',
        'Invalid type: must be one of account_onboarding or account_update',
      );
    for (const param of ['return_url', 'refresh_url'] as const) {
      const value = str(p[param]);
      if (!value) throw invalid('parameter_missing', `Missing required param: ${param}.`);
      if (!/^https?:\/\//.test(value)) throw invalid('url_invalid', `Not a valid URL: ${param}`);
    }
    const created = Math.floor(Date.now() / 1000);
    const link = {
      id: newId('acctlink'),
      object: 'account_link',
      account,
      created,
      expires_at: created + 300,
      url: `http://127.0.0.1:${port}/setup/e/${account}/${randomBytes(8).toString('hex')}`,
      return_url: p.return_url,
      refresh_url: p.refresh_url,
    };
    objects.set(link.id, link);
    // The answer, as Stripe's, carries neither the account nor the URLs given.
    return { object: 'account_link', created, expires_at: link.expires_at, url: link.url };
  }

  /** A list answer, newest first as Stripe lists. */
  const list = (object: string, keep: (o: Json) => boolean): Json => ({
    object: 'list',
    data: [...objects.values()]
      .filter((o) => o.object === object && keep(o))
      .reverse()
      .map((o) => ({ ...o })),
    has_more: false,
  });

  /** Search of PaymentIntents; the fake understands one query, metadata['key']:'value'. */
  function searchPaymentIntents(p: Params): Json {
    const match = /^metadata\['([^']+)'\]:'([^']*)'$/.exec(str(p.query) ?? '');
    if (!match) throw invalid('parameter_invalid_string', `The fake searches only metadata['key']:'value'.`);
    const [, key, value] = match;
    const data = all('payment_intent')
      .filter((pi) => (pi.metadata as Record<string, string> | undefined)?.[key as string] === value)
      .map((pi) =>
        view(pi, Array.isArray(p.expand) ? p.expand.map((e) => String(e).replace(/^data\./, '')) : []),
      );
    return { object: 'search_result', data, has_more: false, next_page: null };
  }

  const all = (object: string) => [...objects.values()].filter((o) => o.object === object);

  const retrieve = (id: string, object: string): Json => {
    const found = objects.get(id);
    if (!found || found.object !== object) throw missing(object, id);
    return { ...found };
  };

  /** Runs one request on the fake's objects: its status and JSON answer. */
  function route(method: string, path: string, p: Params): { status: number; body: Json } {
    const segments = path.split('/').slice(1);
    const [v1, resource, id, action] = segments;
    try {
      if (v1 !== 'v1')
        throw new Refusal(404, {
          type: 'invalid_request_error',
          message: `Unrecognized request URL (${method}: ${path}).`,
        });
      const body = ((): Json => {
        if (resource === 'payment_intents') {
          if (method === 'GET' && id === 'search') return searchPaymentIntents(p);
          if (method === 'POST' && !id) return createPaymentIntent(p);
          if (method === 'GET' && id && !action) return view(paymentIntent(id), p.expand);
          if (method === 'POST' && id && action === 'capture') return capture(id, p);
          if (method === 'POST' && id && action === 'cancel') return cancel(id);
        }
        if (resource === 'refunds') {
          if (method === 'GET' && !id)
            return list(
              'refund',
              (r) => p.payment_intent === undefined || r.payment_intent === p.payment_intent,
            );
          if (method === 'POST' && !id) return createRefund(p);
          if (method === 'GET' && id) return retrieve(id, 'refund');
        }
        if (resource === 'accounts' && method === 'POST' && !id) return createAccount(p);
        if (resource === 'account_links' && method === 'POST' && !id) return createAccountLink(p);
        if (resource === 'transfers') {
          if (method === 'GET' && !id)
            return list(
              'transfer',
              (t) => p.transfer_group === undefined || t.transfer_group === p.transfer_group,
            );
          if (method === 'POST' && !id) return createTransfer(p);
          if (method === 'GET' && id) return retrieve(id, 'transfer');
        }
        throw new Refusal(404, {
          type: 'invalid_request_error',
          message: `Unrecognized request URL (${method}: ${path}).`,
        });
      })();
      return { status: 200, body };
    } catch (error) {
      if (error instanceof Refusal) return { status: error.status, body: { error: error.error } };
      throw error;
    }
  }

  const send = (res: ServerResponse, status: number, body: Json, headers: Record<string, string> = {}) => {
    res.writeHead(status, {
      'content-type': 'application/json',
      'request-id': `req_${randomBytes(7).toString('hex')}`,
      ...headers,
    });
    res.end(JSON.stringify(body));
  };

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? '/', 'http://fake');
    const method = req.method ?? 'GET';
    // An onboarding link, opened by a person's browser: Stripe's pages, reduced to a way back.
    if (method === 'GET' && url.pathname.startsWith('/setup/e/')) {
      const link = all('account_link').find((l) => l.url === `http://127.0.0.1:${port}${url.pathname}`);
      res.writeHead(link ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        link
          ? `<!doctype html><html lang="en"><title>Fake Stripe onboarding</title><h1>Onboarding ${String(link.account)}</h1><a href="${String(link.return_url)}">Return to the platform</a></html>`
          : 'no such link',
      );
      return;
    }
    const params = parseForm(method === 'GET' ? url.search.slice(1) : Buffer.concat(chunks).toString('utf8'));
    const idempotencyKey = str(req.headers['idempotency-key']);
    const entry: RecordedRequest = {
      method,
      path: url.pathname,
      params,
      idempotencyKey,
      authorization: str(req.headers.authorization),
      userAgent: str(req.headers['user-agent']),
      replayed: false,
    };
    requests.push(entry);

    if (entry.authorization !== `Bearer ${FAKE_SECRET_KEY}`) {
      send(res, 401, { error: { type: 'invalid_request_error', message: 'Invalid API Key provided.' } });
      return;
    }

    const rule = rules.find(
      (r) =>
        (r.times ?? Number.POSITIVE_INFINITY) > 0 &&
        (r.method === undefined || r.method === method) &&
        (r.path === undefined || r.path.test(url.pathname)),
    );
    if (rule && rule.times !== undefined) rule.times -= 1;
    const misbehaviour = rule?.answer;
    if (misbehaviour?.kind === 'error500') {
      send(res, 500, { error: { type: 'api_error', message: 'An unknown error occurred.' } });
      return;
    }
    if (misbehaviour?.kind === 'error') {
      send(res, misbehaviour.status, { error: misbehaviour.error });
      return;
    }
    if (misbehaviour?.kind === 'hang') {
      hanging.add(res);
      return;
    }

    // Stripe's idempotency: the first answer to a key is saved once the endpoint runs; a request that
    // fails validation (400) is not saved, and a key reused with other parameters is refused.
    const fingerprint = JSON.stringify(params);
    const previous = method === 'POST' && idempotencyKey ? saved.get(idempotencyKey) : undefined;
    let answer: { status: number; body: Json };
    if (previous) {
      if (previous.method !== method || previous.path !== url.pathname || previous.params !== fingerprint) {
        send(res, 400, {
          error: {
            type: 'idempotency_error',
            message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${idempotencyKey}' if you meant to execute a different request.`,
          },
        });
        return;
      }
      entry.replayed = true;
      answer = { status: previous.status, body: previous.body };
    } else {
      answer = route(method, url.pathname, params);
      if (misbehaviour?.kind === 'patch' && answer.status === 200) {
        answer = { status: 200, body: { ...answer.body, ...misbehaviour.patch } };
      }
      if (method === 'POST' && idempotencyKey && answer.status !== 400) {
        saved.set(idempotencyKey, { method, path: url.pathname, params: fingerprint, ...answer });
      }
    }
    if (misbehaviour?.kind === 'hang-after') {
      hanging.add(res);
      return;
    }
    send(res, answer.status, answer.body, entry.replayed ? { 'idempotent-replayed': 'true' } : {});
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      send(res, 500, { error: { type: 'api_error', message: `fake Stripe failed: ${String(error)}` } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const authenticate = (id: string, outcome: 'succeed' | 'fail'): Json => {
    const pi = paymentIntent(id);
    if (pi.status !== 'requires_action') throw new Error(`${id} is ${pi.status}, not requires_action`);
    pi.next_action = null;
    if (outcome === 'fail') {
      pi.status = 'requires_payment_method';
      pi.last_payment_error = {
        type: 'invalid_request_error',
        code: 'payment_intent_authentication_failure',
        message:
          'We are unable to authenticate your payment method. Please choose a different payment method and try again.',
      };
    } else if (pi.capture_method === 'manual') {
      pi.status = 'requires_capture';
      pi.amount_capturable = pi.amount;
      pi.latest_charge = makeCharge(pi, pi.amount as number);
    } else {
      pi.status = 'succeeded';
      pi.amount_received = pi.amount;
      pi.latest_charge = makeCharge(pi, pi.amount as number);
    }
    return { ...pi };
  };

  const failRefund = (id: string, reason = 'expired_or_canceled_card'): Json => {
    const refund = objects.get(id);
    if (refund?.object !== 'refund') throw new Error(`no refund ${id}`);
    refund.status = 'failed';
    refund.failure_reason = reason;
    const charge = objects.get(refund.charge as string);
    if (charge) {
      charge.amount_refunded = (charge.amount_refunded as number) - (refund.amount as number);
      charge.refunded = false;
    }
    return { ...refund };
  };

  const succeedRefund = (id: string): Json => {
    const refund = objects.get(id);
    if (refund?.object !== 'refund') throw new Error(`no refund ${id}`);
    refund.status = 'succeeded';
    return { ...refund };
  };

  const openDispute = (piId: string, reason = 'fraudulent'): Json => {
    const pi = paymentIntent(piId);
    const charge = objects.get(pi.latest_charge as string);
    if (!charge) throw new Error(`${piId} has no charge to dispute`);
    const dispute = {
      id: newId('du'),
      object: 'dispute',
      amount: charge.amount,
      currency: charge.currency,
      charge: charge.id,
      payment_intent: piId,
      reason,
      status: 'needs_response',
    };
    objects.set(dispute.id, dispute);
    charge.disputed = true;
    return { ...dispute };
  };

  const closeDispute = (id: string, status: 'won' | 'lost'): Json => {
    const dispute = objects.get(id);
    if (dispute?.object !== 'dispute') throw new Error(`no dispute ${id}`);
    dispute.status = status;
    return { ...dispute };
  };

  const fake: FakeStripe = {
    host: '127.0.0.1',
    port,
    requests,
    objects,
    all,
    authenticate,
    failRefund,
    refundStatus: 'succeeded',
    succeedRefund,
    openDispute,
    closeDispute,
    misbehave: (rule) => {
      rules.push({ ...rule });
    },
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}
