/**
 * A set of integers as sorted, disjoint, non-adjacent inclusive intervals. Addresses (up to 128
 * bits), ports, uids and gids are all such sets; bigint keeps one representation for all of them.
 */
export type Interval = readonly [bigint, bigint];
export type IntervalSet = readonly Interval[];

export const EMPTY_SET: IntervalSet = [];

export function span(from: bigint, to: bigint): IntervalSet {
  return from > to ? EMPTY_SET : [[from, to]];
}

/** Sets this long against one this short take the binary-search path: a region's address set grows with every RETURN it passes. */
const LONG = 16;
const SHORT = 4;

/** Whether the one-interval set `cover` holds all of `set`. */
function covers(cover: IntervalSet, set: IntervalSet): boolean {
  const only = cover.length === 1 ? (cover[0] as Interval) : undefined;
  return (
    only !== undefined &&
    set.length > 0 &&
    only[0] <= (set[0] as Interval)[0] &&
    (set[set.length - 1] as Interval)[1] <= only[1]
  );
}

export function intersectSets(a: IntervalSet, b: IntervalSet): IntervalSet {
  // Most intersections leave one side as it is (a field the other does not narrow): share it.
  if (covers(b, a)) return a;
  if (covers(a, b)) return b;
  if (a.length > LONG && b.length <= SHORT) return intersectShort(a, b);
  if (b.length > LONG && a.length <= SHORT) return intersectShort(b, a);
  const out: Interval[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const [aFrom, aTo] = a[i] as Interval;
    const [bFrom, bTo] = b[j] as Interval;
    const from = aFrom > bFrom ? aFrom : bFrom;
    const to = aTo < bTo ? aTo : bTo;
    if (from <= to) out.push([from, to]);
    if (aTo < bTo) i++;
    else j++;
  }
  return out;
}

function intersectShort(long: IntervalSet, short: IntervalSet): IntervalSet {
  const out: Interval[] = [];
  for (const [from, to] of short) {
    for (let k = firstEndingFrom(long, from); k < long.length && (long[k] as Interval)[0] <= to; k++) {
      const [lFrom, lTo] = long[k] as Interval;
      out.push([lFrom > from ? lFrom : from, lTo < to ? lTo : to]);
    }
  }
  return out;
}

export function setsMeet(a: IntervalSet, b: IntervalSet): boolean {
  if (a.length > LONG && b.length <= SHORT) return meetShort(a, b);
  if (b.length > LONG && a.length <= SHORT) return meetShort(b, a);
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a[i] as Interval;
    const y = b[j] as Interval;
    if (x[0] <= y[1] && y[0] <= x[1]) return true;
    if (x[1] < y[1]) i++;
    else j++;
  }
  return false;
}

function meetShort(long: IntervalSet, short: IntervalSet): boolean {
  for (const [from, to] of short) {
    const k = firstEndingFrom(long, from);
    if (k < long.length && (long[k] as Interval)[0] <= to) return true;
  }
  return false;
}

/** `a` without `b`. */
export function subtractSets(a: IntervalSet, b: IntervalSet): IntervalSet {
  if (a.length > LONG && b.length === 1) {
    // Only the intervals `b` touches change; the rest are copied in bulk.
    const [from, to] = b[0] as Interval;
    const first = firstEndingFrom(a, from);
    let last = first;
    while (last < a.length && (a[last] as Interval)[0] <= to) last++;
    if (first === last) return a;
    // The touched part by the linear walk: it can be long too (one wide RETURN after many narrow ones).
    return [...a.slice(0, first), ...subtractInOrder(a.slice(first, last), b), ...a.slice(last)];
  }
  return subtractInOrder(a, b);
}

function subtractInOrder(a: IntervalSet, b: IntervalSet): IntervalSet {
  const out: Interval[] = [];
  let j = 0;
  for (const [from, to] of a) {
    let start = from;
    while (j < b.length && (b[j] as Interval)[1] < start) j++;
    let k = j;
    while (k < b.length && start <= to) {
      const [bFrom, bTo] = b[k] as Interval;
      if (bFrom > to) break;
      if (bFrom > start) out.push([start, bFrom - 1n]);
      start = bTo + 1n;
      k++;
    }
    if (start <= to) out.push([start, to]);
  }
  return out;
}

export function unionSets(a: IntervalSet, b: IntervalSet): IntervalSet {
  const all = [...a, ...b].sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
  const out: Array<[bigint, bigint]> = [];
  for (const [from, to] of all) {
    const last = out[out.length - 1];
    if (last && from <= last[1] + 1n) {
      if (to > last[1]) last[1] = to;
    } else {
      out.push([from, to]);
    }
  }
  return out;
}

export function sameSets(a: IntervalSet, b: IntervalSet): boolean {
  return (
    a.length === b.length &&
    a.every((interval, index) => interval[0] === (b[index] as Interval)[0] && interval[1] === (b[index] as Interval)[1])
  );
}

/** The first interval of `set` that ends at or after `value` (set.length when none). */
function firstEndingFrom(set: IntervalSet, value: bigint): number {
  let low = 0;
  let high = set.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if ((set[middle] as Interval)[1] < value) low = middle + 1;
    else high = middle;
  }
  return low;
}
