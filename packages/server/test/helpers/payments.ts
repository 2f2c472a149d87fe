// What the payment suites share: a group set up over the pay-page API, paying a share with a test card,
// and reading the session as its merchant sees it.
import assert from 'node:assert/strict';
import type { Deps } from '../../src/deps.ts';
import { takeProcessorEvent } from '../../src/flows/processor-events.ts';
import type { ApiClient, TestResponse } from './app.ts';
import { type Created, type CreateOptions, createSession, organizerToken } from './sessions.ts';

export const CARDS = {
  ok: '4242424242424242',
  declined: '4000000000000002',
  insufficientFunds: '4000000000009995',
  expired: '4000000000000069',
  incorrectCvc: '4000000000000127',
  lost: '4000000000009987',
  stolen: '4000000000009979',
  processingError: '4000000000000119',
  failsAtCapture: '4000000000000341',
  /** The bank asks for 3-D Secure: the sandbox's Complete / Fail step (POST /api/v1/sandbox/authenticate). */
  authenticates: '4000002500003155',
  /** Charged, then a dispute (fraudulent) opens a few seconds later. */
  disputed: '4000000000000259',
  /** Charged; its refunds are taken, then fail. */
  refundsFail: '4000000000005126',
} as const;

export interface Share {
  id: string;
  shareId: string;
  name: string;
  amount: number;
  due: number;
}

export interface Group {
  created: Created;
  /** In the group's order, the organizer first; typed so that the first three need no check. */
  shares: Share[] & { 0: Share; 1: Share; 2: Share };
}

/** A session with a group of `names` split equally (first name: the organizer), set up over HTTP. */
export async function equalGroup(t: ApiClient, names: string[], options: CreateOptions = {}): Promise<Group> {
  const created = await createSession(t, options);
  const res = await t.request('PUT', `/api/v1/session/group?access=${organizerToken(created)}`, {
    body: { mode: 'equal', members: names.map((name) => ({ name })) },
  });
  assert.equal(res.status, 200, res.text);
  return {
    created,
    shares: res.body.group.members.map(
      (m: {
        id: string;
        share_id: string;
        name: string;
        amount_cents: number;
        amount_due_cents: number;
      }) => ({
        id: m.id,
        shareId: m.share_id,
        name: m.name,
        amount: m.amount_cents,
        due: m.amount_due_cents,
      }),
    ) as Group['shares'],
  };
}

/** Pays a share with a card number (any future expiry, any CVC). */
export function pay(
  t: ApiClient,
  shareId: string,
  number: string = CARDS.ok,
  headers?: Record<string, string>,
): Promise<TestResponse> {
  return t.request('POST', `/api/v1/shares/${shareId}/pay`, {
    body: { card: { number, exp_month: 12, exp_year: 2099, cvc: '123' } },
    headers,
  });
}

/** Pays and asserts 200. */
export async function payOk(t: ApiClient, shareId: string, number: string = CARDS.ok): Promise<TestResponse> {
  const res = await pay(t, shareId, number);
  assert.equal(res.status, 200, res.text);
  return res;
}

/** GET /v1/sessions/{id} with the merchant's secret key. */
export async function merchantSession(t: ApiClient, sessionId: string) {
  const res = await t.request('GET', `/v1/sessions/${sessionId}`, { key: t.merchant.secretKey });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

/** Waits until `check` answers true, polling every 50 ms, for at most `ms`. */
export async function eventually(
  check: () => Promise<boolean>,
  ms = 10_000,
  what = 'condition',
): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Completes (or fails) a sandbox payment's authentication step, then asks for the share again (refresh). */
export async function authenticate(
  t: ApiClient,
  shareId: string,
  clientSecret: string,
  outcome: 'succeed' | 'fail',
): Promise<TestResponse> {
  const done = await t.request('POST', '/api/v1/sandbox/authenticate', {
    body: { client_secret: clientSecret, outcome },
  });
  assert.equal(done.status, 200, done.text);
  return t.request('POST', `/api/v1/shares/${shareId}/refresh`);
}

/**
 * The processor tells of a dispute on a payment (its processor id), opened or closed, as its webhook
 * would: for `amountCents` of it, which may be part of the payment. Event ids are made of the dispute's.
 */
export async function disputeEvent(
  t: { deps: Deps },
  dispute: { id: string; paymentId: string; amountCents: number; currency: string },
  status: 'needs_response' | 'won' | 'lost',
): Promise<void> {
  await takeProcessorEvent(t.deps, {
    id: `evt_${dispute.id}_${status}`,
    type: status === 'needs_response' ? 'dispute.opened' : 'dispute.closed',
    dispute: { ...dispute, reason: 'product_not_received', status },
  });
}
