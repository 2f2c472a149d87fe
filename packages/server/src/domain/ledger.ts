// The ledger's entries (docs/decisions.md#ledger-and-reconciliation): each money movement is one entry of
// lines in integer minor units that add up to zero. Pure: the flows write what these answer, in the
// transaction of the change, and reconcile compares the sums with what the rows say.
import { assertMinorUnits } from './money.ts';

/**
 * - `payer_cards`: what payers' cards were charged (negative: taken from them).
 * - `payer_holds` / `holds`: holds on payers' cards, and the same holds as ours to capture.
 * - `session_funds`: what we hold for a session, until it is transferred to the merchant or refunded.
 * - `consumer_fees`, `merchant_fees`, `fx_fees`: our fees.
 * - `merchant_payouts`: what was transferred to merchants.
 * - `disputes`: what card networks hold back from us while payers' disputes are open (negative).
 * - `dispute_losses`: what disputes we lost took from us for good (negative).
 */
const LEDGER_ACCOUNTS = [
  'payer_cards',
  'payer_holds',
  'holds',
  'session_funds',
  'consumer_fees',
  'merchant_fees',
  'fx_fees',
  'merchant_payouts',
  'disputes',
  'dispute_losses',
] as const;
export type LedgerAccount = (typeof LEDGER_ACCOUNTS)[number];

type LedgerKind =
  | 'charge'
  | 'authorize'
  | 'capture'
  | 'release'
  | 'refund'
  | 'consumer_fee'
  | 'merchant_fee'
  | 'fx_fee'
  | 'transfer'
  | 'refund_failed'
  | 'dispute'
  | 'dispute_won'
  | 'dispute_lost';

export interface LedgerLine {
  kind: LedgerKind;
  account: LedgerAccount;
  /** Signed: what the account gains (positive) or gives (negative). */
  amountCents: number;
  currency: string;
  memberId: string | null;
}

/** A payer's money: their share and the consumer fee on it. */
export interface PayerMoney {
  memberId: string;
  shareCents: number;
  feeCents: number;
  currency: string;
}

function check(money: PayerMoney) {
  assertMinorUnits(money.shareCents, 'share');
  assertMinorUnits(money.feeCents, 'consumer fee');
}

const line = (
  kind: LedgerKind,
  account: LedgerAccount,
  amountCents: number,
  currency: string,
  memberId: string | null,
): LedgerLine => ({ kind, account, amountCents, currency, memberId });

/** The card charged share + fee: the share is held for the session, the fee is ours. */
function taken(kind: 'charge' | 'capture', m: PayerMoney): LedgerLine[] {
  const lines = [
    line(kind, 'payer_cards', -(m.shareCents + m.feeCents), m.currency, m.memberId),
    line(kind, 'session_funds', m.shareCents, m.currency, m.memberId),
  ];
  if (m.feeCents > 0) lines.push(line('consumer_fee', 'consumer_fees', m.feeCents, m.currency, m.memberId));
  return lines;
}

export function chargeEntry(m: PayerMoney): LedgerLine[] {
  check(m);
  return taken('charge', m);
}

export function authorizeEntry(m: PayerMoney): LedgerLine[] {
  check(m);
  const held = m.shareCents + m.feeCents;
  return [
    line('authorize', 'payer_holds', -held, m.currency, m.memberId),
    line('authorize', 'holds', held, m.currency, m.memberId),
  ];
}

/** A hold let go, or used up by its capture. */
function holdEnds(kind: 'capture' | 'release', m: PayerMoney): LedgerLine[] {
  const held = m.shareCents + m.feeCents;
  return [
    line(kind, 'holds', -held, m.currency, m.memberId),
    line(kind, 'payer_holds', held, m.currency, m.memberId),
  ];
}

export function captureEntry(m: PayerMoney): LedgerLine[] {
  check(m);
  return [...holdEnds('capture', m), ...taken('capture', m)];
}

export function releaseEntry(m: PayerMoney): LedgerLine[] {
  check(m);
  return holdEnds('release', m);
}

/** Everything the payer was charged goes back: the share out of the session's funds, and our fee. */
export function refundEntry(m: PayerMoney): LedgerLine[] {
  check(m);
  const lines = [
    line('refund', 'payer_cards', m.shareCents + m.feeCents, m.currency, m.memberId),
    line('refund', 'session_funds', -m.shareCents, m.currency, m.memberId),
  ];
  if (m.feeCents > 0) lines.push(line('consumer_fee', 'consumer_fees', -m.feeCents, m.currency, m.memberId));
  return lines;
}

/**
 * A refund the processor took and later reported failed: the money is back with us, the payer does not
 * have it, and our fee stands again. The refund entry, reversed.
 */
export function refundFailedEntry(m: PayerMoney): LedgerLine[] {
  check(m);
  const lines = [
    line('refund_failed', 'payer_cards', -(m.shareCents + m.feeCents), m.currency, m.memberId),
    line('refund_failed', 'session_funds', m.shareCents, m.currency, m.memberId),
  ];
  if (m.feeCents > 0) lines.push(line('refund_failed', 'consumer_fees', m.feeCents, m.currency, m.memberId));
  return lines;
}

/** A payer's dispute opened: their bank gives them the amount back for now, and holds it back from us. */
export function disputeOpenedEntry(memberId: string, amountCents: number, currency: string): LedgerLine[] {
  assertMinorUnits(amountCents, 'disputed amount');
  return [
    line('dispute', 'payer_cards', amountCents, currency, memberId),
    line('dispute', 'disputes', -amountCents, currency, memberId),
  ];
}

/** A dispute closed: won, the money held back comes back to us; lost, it is gone for good. */
export function disputeClosedEntry(
  memberId: string,
  amountCents: number,
  currency: string,
  status: 'won' | 'lost',
): LedgerLine[] {
  assertMinorUnits(amountCents, 'disputed amount');
  return status === 'won'
    ? [
        line('dispute_won', 'payer_cards', -amountCents, currency, memberId),
        line('dispute_won', 'disputes', amountCents, currency, memberId),
      ]
    : [
        line('dispute_lost', 'disputes', amountCents, currency, memberId),
        line('dispute_lost', 'dispute_losses', -amountCents, currency, memberId),
      ];
}

/** When the session is funded, the merchant and FX fees are taken from its funds. */
export function fundedEntry(fees: { merchantFee: number; fxFee: number; currency: string }): LedgerLine[] {
  const lines: LedgerLine[] = [];
  if (fees.merchantFee > 0) {
    lines.push(line('merchant_fee', 'session_funds', -fees.merchantFee, fees.currency, null));
    lines.push(line('merchant_fee', 'merchant_fees', fees.merchantFee, fees.currency, null));
  }
  if (fees.fxFee > 0) {
    lines.push(line('fx_fee', 'session_funds', -fees.fxFee, fees.currency, null));
    lines.push(line('fx_fee', 'fx_fees', fees.fxFee, fees.currency, null));
  }
  return lines;
}

export function transferEntry(amountCents: number, currency: string): LedgerLine[] {
  assertMinorUnits(amountCents, 'transfer');
  return [
    line('transfer', 'session_funds', -amountCents, currency, null),
    line('transfer', 'merchant_payouts', amountCents, currency, null),
  ];
}

/** Balance of each account over `lines`, per member where `byMember` (null key: lines of no member). */
export function balances(lines: readonly Pick<LedgerLine, 'account' | 'amountCents' | 'memberId'>[]) {
  const byAccount = new Map<LedgerAccount, number>();
  const byMember = new Map<string, Map<LedgerAccount, number>>();
  for (const l of lines) {
    byAccount.set(l.account, (byAccount.get(l.account) ?? 0) + l.amountCents);
    if (l.memberId !== null) {
      const m = byMember.get(l.memberId) ?? new Map<LedgerAccount, number>();
      m.set(l.account, (m.get(l.account) ?? 0) + l.amountCents);
      byMember.set(l.memberId, m);
    }
  }
  return {
    account: (a: LedgerAccount) => byAccount.get(a) ?? 0,
    member: (id: string, a: LedgerAccount) => byMember.get(id)?.get(a) ?? 0,
  };
}
