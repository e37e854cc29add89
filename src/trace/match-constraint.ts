import { netmask } from '../addr/cidr.js';
import { FAMILY_BITS, type Family } from '../addr/ip.js';
import type { PortSet } from '../addr/port-set.js';
import type { Match, Rule } from '../rules/model.js';
import { atomsMatching, interfaceMatches, type InterfaceAtoms } from './interface-atoms.js';
import { EMPTY_SET, intersectSets, span, subtractSets, unionSets, type IntervalSet } from './interval-set.js';
import { markCube, subtractMarks, ANY_MARK } from './mark-set.js';
import { bitsOf, CT_STATES, PROTOCOLS, type Constraint, type Region } from './region.js';
import type { TraceHook } from './packet.js';

/** What a trace is about: the hook and family fix the fields a match is evaluated on. */
export interface TraceFrame {
  readonly family: Family;
  readonly hook: TraceHook;
  readonly atoms: InterfaceAtoms;
}

/** Port 0 cannot be connected to or bound as a source: TCP and UDP ports are 1-65535. */
export const ALL_PORTS_SET: IntervalSet = span(1n, 65535n);
export const ALL_IDS: IntervalSet = span(0n, 0xffffffffn);

export function allAddresses(family: Family): IntervalSet {
  return span(0n, (1n << BigInt(FAMILY_BITS[family])) - 1n);
}

export function cidrSpan(base: bigint, prefix: number, family: Family): IntervalSet {
  const size = 1n << BigInt(FAMILY_BITS[family] - prefix);
  return span(base & netmask(family, prefix), (base & netmask(family, prefix)) + size - 1n);
}

export function portSetSpan(ports: PortSet): IntervalSet {
  if (ports.kind === 'all') return ALL_PORTS_SET;
  const only = ports.ranges.length === 1 ? ports.ranges[0] : undefined;
  if (only) return span(BigInt(only.from), BigInt(only.to));
  return ports.ranges.reduce<IntervalSet>(
    (set, range) => unionSets(set, span(BigInt(range.from), BigInt(range.to))),
    [],
  );
}

/** A rule's matches as one constraint; `never` when it cannot match here, `unknown` listing what is not modelled. */
export type RuleConstraint =
  | { readonly kind: 'never' }
  | { readonly kind: 'cube'; readonly constraint: Constraint; readonly unknown: string | undefined };

type One = Constraint | boolean | 'unknown';

function negate<K extends keyof Region>(field: K, value: Region[K], full: Region[K], negated: boolean): Constraint {
  if (!negated) return { [field]: value };
  if (field === 'mark' || field === 'ctmark') return { [field]: subtractMarks(full as never, value as never) };
  if (typeof value === 'number') return { [field]: (full as number) & ~value };
  if (typeof value === 'bigint') return { [field]: (full as bigint) & ~value };
  return { [field]: subtractSets(full as IntervalSet, value as IntervalSet) };
}

function addressSpan(match: Extract<Match, { kind: 'address' }>, family: Family): IntervalSet {
  const only = match.cidrs.length === 1 ? match.cidrs[0] : undefined;
  return only
    ? cidrSpan(only.base, only.prefix, family)
    : match.cidrs.reduce<IntervalSet>((acc, cidr) => unionSets(acc, cidrSpan(cidr.base, cidr.prefix, family)), []);
}

function addressConstraint(match: Extract<Match, { kind: 'address' }>, frame: TraceFrame): One {
  // nft's `ip daddr` never matches an IPv6 packet, not even negated: the payload is absent.
  if (match.family !== frame.family) return false;
  return negate(match.field, addressSpan(match, frame.family), allAddresses(frame.family), match.negated);
}

/**
 * The destinations a rule can match, read from its destination tests alone (a superset of what its
 * whole constraint allows); undefined when it tests none. Cheaper than the constraint: indexing a
 * long chain for one packet must not build every rule's constraint.
 */
export function ruleDestinations(rule: Rule, family: Family): IntervalSet | undefined {
  let out: IntervalSet | undefined;
  for (const match of rule.matches) {
    if (match.kind !== 'address' || match.field !== 'daddr' || match.negated) continue;
    if (match.family !== family) return EMPTY_SET;
    const set = addressSpan(match, family);
    out = out === undefined ? set : intersectSets(out, set);
  }
  return out;
}

function interfaceConstraint(match: Extract<Match, { kind: 'interface' }>, frame: TraceFrame): One {
  const ours = (match.field === 'oif') === (frame.hook === 'output');
  // The other side has no interface on this hook: the kernel compares an empty name.
  if (!ours) return match.names.some((pattern) => interfaceMatches(pattern, '')) !== match.negated;
  return negate('iface', atomsMatching(frame.atoms, match.names), frame.atoms.all, match.negated);
}

function matchConstraint(match: Match, frame: TraceFrame): One {
  switch (match.kind) {
    case 'comment':
      return true;
    case 'l3':
      return match.family === frame.family;
    case 'protocol':
      return negate('protocols', bitsOf(PROTOCOLS, match.protocols), (1 << PROTOCOLS.length) - 1, match.negated);
    case 'port': {
      const set = portSetSpan(match.ports);
      return negate(match.field, set, ALL_PORTS_SET, match.negated);
    }
    case 'address':
      return addressConstraint(match, frame);
    case 'interface':
      return interfaceConstraint(match, frame);
    case 'owner': {
      // Only local sockets have an owner; iptables' and nft's owner tests both fail without one.
      if (frame.hook !== 'output') return false;
      const only = match.ids.length === 1 ? match.ids[0] : undefined;
      const set = only
        ? span(BigInt(only.from), BigInt(only.to))
        : match.ids.reduce<IntervalSet>((acc, range) => unionSets(acc, span(BigInt(range.from), BigInt(range.to))), []);
      return negate(match.field, set, ALL_IDS, match.negated);
    }
    case 'mark':
      return negate(match.field, markCube(match.value, match.mask), ANY_MARK, match.negated);
    case 'ctstate':
      return negate('ctstates', bitsOf(CT_STATES, match.states), (1 << CT_STATES.length) - 1, match.negated);
    case 'unknown':
      return 'unknown';
  }
}

/** Combines a rule's matches: they all must hold. Two matches on one field intersect. */
export function ruleConstraint(
  rule: Rule,
  frame: TraceFrame,
  and: (a: Constraint, b: Constraint) => Constraint | undefined,
): RuleConstraint {
  let constraint: Constraint = {};
  let unknown: string | undefined;
  for (const match of rule.matches) {
    const one = matchConstraint(match, frame);
    if (one === false) return { kind: 'never' };
    if (one === true) continue;
    if (one === 'unknown') {
      unknown ??= match.kind === 'unknown' ? match.text : match.kind;
      continue;
    }
    const combined = and(constraint, one);
    if (!combined) return { kind: 'never' };
    constraint = combined;
  }
  return { kind: 'cube', constraint, unknown };
}
