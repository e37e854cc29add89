import { connectionSpace } from '../../src/trace/connection-space.js';
import { describe, expect, it } from 'vitest';
import { parseIptablesSave } from '../../src/rules/iptables-save/parse-iptables-save.js';
import { buildInterfaceAtoms } from '../../src/trace/interface-atoms.js';
import type { Region } from '../../src/trace/region.js';
import { budgetOf, traceRegion } from '../../src/trace/trace-region.js';
import {
  EMPTY_SET,
  intersectSets,
  sameSets,
  setsMeet,
  span,
  subtractSets,
  unionSets,
  type IntervalSet,
} from '../../src/trace/interval-set.js';

// The sets the tracer keeps per header field: ports 1-65535, uids 0-0xffffffff, IPv4 addresses as
// 32-bit numbers. Each case states the exact result at the boundaries (touching, adjacent,
// contained, empty) where an off-by-one in the merge loops would show.
const set = (...pairs: Array<[number, number]>): IntervalSet =>
  pairs.map(([from, to]) => [BigInt(from), BigInt(to)] as const);

// 20 disjoint intervals [0,2], [10,12], ..., [190,192]: a destination set after twenty RETURNs,
// long enough (more than 16) for the binary-search paths.
const long = set(...Array.from({ length: 20 }, (_, k): [number, number] => [10 * k, 10 * k + 2]));

describe('span', () => {
  it('one value, a whole field, and an empty span', () => {
    expect(span(5n, 5n)).toEqual(set([5, 5]));
    expect(span(1n, 65535n)).toEqual(set([1, 65535]));
    expect(span(0n, 0xffffffffn)).toEqual([[0n, 0xffffffffn]]);
    expect(span(6n, 5n)).toEqual([]);
    expect(span(6n, 5n)).toBe(EMPTY_SET);
  });
});

describe('intersectSets', () => {
  it('with an empty side is empty', () => {
    expect(intersectSets(EMPTY_SET, set([1, 65535]))).toEqual([]);
    expect(intersectSets(set([1, 65535]), EMPTY_SET)).toEqual([]);
    expect(intersectSets(set([3, 4], [8, 9]), EMPTY_SET)).toEqual([]);
  });

  it('a side one interval wide that holds the other, boundaries included, returns the other itself', () => {
    const narrow = set([3, 4], [6, 7]);
    expect(intersectSets(narrow, set([3, 7]))).toBe(narrow);
    const wide = set([0, 10]);
    const inside = set([0, 2], [10, 10]);
    expect(intersectSets(wide, inside)).toBe(inside);
    const same = set([1, 65535]);
    expect(intersectSets(same, set([1, 65535]))).toBe(same);
  });

  it('a one-interval side that misses an end of the other is cut there', () => {
    expect(intersectSets(set([3, 4], [6, 7]), set([3, 6]))).toEqual(set([3, 4], [6, 6]));
    expect(intersectSets(set([3, 4], [6, 7]), set([4, 7]))).toEqual(set([4, 4], [6, 7]));
    expect(intersectSets(set([4, 7]), set([3, 4], [6, 7]))).toEqual(set([4, 4], [6, 7]));
  });

  it('intervals that touch at one value meet in that value; adjacent ones do not meet', () => {
    expect(intersectSets(set([1, 5], [8, 9]), set([5, 8]))).toEqual(set([5, 5], [8, 8]));
    expect(intersectSets(set([1, 4], [9, 9]), set([5, 8]))).toEqual([]);
  });

  it('two sets of several intervals, walked in step', () => {
    expect(intersectSets(set([0, 2], [4, 6], [8, 10]), set([1, 4], [6, 9]))).toEqual(
      set([1, 2], [4, 4], [6, 6], [8, 9]),
    );
    expect(intersectSets(set([1, 4], [6, 9]), set([0, 2], [4, 6], [8, 10]))).toEqual(
      set([1, 2], [4, 4], [6, 6], [8, 9]),
    );
    expect(intersectSets(set([0, 5], [7, 9]), set([0, 5], [7, 9]))).toEqual(set([0, 5], [7, 9]));
  });

  it('a long set against a short one, either way round', () => {
    const short = set([5, 12], [25, 31], [185, 300]);
    const expected = set([10, 12], [30, 31], [190, 192]);
    expect(intersectSets(long, short)).toEqual(expected);
    expect(intersectSets(short, long)).toEqual(expected);
    // Every interval of the long set at once, each clipped at its end.
    expect(intersectSets(long, set([1, 181], [400, 500]))).toEqual(
      set([1, 2], ...Array.from({ length: 17 }, (_, k): [number, number] => [10 * k + 10, 10 * k + 12]), [180, 181]),
    );
    expect(intersectSets(long, set([3, 9], [13, 19]))).toEqual([]);
    expect(intersectSets(set([0, 0], [192, 192], [194, 1000]), long)).toEqual(set([0, 0], [192, 192]));
  });
});

describe('setsMeet', () => {
  it('empty sets meet nothing', () => {
    expect(setsMeet(EMPTY_SET, set([1, 65535]))).toBe(false);
    expect(setsMeet(set([1, 65535]), EMPTY_SET)).toBe(false);
  });

  it('touching intervals meet, adjacent ones do not', () => {
    expect(setsMeet(set([1, 5]), set([5, 9]))).toBe(true);
    expect(setsMeet(set([5, 9]), set([1, 5]))).toBe(true);
    expect(setsMeet(set([1, 4]), set([5, 9]))).toBe(false);
    expect(setsMeet(set([5, 9]), set([1, 4]))).toBe(false);
  });

  it('walks past intervals that end first on either side', () => {
    expect(setsMeet(set([0, 1], [10, 11]), set([3, 4], [11, 20]))).toBe(true);
    expect(setsMeet(set([3, 4], [11, 20]), set([0, 1], [10, 11]))).toBe(true);
    expect(setsMeet(set([0, 1], [5, 6]), set([2, 4], [7, 9]))).toBe(false);
    expect(setsMeet(set([0, 9], [20, 21]), set([10, 19], [21, 30]))).toBe(true);
  });

  it('a long set against a short one, either way round', () => {
    expect(setsMeet(long, set([3, 9]))).toBe(false);
    expect(setsMeet(set([3, 9]), long)).toBe(false);
    expect(setsMeet(long, set([3, 10]))).toBe(true);
    expect(setsMeet(set([2, 9]), long)).toBe(true);
    expect(setsMeet(long, set([193, 65535]))).toBe(false);
    expect(setsMeet(long, set([3, 9], [13, 19], [192, 192]))).toBe(true);
    expect(setsMeet(long, set([3, 9], [13, 19], [193, 199]))).toBe(false);
  });
});

describe('subtractSets', () => {
  it('a hole in the middle, at either end, or the whole interval', () => {
    expect(subtractSets(set([0, 10]), set([3, 4]))).toEqual(set([0, 2], [5, 10]));
    expect(subtractSets(set([0, 10]), set([0, 0]))).toEqual(set([1, 10]));
    expect(subtractSets(set([0, 10]), set([10, 10]))).toEqual(set([0, 9]));
    expect(subtractSets(set([0, 10]), set([0, 10]))).toEqual([]);
    expect(subtractSets(set([1, 65535]), set([0, 70000]))).toEqual([]);
    expect(subtractSets(set([0, 0xffffffff]), set([0, 0]))).toEqual([[1n, 0xffffffffn]]);
  });

  it('nothing removed when the other set lies before, after or between', () => {
    expect(subtractSets(set([5, 9]), set([1, 2], [3, 4]))).toEqual(set([5, 9]));
    expect(subtractSets(set([5, 9]), set([10, 12]))).toEqual(set([5, 9]));
    expect(subtractSets(set([0, 1], [5, 6]), set([2, 4]))).toEqual(set([0, 1], [5, 6]));
    expect(subtractSets(set([0, 10]), EMPTY_SET)).toEqual(set([0, 10]));
    expect(subtractSets(EMPTY_SET, set([0, 10]))).toEqual([]);
  });

  it('several holes in one interval, and one hole across two', () => {
    expect(subtractSets(set([0, 20]), set([2, 3], [5, 6], [25, 30]))).toEqual(set([0, 1], [4, 4], [7, 20]));
    expect(subtractSets(set([0, 3], [5, 9]), set([2, 6]))).toEqual(set([0, 1], [7, 9]));
    expect(subtractSets(set([0, 3], [5, 9], [12, 14]), set([1, 1], [3, 5], [9, 12]))).toEqual(
      set([0, 0], [2, 2], [6, 8], [13, 14]),
    );
  });

  it('one interval out of a long set: only the intervals it touches change', () => {
    expect(subtractSets(long, set([11, 31]))).toEqual(
      set(
        [0, 2],
        [10, 10],
        [32, 32],
        ...Array.from({ length: 16 }, (_, k): [number, number] => [10 * k + 40, 10 * k + 42]),
      ),
    );
    expect(subtractSets(long, set([0, 0]))).toEqual(
      set([1, 2], ...long.slice(1).map(([a, b]): [number, number] => [Number(a), Number(b)])),
    );
    expect(subtractSets(long, set([192, 192]))).toEqual([...long.slice(0, 19), [190n, 191n]]);
    expect(subtractSets(long, set([0, 1000]))).toEqual([]);
  });

  it('several intervals out of a long set: each one is removed', () => {
    expect(subtractSets(long, set([11, 11], [21, 21]))).toEqual(
      set(
        [0, 2],
        [10, 10],
        [12, 12],
        [20, 20],
        [22, 22],
        ...long.slice(3).map(([a, b]): [number, number] => [Number(a), Number(b)]),
      ),
    );
  });

  it('a one-value interval removed by the same value', () => {
    expect(subtractSets(set([5, 5]), set([5, 5]))).toEqual([]);
    expect(subtractSets(set([0, 0], [5, 5]), set([5, 5]))).toEqual(set([0, 0]));
  });

  it('one interval that touches nothing of a long set leaves it as it is, shared', () => {
    expect(subtractSets(long, set([3, 9]))).toBe(long);
    expect(subtractSets(long, set([193, 65535]))).toBe(long);
  });
});

describe('unionSets', () => {
  it('adjacent intervals join; a gap of one value stays', () => {
    expect(unionSets(set([1, 4]), set([5, 9]))).toEqual(set([1, 9]));
    expect(unionSets(set([5, 9]), set([1, 4]))).toEqual(set([1, 9]));
    expect(unionSets(set([1, 3]), set([5, 9]))).toEqual(set([1, 3], [5, 9]));
    expect(unionSets(set([5, 9]), set([1, 3]))).toEqual(set([1, 3], [5, 9]));
  });

  it('an interval inside another, overlapping ones, and equal starts', () => {
    expect(unionSets(set([1, 10]), set([2, 3]))).toEqual(set([1, 10]));
    expect(unionSets(set([2, 3]), set([1, 10]))).toEqual(set([1, 10]));
    expect(unionSets(set([1, 6]), set([4, 10]))).toEqual(set([1, 10]));
    expect(unionSets(set([1, 8]), set([1, 3]))).toEqual(set([1, 8]));
    expect(unionSets(set([1, 3]), set([1, 8]))).toEqual(set([1, 8]));
  });

  it('several intervals out of order, and an empty side', () => {
    expect(unionSets(set([20, 30], [40, 50]), set([0, 5], [31, 35], [60, 60]))).toEqual(
      set([0, 5], [20, 35], [40, 50], [60, 60]),
    );
    expect(unionSets(EMPTY_SET, set([0, 65535]))).toEqual(set([0, 65535]));
    expect(unionSets(EMPTY_SET, EMPTY_SET)).toEqual([]);
  });

  it('does not change its arguments', () => {
    const a = set([1, 4]);
    const b = set([2, 9]);
    unionSets(a, b);
    expect(a).toEqual(set([1, 4]));
    expect(b).toEqual(set([2, 9]));
  });
});

describe('sameSets', () => {
  it('compares length, starts and ends', () => {
    expect(sameSets(set([1, 4], [6, 9]), set([1, 4], [6, 9]))).toBe(true);
    expect(sameSets(EMPTY_SET, [])).toBe(true);
    expect(sameSets(set([1, 4]), set([1, 4], [6, 9]))).toBe(false);
    expect(sameSets(set([1, 4], [6, 9]), set([1, 4]))).toBe(false);
    expect(sameSets(set([1, 4], [6, 9]), set([1, 4], [7, 9]))).toBe(false);
    expect(sameSets(set([1, 4], [6, 9]), set([1, 4], [6, 8]))).toBe(false);
    expect(sameSets(set([1, 4]), set([0, 4]))).toBe(false);
  });
});

describe('the region tracer on a long destination set', () => {
  // Twenty RETURNs for every other /16 of 10/8 (skip-outbound-ips style), then one for all of 10/8:
  // the packets left after the twenty hold 21 intervals, of which the /8 touches 20. Subtracting it
  // used to recurse on those 20 without end (RangeError: Maximum call stack size exceeded).
  it('one wide RETURN after many narrow ones: 10/8 accepted, everything else redirected', () => {
    const rules = [
      ...Array.from({ length: 20 }, (_, k) => `-A OUTPUT -d 10.${2 * k}.0.0/16 -j RETURN`),
      '-A OUTPUT -d 10.0.0.0/8 -j RETURN',
      '-A OUTPUT -p tcp -j REDIRECT --to-ports 15001',
    ];
    const parsed = parseIptablesSave(
      ['*nat', ':PREROUTING ACCEPT [0:0]', ':OUTPUT ACCEPT [0:0]', ...rules, 'COMMIT', ''].join('\n'),
      { backend: 'iptables-nft', family: 'ipv4', source: 't' },
    );
    if (!parsed.ok) throw new Error(parsed.error.message);
    const atoms = buildInterfaceAtoms([]);
    const region: Region = connectionSpace('ipv4', atoms.all);
    const pieces = traceRegion(
      { tables: parsed.tables },
      { family: 'ipv4', hook: 'output', atoms },
      region,
      budgetOf(100_000),
    );
    const redirected = pieces.filter((piece) => piece.outcome.kind === 'redirect');
    expect(redirected.map((piece) => piece.region.daddr)).toEqual([
      [
        [0n, 0x09ffffffn],
        [0x0b000000n, 0xffffffffn],
      ],
    ]);
    const accepted = pieces.filter((piece) => piece.outcome.kind === 'accept').map((piece) => piece.region.daddr);
    expect(accepted.reduce(unionSets, EMPTY_SET)).toEqual([[0x0a000000n, 0x0affffffn]]);
    expect(pieces).toHaveLength(redirected.length + accepted.length);
  });
});
