import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { MAX_AMOUNT } from '../../src/domain/money.ts';
import {
  type MemberSpec,
  type SplitInput,
  type SplitItem,
  type SplitResult,
  splitTotal,
} from '../../src/domain/split.ts';

function names(n: number): MemberSpec[] {
  return Array.from({ length: n }, (_, i) => ({ name: `member ${i}` }));
}

function amountsOf(result: SplitResult): number[] {
  assert.ok(result.ok, `expected a split, got ${JSON.stringify(result)}`);
  return result.amounts;
}

function errorsOf(result: SplitResult): string[] {
  assert.ok(!result.ok, `expected errors, got ${JSON.stringify(result)}`);
  return result.errors;
}

function plural(n: number, one: string, many: string): string {
  return n === 1 ? one : many;
}

const noItems = { items: [] as SplitItem[], extras: 0 };

/** n parts of `total` (non-negative integers adding up to it), from n − 1 sorted cut points. */
function partsOf(total: number, n: number): fc.Arbitrary<number[]> {
  return fc.array(fc.integer({ min: 0, max: total }), { minLength: n - 1, maxLength: n - 1 }).map((cuts) => {
    const points = [0, ...cuts.sort((a, b) => a - b), total];
    return points.slice(1).map((point, i) => point - points[i]!);
  });
}

const totalArb = fc.integer({ min: 1, max: MAX_AMOUNT });
const sizeArb = fc.integer({ min: 1, max: 50 });

/** A valid input for each mode, with nobody paid. */
const equalArb = fc
  .record({ total: totalArb, n: sizeArb })
  .map(({ total, n }): SplitInput => ({ mode: 'equal', total, members: names(n), ...noItems }));

const percentageArb = fc.record({ total: totalArb, n: sizeArb }).chain(({ total, n }) =>
  partsOf(10_000, n).map(
    (points): SplitInput => ({
      mode: 'percentage',
      total,
      members: points.map((basisPoints, i) => ({ name: `member ${i}`, basisPoints })),
      ...noItems,
    }),
  ),
);

const customArb = fc.record({ total: totalArb, n: sizeArb }).chain(({ total, n }) =>
  partsOf(total, n).map(
    (amounts): SplitInput => ({
      mode: 'custom',
      total,
      members: amounts.map((amountCents, i) => ({ name: `member ${i}`, amountCents })),
      ...noItems,
    }),
  ),
);

// The organizer's part is the last cut, so the others add up to at most the total.
const hostPaysArb = fc.record({ total: totalArb, n: sizeArb }).chain(({ total, n }) =>
  partsOf(total, n).map(
    (parts): SplitInput => ({
      mode: 'host-pays',
      total,
      members: parts.map((amount, i) =>
        i === 0 ? { name: 'organizer' } : { name: `member ${i}`, amountCents: amount },
      ),
      ...noItems,
    }),
  ),
);

const itemizedArb = fc
  .record({
    items: fc.array(
      fc.record({
        quantity: fc.integer({ min: 1, max: 6 }),
        unitPrice: fc.integer({ min: 0, max: 200_000 }),
      }),
      { minLength: 1, maxLength: 12 },
    ),
    extras: fc.integer({ min: 0, max: 500_000 }),
    n: fc.integer({ min: 1, max: 12 }),
  })
  .chain(({ items, extras, n }) => {
    const units = items.reduce((sum, item) => sum + item.quantity, 0);
    // One owner per unit, in item order.
    return fc
      .array(fc.integer({ min: 0, max: n - 1 }), { minLength: units, maxLength: units })
      .map((owners) => {
        const members: MemberSpec[] = names(n).map((member) => ({ ...member, items: [] }));
        let unit = 0;
        for (const [itemIndex, item] of items.entries()) {
          for (let k = 0; k < item.quantity; k++)
            members[owners[unit++]!]!.items!.push({ itemIndex, quantity: 1 });
        }
        const total = items.reduce((sum, item) => sum + item.quantity * item.unitPrice, 0) + extras;
        return { mode: 'itemized', total, items, extras, members } satisfies SplitInput;
      });
  })
  .filter((input) => input.total >= 1);

const anyValidArb = fc.oneof(equalArb, percentageArb, customArb, hostPaysArb, itemizedArb);

function assertShares(amounts: readonly number[], input: SplitInput): void {
  assert.equal(amounts.length, input.members.length);
  for (const amount of amounts) assert.ok(Number.isSafeInteger(amount) && amount >= 0, `share ${amount}`);
  assert.equal(
    amounts.reduce((a, b) => a + b, 0),
    input.total,
  );
}

describe('equal', () => {
  test('floor(total / n) each, leftover cents to the first members', () => {
    const split = (total: number, n: number) =>
      amountsOf(splitTotal({ mode: 'equal', total, members: names(n), ...noItems }));
    assert.deepEqual(split(1000, 3), [334, 333, 333]);
    assert.deepEqual(split(1001, 3), [334, 334, 333]);
    assert.deepEqual(split(999, 3), [333, 333, 333]);
    assert.deepEqual(split(5, 1), [5]);
    assert.deepEqual(split(1, 3), [1, 0, 0]);
  });

  test('with paid members, the rest is split over the pending ones', () => {
    // Member 1 paid 333 of 1000; a fourth member joins: 667 over three pending members.
    const result = splitTotal({
      mode: 'equal',
      total: 1000,
      members: names(4),
      locked: [null, 333, null, null],
      ...noItems,
    });
    assert.deepEqual(amountsOf(result), [223, 333, 222, 222]);
  });

  test('everyone paid: nothing left to split', () => {
    const result = splitTotal({
      mode: 'equal',
      total: 1000,
      members: names(2),
      locked: [500, 500],
      ...noItems,
    });
    assert.deepEqual(amountsOf(result), [500, 500]);
    assert.deepEqual(
      errorsOf(splitTotal({ mode: 'equal', total: 1000, members: names(2), locked: [500, 400], ...noItems })),
      ['every member has paid, but 100 of the total is not covered'],
    );
  });
});

describe('itemized', () => {
  const items: SplitItem[] = [
    { quantity: 1, unitPrice: 6000 }, // a main course
    { quantity: 3, unitPrice: 1000 }, // three drinks
  ];

  test('item amounts plus the extras in proportion to item subtotals', () => {
    // Subtotals 7000 and 2000 of 9000; extras 1000 → 777.78 and 222.22 → 778 and 222.
    const result = splitTotal({
      mode: 'itemized',
      total: 10_000,
      items,
      extras: 1000,
      members: [
        {
          name: 'Ana',
          items: [
            { itemIndex: 0, quantity: 1 },
            { itemIndex: 1, quantity: 1 },
          ],
        },
        { name: 'Ben', items: [{ itemIndex: 1, quantity: 2 }] },
      ],
    });
    assert.deepEqual(amountsOf(result), [7778, 2222]);
  });

  test('largest remainder ties go to the earlier member; zero subtotals take no extras', () => {
    const result = splitTotal({
      mode: 'itemized',
      total: 3001,
      items: [{ quantity: 2, unitPrice: 1000 }],
      extras: 1001,
      members: [
        { name: 'Ana', items: [{ itemIndex: 0, quantity: 1 }] },
        { name: 'Ben', items: [{ itemIndex: 0, quantity: 1 }] },
        { name: 'Cy' },
      ],
    });
    assert.deepEqual(amountsOf(result), [1501, 1500, 0]);
  });

  test('free items: extras spread equally', () => {
    const result = splitTotal({
      mode: 'itemized',
      total: 500,
      items: [{ quantity: 3, unitPrice: 0 }],
      extras: 500,
      members: [
        { name: 'Ana', items: [{ itemIndex: 0, quantity: 2 }] },
        { name: 'Ben', items: [{ itemIndex: 0, quantity: 1 }] },
      ],
    });
    assert.deepEqual(amountsOf(result), [250, 250]);
  });

  test('every unit assigned exactly once', () => {
    const unassigned = splitTotal({
      mode: 'itemized',
      total: 10_000,
      items,
      extras: 1000,
      members: [
        {
          name: 'Ana',
          items: [
            { itemIndex: 0, quantity: 1 },
            { itemIndex: 1, quantity: 2 },
          ],
        },
      ],
    });
    assert.deepEqual(errorsOf(unassigned), ['items[1] has 3 units but 2 are assigned']);
    const over = splitTotal({
      mode: 'itemized',
      total: 10_000,
      items,
      extras: 1000,
      members: [
        {
          name: 'Ana',
          items: [
            { itemIndex: 0, quantity: 1 },
            { itemIndex: 1, quantity: 3 },
          ],
        },
        {
          name: 'Ben',
          items: [
            { itemIndex: 0, quantity: 1 },
            { itemIndex: 1, quantity: 1 },
          ],
        },
      ],
    });
    assert.deepEqual(errorsOf(over), [
      'items[0] has 1 unit but 2 are assigned',
      'items[1] has 3 units but 4 are assigned',
    ]);
    const badIndex = splitTotal({
      mode: 'itemized',
      total: 10_000,
      items,
      extras: 1000,
      members: [{ name: 'Ana', items: [{ itemIndex: 2, quantity: 1 }] }],
    });
    assert.match(
      errorsOf(badIndex)[0]!,
      /^members\[0\]\.items\[0\]\.item_index must be an item index from 0 to 1, got 2$/,
    );
  });

  test('items and extras must add up to the total', () => {
    const result = splitTotal({ mode: 'itemized', total: 9000, items, extras: 1000, members: names(1) });
    assert.deepEqual(errorsOf(result), [
      'the items, tax, shipping and fees add up to 10000 but the total is 9000',
    ]);
  });

  test('a paid member keeps their amount; pending members share the rest', () => {
    const members: MemberSpec[] = [
      { name: 'Ana', items: [{ itemIndex: 0, quantity: 1 }] },
      { name: 'Ben', items: [{ itemIndex: 1, quantity: 3 }] },
    ];
    // Ana paid 6667 (6000 + 667 of the 1000 extras); Ben pays 3000 + the 333 left.
    const result = splitTotal({
      mode: 'itemized',
      total: 10_000,
      items,
      extras: 1000,
      members,
      locked: [6667, null],
    });
    assert.deepEqual(amountsOf(result), [6667, 3333]);
    const tooMuch = splitTotal({
      mode: 'itemized',
      total: 10_000,
      items,
      extras: 1000,
      members: [
        {
          name: 'Ana',
          items: [
            { itemIndex: 0, quantity: 1 },
            { itemIndex: 1, quantity: 1 },
          ],
        },
        { name: 'Ben', items: [{ itemIndex: 1, quantity: 2 }] },
      ],
      locked: [6667, null],
    });
    assert.deepEqual(errorsOf(tooMuch), [
      'members[0] has paid 6667, less than the 7000 of items assigned to them; a paid share cannot change',
    ]);
  });
});

describe('custom', () => {
  test('the given amounts, when they add up to the total', () => {
    const members = [
      { name: 'Ana', amountCents: 5000 },
      { name: 'Ben', amountCents: 3000 },
      { name: 'Cy', amountCents: 2000 },
    ];
    assert.deepEqual(
      amountsOf(splitTotal({ mode: 'custom', total: 10_000, members, ...noItems })),
      [5000, 3000, 2000],
    );
  });

  test('amounts that do not add up are refused with the sum and the total', () => {
    const members = [
      { name: 'Ana', amountCents: 5000 },
      { name: 'Ben', amountCents: 4000 },
    ];
    assert.deepEqual(errorsOf(splitTotal({ mode: 'custom', total: 10_000, members, ...noItems })), [
      'the amounts add up to 9000 but the total is 10000',
    ]);
  });

  test('each amount given, a non-negative integer', () => {
    const members = [{ name: 'Ana', amountCents: -1 }, { name: 'Ben', amountCents: 10.5 }, { name: 'Cy' }];
    assert.deepEqual(errorsOf(splitTotal({ mode: 'custom', total: 10_000, members, ...noItems })), [
      'members[0].amount_cents must be a non-negative integer, got -1',
      'members[1].amount_cents must be a non-negative integer, got 10.5',
      'members[2].amount_cents is required',
    ]);
  });

  test('a paid amount may be repeated or left out, not changed', () => {
    const locked = [null, 3000];
    const keep = [{ name: 'Ana', amountCents: 7000 }, { name: 'Ben' }];
    assert.deepEqual(
      amountsOf(splitTotal({ mode: 'custom', total: 10_000, members: keep, locked, ...noItems })),
      [7000, 3000],
    );
    const change = [
      { name: 'Ana', amountCents: 6000 },
      { name: 'Ben', amountCents: 4000 },
    ];
    assert.deepEqual(
      errorsOf(splitTotal({ mode: 'custom', total: 10_000, members: change, locked, ...noItems })),
      ['members[1] has paid 3000, so amount_cents must stay 3000, got 4000'],
    );
  });
});

describe('percentage', () => {
  test('basis points by largest remainder, ties to the earlier member', () => {
    const split = (total: number, points: number[]) =>
      splitTotal({
        mode: 'percentage',
        total,
        members: points.map((basisPoints) => ({ name: 'm', basisPoints })),
        ...noItems,
      });
    assert.deepEqual(amountsOf(split(10_000, [5000, 3000, 2000])), [5000, 3000, 2000]);
    assert.deepEqual(amountsOf(split(1000, [3333, 3333, 3334])), [333, 333, 334]);
    // 100 × 1/3 each: remainders tie, so the leftover cent goes to the first member.
    assert.deepEqual(amountsOf(split(100, [3333, 3334, 3333])), [33, 34, 33]);
    assert.deepEqual(amountsOf(split(101, [5000, 5000])), [51, 50]);
    assert.deepEqual(amountsOf(split(999, [10_000, 0])), [999, 0]);
  });

  test('basis points must add up to 10,000', () => {
    const members = [
      { name: 'Ana', basisPoints: 6000 },
      { name: 'Ben', basisPoints: 3000 },
    ];
    assert.deepEqual(errorsOf(splitTotal({ mode: 'percentage', total: 1000, members, ...noItems })), [
      'the basis points add up to 9000 but must add up to 10000',
    ]);
    const missing = [{ name: 'Ana', basisPoints: 10_000 }, { name: 'Ben' }];
    assert.deepEqual(
      errorsOf(splitTotal({ mode: 'percentage', total: 1000, members: missing, ...noItems })),
      ['members[1].basis_points is required in percentage mode'],
    );
  });

  test('with a paid member, the rest goes to the pending ones by their basis points', () => {
    const members = [
      { name: 'Ana', basisPoints: 4000 },
      { name: 'Ben', basisPoints: 3000 },
      { name: 'Cy', basisPoints: 3000 },
    ];
    // Ben paid 2500; 7500 left for Ana and Cy in the ratio 4000 : 3000.
    const result = splitTotal({
      mode: 'percentage',
      total: 10_000,
      members,
      locked: [null, 2500, null],
      ...noItems,
    });
    assert.deepEqual(amountsOf(result), [4286, 2500, 3214]);
    const noWeight = [
      { name: 'Ana', basisPoints: 0 },
      { name: 'Ben', basisPoints: 10_000 },
    ];
    assert.deepEqual(
      errorsOf(
        splitTotal({ mode: 'percentage', total: 1000, members: noWeight, locked: [null, 600], ...noItems }),
      ),
      ['400 is left to pay but the pending members have 0 basis points between them'],
    );
  });
});

describe('host-pays', () => {
  test('the organizer pays what the others leave', () => {
    const members = [{ name: 'Host' }, { name: 'Ben', amountCents: 2000 }, { name: 'Cy', amountCents: 1500 }];
    assert.deepEqual(
      amountsOf(splitTotal({ mode: 'host-pays', total: 10_000, members, ...noItems })),
      [6500, 2000, 1500],
    );
    const alone = splitTotal({ mode: 'host-pays', total: 10_000, members: [{ name: 'Host' }], ...noItems });
    assert.deepEqual(amountsOf(alone), [10_000]);
  });

  test('the others may not exceed the total; the organizer may pay 0', () => {
    const over = [{ name: 'Host' }, { name: 'Ben', amountCents: 6000 }, { name: 'Cy', amountCents: 5000 }];
    assert.deepEqual(errorsOf(splitTotal({ mode: 'host-pays', total: 10_000, members: over, ...noItems })), [
      "the other members' amounts add up to 11000, more than the total 10000",
    ]);
    const exact = [{ name: 'Host' }, { name: 'Ben', amountCents: 10_000 }];
    assert.deepEqual(
      amountsOf(splitTotal({ mode: 'host-pays', total: 10_000, members: exact, ...noItems })),
      [0, 10_000],
    );
  });

  test("a paid organizer's share cannot change", () => {
    const members = [{ name: 'Host' }, { name: 'Ben', amountCents: 3000 }];
    assert.deepEqual(
      errorsOf(splitTotal({ mode: 'host-pays', total: 10_000, members, locked: [8000, null], ...noItems })),
      [
        'members[0] (the organizer) has paid 8000, but the other amounts would leave them 7000; ' +
          'a paid share cannot change',
      ],
    );
    assert.deepEqual(
      amountsOf(splitTotal({ mode: 'host-pays', total: 10_000, members, locked: [7000, null], ...noItems })),
      [7000, 3000],
    );
  });
});

describe('input checks', () => {
  test('at least one member, a known mode, sane locks', () => {
    assert.deepEqual(errorsOf(splitTotal({ mode: 'equal', total: 100, members: [], ...noItems })), [
      'a group needs at least 1 member',
    ]);
    assert.match(
      errorsOf(splitTotal({ mode: 'thirds' as 'equal', total: 100, members: names(2), ...noItems }))[0]!,
      /^mode must be one of equal, itemized, custom, percentage, host-pays/,
    );
    assert.deepEqual(
      errorsOf(splitTotal({ mode: 'equal', total: 100, members: names(2), locked: [null], ...noItems })),
      ['locked has 1 entries but there are 2 members'],
    );
    assert.deepEqual(
      errorsOf(splitTotal({ mode: 'equal', total: 100, members: names(2), locked: [60, 50], ...noItems })),
      ['the paid shares add up to 110, more than the total 100'],
    );
    assert.deepEqual(errorsOf(splitTotal({ mode: 'equal', total: 1.5, members: names(2), ...noItems })), [
      'total must be a non-negative integer, got 1.5',
    ]);
  });
});

describe('properties', () => {
  test('shares are non-negative integers adding up exactly to the total, the same every time', () => {
    fc.assert(
      fc.property(anyValidArb, (input) => {
        const amounts = amountsOf(splitTotal(input));
        assertShares(amounts, input);
        assert.deepEqual(splitTotal(structuredClone(input)), { ok: true, amounts });
      }),
      { numRuns: 500 },
    );
  });

  test('re-splitting with some members paid keeps their amounts and still adds up', () => {
    fc.assert(
      fc.property(
        anyValidArb,
        fc.array(fc.boolean(), { minLength: 50, maxLength: 50 }),
        (input, paidMask) => {
          const first = amountsOf(splitTotal(input));
          const locked = first.map((amount, i) => (paidMask[i] ? amount : null));
          const again = amountsOf(splitTotal({ ...input, locked }));
          assertShares(again, input);
          for (const [i, paid] of locked.entries()) if (paid !== null) assert.equal(again[i], paid);
          // Equal, custom and host-pays give back exactly the first split when nothing else changed.
          if (input.mode === 'equal' || input.mode === 'custom' || input.mode === 'host-pays') {
            assert.deepEqual(again, first);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  test('members joining an equal split never move a paid share', () => {
    fc.assert(
      fc.property(equalArb, fc.integer({ min: 1, max: 10 }), fc.nat(), (input, joining, seed) => {
        const first = amountsOf(splitTotal(input));
        const locked = [
          ...first.map((amount, i) => ((seed >> (i % 30)) & 1 ? amount : null)),
          ...Array(joining).fill(null),
        ];
        const members = names(input.members.length + joining);
        const again = amountsOf(splitTotal({ ...input, members, locked }));
        assert.equal(
          again.reduce((a, b) => a + b, 0),
          input.total,
        );
        for (const [i, paid] of locked.entries()) if (paid !== null) assert.equal(again[i], paid);
      }),
    );
  });

  test('custom amounts that do not add up are refused', () => {
    fc.assert(
      fc.property(
        customArb,
        fc.integer({ min: -1000, max: 1000 }).filter((d) => d !== 0),
        (input, delta) => {
          const members = input.members.map((member, i) =>
            i === 0 ? { ...member, amountCents: member.amountCents! + delta } : member,
          );
          fc.pre(members[0]!.amountCents! >= 0);
          assert.match(
            errorsOf(splitTotal({ ...input, members })).join('\n'),
            /the amounts add up to \d+ but the total is \d+/,
          );
        },
      ),
    );
  });

  test('basis points other than 10,000 in all are refused', () => {
    fc.assert(
      fc.property(percentageArb, fc.integer({ min: 1, max: 10_000 }), (input, delta) => {
        const members = input.members.map((member, i) =>
          i === 0 ? { ...member, basisPoints: (member.basisPoints! + delta) % 10_001 } : member,
        );
        fc.pre(members.reduce((sum, member) => sum + member.basisPoints!, 0) !== 10_000);
        assert.match(
          errorsOf(splitTotal({ ...input, members })).join('\n'),
          /basis points add up to \d+ but must add up to 10000/,
        );
      }),
    );
  });

  test('an unassigned unit is refused, naming the item', () => {
    fc.assert(
      fc.property(itemizedArb, fc.nat(), (input, pick) => {
        const owners = input.members.flatMap((member, m) =>
          (member.items ?? []).map((_, k) => [m, k] as const),
        );
        const [m, k] = owners[pick % owners.length]!;
        const dropped = input.members[m]!.items![k]!;
        const members = input.members.map((member, i) =>
          i === m ? { ...member, items: member.items!.filter((_, j) => j !== k) } : member,
        );
        const item = input.items[dropped.itemIndex]!;
        assert.ok(
          errorsOf(splitTotal({ ...input, members })).includes(
            `items[${dropped.itemIndex}] has ${item.quantity} ${plural(item.quantity, 'unit', 'units')} ` +
              `but ${item.quantity - 1} ${plural(item.quantity - 1, 'is', 'are')} assigned`,
          ),
        );
      }),
    );
  });

  test('host-pays with the others over the total is refused', () => {
    fc.assert(
      fc.property(hostPaysArb, fc.integer({ min: 1, max: 1_000_000 }), (input, over) => {
        fc.pre(input.members.length >= 2);
        const others = input.members.slice(1).reduce((sum, member) => sum + member.amountCents!, 0);
        const members = input.members.map((member, i) =>
          i === 1 ? { ...member, amountCents: member.amountCents! + (input.total - others) + over } : member,
        );
        assert.match(
          errorsOf(splitTotal({ ...input, members })).join('\n'),
          /the other members' amounts add up to \d+, more than the total \d+/,
        );
      }),
    );
  });
});

// In a currency charged in steps (KWD in tens of fils, MGA in whole ariary): shares still add up to the
// total exactly, and every pending share is a whole number of steps.
describe('worked examples in steps', () => {
  test('equal: KWD 10.000 over three is 3.340, 3.330, 3.330 (leftover steps to the first)', () => {
    assert.deepEqual(
      amountsOf(splitTotal({ mode: 'equal', total: 10_000, members: names(3), step: 10, ...noItems })),
      [3_340, 3_330, 3_330],
    );
  });

  test('percentage: MGA 1,000.00 by 1/3 each is whole ariary', () => {
    const members = [3_333, 3_333, 3_334].map((basisPoints, i) => ({ name: `m${i}`, basisPoints }));
    assert.deepEqual(
      amountsOf(splitTotal({ mode: 'percentage', total: 100_000, members, step: 100, ...noItems })),
      [33_300, 33_300, 33_400],
    );
  });

  test('itemized: item subtotals off the step are rounded by largest remainder, the sum kept', () => {
    // KWD: items 1.234 and 2.345, shipping 0.421: 4.000 in all. The shipping spread 1234:2345 by largest
    // remainder is 0.145 and 0.276, so the exact shares are 1.379 and 2.621; in steps of 0.010 they are
    // 1.370 and 2.620 with one step left, which goes to the larger remainder (9 against 1): 1.380, 2.620.
    const members = [
      { name: 'Ada', items: [{ itemIndex: 0, quantity: 1 }] },
      { name: 'Ben', items: [{ itemIndex: 1, quantity: 1 }] },
    ];
    const items = [
      { quantity: 1, unitPrice: 1_234 },
      { quantity: 1, unitPrice: 2_345 },
    ];
    const amounts = amountsOf(
      splitTotal({ mode: 'itemized', total: 4_000, members, items, extras: 421, step: 10 }),
    );
    assert.deepEqual(amounts, [1_380, 2_620]);
  });

  test('custom and host-pays: an amount off the step is refused, naming the member', () => {
    const custom = [
      { name: 'Ada', amountCents: 6_005 },
      { name: 'Ben', amountCents: 3_995 },
    ];
    assert.deepEqual(
      errorsOf(splitTotal({ mode: 'custom', total: 10_000, members: custom, step: 10, ...noItems })),
      [
        'members[0].amount_cents (Ada) must be a multiple of 10, the step a card is charged in this currency; got 6005',
        'members[1].amount_cents (Ben) must be a multiple of 10, the step a card is charged in this currency; got 3995',
      ],
    );
    const hostPays = [{ name: 'Host' }, { name: 'Guest', amountCents: 1_234 }];
    assert.deepEqual(
      errorsOf(splitTotal({ mode: 'host-pays', total: 10_000, members: hostPays, step: 10, ...noItems })),
      [
        'members[1].amount_cents (Guest) must be a multiple of 10, the step a card is charged in this currency; got 1234',
      ],
    );
    // 0 is a whole number of steps: the organizer pays it all.
    const free = [{ name: 'Host' }, { name: 'Guest', amountCents: 0 }];
    assert.deepEqual(
      amountsOf(splitTotal({ mode: 'host-pays', total: 10_000, members: free, step: 10, ...noItems })),
      [10_000, 0],
    );
  });

  test('a total off the step is refused', () => {
    assert.deepEqual(
      errorsOf(splitTotal({ mode: 'equal', total: 10_005, members: names(2), step: 10, ...noItems })),
      ['total 10005 is not a multiple of 10, the step this currency is charged in'],
    );
  });

  test('a paid share off the step (made before steps applied) leaves a rest that cannot be divided', () => {
    const result = splitTotal({
      mode: 'equal',
      total: 10_000,
      members: names(3),
      locked: [3_333, null, null],
      step: 10,
      ...noItems,
    });
    assert.deepEqual(errorsOf(result), [
      'the 6667 left to pay is not a multiple of 10, the step this currency is charged in',
    ]);
  });
});

const stepArb = fc.constantFrom(1, 10, 100);

/** A total in steps, a group size, and the step. */
const baseArb = fc.record({
  step: stepArb,
  units: fc.integer({ min: 0, max: 999_999 }),
  n: fc.integer({ min: 1, max: 20 }),
});

/** n parts of `units` steps, each a multiple of `step`. */
const partsArb = (units: number, n: number, step: number) =>
  fc.array(fc.integer({ min: 0, max: units }), { minLength: n - 1, maxLength: n - 1 }).map((cuts) => {
    const points = [0, ...cuts.sort((a, b) => a - b), units];
    return points.slice(1).map((point, i) => (point - points[i]!) * step);
  });

const caseArb = baseArb.chain(({ step, units, n }) => {
  const total = units * step;
  const equal = fc.constant({ mode: 'equal' as const, total, step, members: names(n), ...noItems });
  const percentage = partsArb(10_000, n, 1).map((points) => ({
    mode: 'percentage' as const,
    total,
    step,
    members: points.map((basisPoints, i) => ({ name: `m${i}`, basisPoints })),
    ...noItems,
  }));
  const custom = partsArb(units, n, step).map((parts) => ({
    mode: 'custom' as const,
    total,
    step,
    members: parts.map((amountCents, i) => ({ name: `m${i}`, amountCents })),
    ...noItems,
  }));
  const hostPays = partsArb(units, n, step).map((parts) => ({
    mode: 'host-pays' as const,
    total,
    step,
    members: [{ name: 'host' }, ...parts.slice(1).map((amountCents, i) => ({ name: `m${i}`, amountCents }))],
    ...noItems,
  }));
  // Items at any price (off the step), the extras making up the total in steps.
  const itemized = fc
    .array(
      fc.record({ quantity: fc.integer({ min: 1, max: 4 }), unitPrice: fc.integer({ min: 0, max: 50_000 }) }),
      {
        minLength: 1,
        maxLength: 6,
      },
    )
    .chain((items) => {
      const itemsSum = items.reduce((sum, item) => sum + item.quantity * item.unitPrice, 0);
      const itemTotal = Math.ceil(itemsSum / step) * step + units * step;
      const units$ = items.flatMap((item, itemIndex) =>
        Array.from({ length: item.quantity }, () => itemIndex),
      );
      return fc
        .array(fc.integer({ min: 0, max: n - 1 }), { minLength: units$.length, maxLength: units$.length })
        .map((owners) => ({
          mode: 'itemized' as const,
          total: itemTotal,
          step,
          items,
          extras: itemTotal - itemsSum,
          members: names(n).map((member, m) => ({
            ...member,
            items: units$.flatMap((itemIndex, u) => (owners[u] === m ? [{ itemIndex, quantity: 1 }] : [])),
          })),
        }));
    });
  return fc.oneof(equal, percentage, custom, hostPays, itemized);
});

test('property: shares add up to the total and are each a whole number of steps', () => {
  fc.assert(
    fc.property(caseArb, (input) => {
      const result = splitTotal(input);
      assert.ok(result.ok, JSON.stringify({ input, result }));
      assert.equal(
        result.amounts.reduce((a, b) => a + b, 0),
        input.total,
      );
      for (const amount of result.amounts)
        assert.equal(amount % input.step, 0, JSON.stringify({ input, result }));
    }),
    { numRuns: 500 },
  );
});
