import { intersectMarks, sameMarks, subtractMarks, type MarkSet } from './mark-set.js';
import { intersectSets, sameSets, setsMeet, subtractSets, unionSets, type IntervalSet } from './interval-set.js';

/**
 * A region of packet space: the product of one set per header field (a cube). Every field the
 * rules or the configuration can test is here, so a rule's match is a cube too, and the packets a
 * rule does not match are a few disjoint cubes.
 */
export interface Region {
  /** Bit set over PROTOCOLS. */
  readonly protocols: number;
  readonly saddr: IntervalSet;
  readonly daddr: IntervalSet;
  readonly sport: IntervalSet;
  readonly dport: IntervalSet;
  /** The socket's owner (OUTPUT only; arriving packets have none). */
  readonly uid: IntervalSet;
  readonly gid: IntervalSet;
  /** Bit set over the interface atoms: the out interface in OUTPUT, the in interface in PREROUTING. */
  readonly iface: bigint;
  readonly mark: MarkSet;
  readonly ctmark: MarkSet;
  /** Bit set over CT_STATES. */
  readonly ctstates: number;
}

export const PROTOCOLS = ['tcp', 'udp'] as const;
export const CT_STATES = ['new', 'established', 'related', 'invalid', 'untracked'] as const;

export type Field = keyof Region;
/** Some fields constrained; the others any value. */
export type Constraint = Partial<Region>;

interface FieldOps<T> {
  /** Whether the two sets share a member, without building the intersection. */
  readonly meet: (a: T, b: T) => boolean;
  readonly and: (a: T, b: T) => T;
  readonly minus: (a: T, b: T) => T;
  readonly empty: (a: T) => boolean;
  readonly same: (a: T, b: T) => boolean;
  readonly or: ((a: T, b: T) => T) | undefined;
}

const bits: FieldOps<number> = {
  meet: (a, b) => (a & b) !== 0,
  and: (a, b) => a & b,
  minus: (a, b) => a & ~b,
  empty: (a) => a === 0,
  same: (a, b) => a === b,
  or: (a, b) => a | b,
};
const bigBits: FieldOps<bigint> = {
  meet: (a, b) => (a & b) !== 0n,
  and: (a, b) => a & b,
  minus: (a, b) => a & ~b,
  empty: (a) => a === 0n,
  same: (a, b) => a === b,
  or: (a, b) => a | b,
};
const intervals: FieldOps<IntervalSet> = {
  meet: setsMeet,
  and: intersectSets,
  minus: subtractSets,
  empty: (a) => a.length === 0,
  same: sameSets,
  or: unionSets,
};
// Mark sets are merged only when equal: a union of cubes is rarely one cube.
const marks: FieldOps<MarkSet> = {
  meet: (a, b) => intersectMarks(a, b).length > 0,
  and: intersectMarks,
  minus: subtractMarks,
  empty: (a) => a.length === 0,
  same: sameMarks,
  or: undefined,
};

const OPS: { readonly [K in Field]: FieldOps<Region[K]> } = {
  protocols: bits,
  saddr: intervals,
  daddr: intervals,
  sport: intervals,
  dport: intervals,
  uid: intervals,
  gid: intervals,
  iface: bigBits,
  mark: marks,
  ctmark: marks,
  ctstates: bits,
};

const FIELDS = Object.keys(OPS) as Field[];

function andField<K extends Field>(field: K, a: Region[K], b: Region[K]): Region[K] {
  return (OPS[field] as FieldOps<Region[K]>).and(a, b);
}

function emptyField<K extends Field>(field: K, a: Region[K]): boolean {
  return (OPS[field] as FieldOps<Region[K]>).empty(a);
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** Whether any packet of the region meets the constraint: the tracer's cheap first test. */
export function overlaps(region: Region, constraint: Constraint): boolean {
  // for...in allocates nothing: this runs for every rule a region passes.
  for (const key in constraint) {
    const field = key as Field;
    if (!(OPS[field] as FieldOps<Region[typeof field]>).meet(region[field], constraint[field] as Region[typeof field]))
      return false;
  }
  return true;
}

/** The region inside the constraint, or undefined when nothing is left. */
export function intersect(region: Region, constraint: Constraint): Region | undefined {
  // One copy, made only once a field changes: a copy per field was the analysis's hot spot.
  let out: Mutable<Region> | undefined;
  for (const key in constraint) {
    const field = key as Field;
    const value = andField(field, region[field], constraint[field] as Region[typeof field]);
    if (emptyField(field, value)) return undefined;
    if (value === region[field]) continue;
    out ??= { ...region };
    (out as Record<Field, unknown>)[field] = value;
  }
  return out ?? region;
}

/** The region outside the constraint, as disjoint regions (one per constrained field at most). */
export function subtract(region: Region, constraint: Constraint): Region[] {
  return splitRegion(region, constraint).outside;
}

/**
 * The region inside the constraint (undefined when empty) and the disjoint regions outside it, in
 * one pass: the tracer needs both at every rule that meets a region.
 */
export function splitRegion(region: Region, constraint: Constraint): { inside: Region | undefined; outside: Region[] } {
  const outside: Region[] = [];
  let inside: Mutable<Region> | undefined;
  for (const key in constraint) {
    const field = key as Field;
    const ops = OPS[field] as FieldOps<Region[typeof field]>;
    const limit = constraint[field] as Region[typeof field];
    const current = (inside ?? region)[field];
    const without = ops.minus(current, limit);
    if (!ops.empty(without)) outside.push(withField(inside ?? region, field, without));
    const within = ops.and(current, limit);
    if (ops.empty(within)) return { inside: undefined, outside };
    if (within === current) continue;
    // `inside` is private to this call until it is returned, so it may change in place.
    inside ??= { ...region };
    (inside as Record<Field, unknown>)[field] = within;
  }
  return { inside: inside ?? region, outside };
}

function withField<K extends Field>(region: Region, field: K, value: Region[K]): Region {
  const copy: Mutable<Region> = { ...region };
  (copy as Record<Field, unknown>)[field] = value;
  return copy;
}

/**
 * The fields in which `region` is narrower than `space`, as a constraint: for regions already
 * inside `space` it selects the same packets with fewer fields to test.
 */
export function narrowing(region: Region, space: Region): Constraint {
  const out: Record<string, unknown> = {};
  for (const field of FIELDS)
    if (!(OPS[field] as FieldOps<Region[typeof field]>).same(region[field], space[field])) out[field] = region[field];
  return out;
}

/** Two regions that differ in one field whose sets can be joined become one region. */
function mergeRegions(a: Region, b: Region): Region | undefined {
  let differing: Field | undefined;
  for (const field of FIELDS) {
    const ops = OPS[field] as FieldOps<Region[typeof field]>;
    if (ops.same(a[field], b[field])) continue;
    if (differing !== undefined || !ops.or) return undefined;
    differing = field;
  }
  if (differing === undefined) return a;
  const field: Field = differing;
  const join = OPS[field].or as (x: Region[Field], y: Region[Field]) => Region[Field];
  return { ...a, [field]: join(a[field], b[field]) };
}

/** Merges a list of regions pairwise until no two merge: fewer, larger terms for a report. */
export function coalesce(regions: readonly Region[]): Region[] {
  const out = [...regions];
  for (let changed = true; changed;) {
    changed = false;
    for (let i = 0; i < out.length && !changed; i++) {
      for (let j = i + 1; j < out.length; j++) {
        const merged = mergeRegions(out[i] as Region, out[j] as Region);
        if (!merged) continue;
        out[i] = merged;
        out.splice(j, 1);
        changed = true;
        break;
      }
    }
  }
  return out;
}

export function bitsOf<T extends string>(universe: readonly T[], members: readonly string[]): number {
  return universe.reduce((set, name, index) => (members.includes(name) ? set | (1 << index) : set), 0);
}

/** Both constraints at once; undefined when no packet meets both. */
export function andConstraints(a: Constraint, b: Constraint): Constraint | undefined {
  let out: Constraint = { ...a };
  for (const key in b) {
    const field = key as Field;
    const value = b[field] as Region[typeof field];
    const existing = out[field];
    const combined = existing === undefined ? value : andField(field, existing, value);
    if (emptyField(field, combined)) return undefined;
    out = { ...out, [field]: combined };
  }
  return out;
}
