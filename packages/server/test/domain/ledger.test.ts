import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  authorizeEntry,
  balances,
  captureEntry,
  chargeEntry,
  fundedEntry,
  refundEntry,
  releaseEntry,
  transferEntry,
} from '../../src/domain/ledger.ts';

const money = { memberId: 'mem_a', shareCents: 2434, feeCents: 24, currency: 'usd' };
const sum = (lines: { amountCents: number }[]) => lines.reduce((s, l) => s + l.amountCents, 0);

test('every entry adds up to zero', () => {
  for (const entry of [
    chargeEntry(money),
    authorizeEntry(money),
    captureEntry(money),
    releaseEntry(money),
    refundEntry(money),
    fundedEntry({ merchantFee: 147, fxFee: 73, currency: 'usd' }),
    transferEntry(7080, 'usd'),
  ]) {
    assert.equal(sum(entry), 0, JSON.stringify(entry));
  }
});

test('a charge then its refund leave nothing anywhere; the card is charged share + fee', () => {
  const charged = balances(chargeEntry(money));
  assert.equal(charged.member('mem_a', 'payer_cards'), -2458);
  assert.equal(charged.account('session_funds'), 2434);
  assert.equal(charged.account('consumer_fees'), 24);
  const back = balances([...chargeEntry(money), ...refundEntry(money)]);
  for (const account of ['payer_cards', 'session_funds', 'consumer_fees'] as const)
    assert.equal(back.account(account), 0);
});

test('a hold is off the books until captured; a released hold leaves nothing', () => {
  const held = balances(authorizeEntry(money));
  assert.equal(held.account('holds'), 2458);
  assert.equal(held.account('payer_cards'), 0);
  const captured = balances([...authorizeEntry(money), ...captureEntry(money)]);
  assert.equal(captured.account('holds'), 0);
  assert.equal(captured.account('payer_cards'), -2458);
  assert.equal(captured.account('session_funds'), 2434);
  const released = balances([...authorizeEntry(money), ...releaseEntry(money)]);
  assert.equal(released.account('holds'), 0);
  assert.equal(released.account('payer_holds'), 0);
});

test('a funded session ends with nothing in its funds once the transfer is made', () => {
  const lines = [
    ...chargeEntry({ ...money, shareCents: 7300, feeCents: 73 }),
    ...fundedEntry({ merchantFee: 147, fxFee: 73, currency: 'usd' }),
    ...transferEntry(7300 - 147 - 73, 'usd'),
  ];
  const b = balances(lines);
  assert.equal(b.account('session_funds'), 0);
  assert.equal(b.account('merchant_payouts'), 7080);
  assert.equal(b.account('merchant_fees'), 147);
  assert.equal(b.account('fx_fees'), 73);
});

test('no FX line when there is no FX fee; amounts must be whole minor units', () => {
  assert.equal(fundedEntry({ merchantFee: 147, fxFee: 0, currency: 'usd' }).length, 2);
  assert.throws(() => chargeEntry({ ...money, shareCents: 10.5 }), RangeError);
  assert.throws(() => transferEntry(-1, 'usd'), RangeError);
});
