import type { IntervalSet } from './interval-set.js';

/**
 * The rules of one chain indexed by the destination addresses they require, so a region narrowed
 * to a few addresses visits only the rules that can meet it. Without this, every piece split off
 * a long list of per-network RETURNs would walk all later rules: quadratic in the chain's length.
 */
export interface AddressIndex {
  /** Rules that require destination addresses: their intervals, sorted by start. */
  readonly starts: readonly bigint[];
  readonly ends: readonly bigint[];
  readonly rules: readonly number[];
  /** Largest end among the entries up to each position. */
  readonly reach: readonly bigint[];
  /** Rules that do not restrict the destination (or restrict it too widely to index), in order. */
  readonly always: readonly number[];
}

/** Entries wider than this many intervals are not indexed: they are candidates for every region. */
const MAX_INTERVALS = 8;

export function buildAddressIndex(daddrs: ReadonlyArray<IntervalSet | undefined>): AddressIndex {
  const entries: Array<[bigint, bigint, number]> = [];
  const always: number[] = [];
  daddrs.forEach((daddr, rule) => {
    if (daddr === undefined || daddr.length > MAX_INTERVALS) always.push(rule);
    else for (const [from, to] of daddr) entries.push([from, to, rule]);
  });
  entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[2] - b[2]));
  const reach: bigint[] = [];
  for (const [, to] of entries)
    reach.push(
      reach.length === 0 || to > (reach[reach.length - 1] as bigint) ? to : (reach[reach.length - 1] as bigint),
    );
  return {
    starts: entries.map((e) => e[0]),
    ends: entries.map((e) => e[1]),
    rules: entries.map((e) => e[2]),
    reach,
    always,
  };
}

function lastStartAtMost(index: AddressIndex, value: bigint): number {
  let low = 0;
  let high = index.starts.length - 1;
  let found = -1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if ((index.starts[middle] as bigint) <= value) {
      found = middle;
      low = middle + 1;
    } else {
      high = middle - 1;
    }
  }
  return found;
}

/** The rules, from `first` on and in order, that can meet a region with these destinations. */
export function candidateRules(index: AddressIndex, daddr: IntervalSet, first: number): number[] {
  const found = new Set<number>();
  for (const [from, to] of daddr) {
    for (let k = lastStartAtMost(index, to); k >= 0 && (index.reach[k] as bigint) >= from; k--) {
      if ((index.ends[k] as bigint) >= from && (index.rules[k] as number) >= first) found.add(index.rules[k] as number);
    }
  }
  for (const rule of index.always) if (rule >= first) found.add(rule);
  return [...found].sort((a, b) => a - b);
}
