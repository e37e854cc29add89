import { FAMILY_BITS, formatIp, type Family } from '../addr/ip.js';
import type { TraceHook } from '../trace/packet.js';
import { atomLabels, type InterfaceAtoms } from '../trace/interface-atoms.js';
import { sameSets, subtractSets, type IntervalSet } from '../trace/interval-set.js';
import { formatMarkCube, type MarkSet } from '../trace/mark-set.js';
import { ALL_IDS, ALL_PORTS_SET, allAddresses } from '../trace/match-constraint.js';
import { CT_STATES, PROTOCOLS, type Region } from '../trace/region.js';

/** Where a region lives: needed to print its addresses and interfaces. */
export interface RegionScope {
  readonly family: Family;
  readonly hook: TraceHook;
  readonly atoms: InterfaceAtoms;
}

function bitLength(value: bigint): number {
  return value === 0n ? 0 : value.toString(2).length;
}

/**
 * The fewest CIDR blocks covering exactly the interval set, as start and prefix. Each block's size
 * comes from the start's alignment and the length left, in one step: sizing blocks bit by bit and
 * formatting every one made an IPv6 complement the slowest part of a whole analysis.
 */
function cidrBlocks(set: IntervalSet, family: Family): Array<readonly [bigint, number]> {
  const bits = FAMILY_BITS[family];
  const out: Array<readonly [bigint, number]> = [];
  for (const [from, to] of set) {
    for (let start = from; start <= to;) {
      const aligned = start === 0n ? bits : bitLength(start & -start) - 1;
      const size = Math.min(aligned, bitLength(to - start + 1n) - 1, bits);
      out.push([start, bits - size]);
      start += 1n << BigInt(size);
    }
  }
  return out;
}

function cidrText([start, prefix]: readonly [bigint, number], family: Family): string {
  return `${formatIp({ family, value: start })}/${prefix}`;
}

/** The fewest CIDRs covering exactly the interval set. */
function cidrsOf(set: IntervalSet, family: Family): string[] {
  return cidrBlocks(set, family).map((block) => cidrText(block, family));
}

/** Terms of a set, counted at once and formatted only as far as a sentence shows them. */
interface Terms {
  readonly length: number;
  readonly take: (count: number) => string[];
}

function cidrTerms(set: IntervalSet, family: Family): Terms {
  const blocks = cidrBlocks(set, family);
  return { length: blocks.length, take: (count) => blocks.slice(0, count).map((block) => cidrText(block, family)) };
}

function rangeTerms(set: IntervalSet): Terms {
  return { length: set.length, take: (count) => rangesOf(set.slice(0, count)) };
}

function rangesOf(set: IntervalSet): string[] {
  return set.map(([from, to]) => (from === to ? String(from) : `${from}-${to}`));
}

function bitNames(names: readonly string[], set: number): string[] {
  return names.filter((_, index) => set & (1 << index));
}

/** The region as data, one list of terms per field, for JSON reports and golden files. */
export function regionJson(region: Region, scope: RegionScope): Record<string, readonly string[]> {
  const owner: Record<string, readonly string[]> =
    scope.hook === 'output' ? { uid: rangesOf(region.uid), gid: rangesOf(region.gid) } : {};
  return {
    protocols: bitNames(PROTOCOLS, region.protocols),
    saddr: cidrsOf(region.saddr, scope.family),
    daddr: cidrsOf(region.daddr, scope.family),
    sport: rangesOf(region.sport),
    dport: rangesOf(region.dport),
    ...owner,
    [scope.hook === 'output' ? 'oif' : 'iif']: atomLabels(scope.atoms, region.iface),
    mark: marksText(region.mark),
    ctmark: marksText(region.ctmark),
    ctstates: bitNames(CT_STATES, region.ctstates),
  };
}

function marksText(set: MarkSet): string[] {
  return set.map(formatMarkCube);
}

/** "any X", "any X but A", or "A, B": whichever is shorter. */
function choose(
  set: IntervalSet,
  full: IntervalSet,
  terms: (s: IntervalSet) => Terms,
  noun: string,
  plural: string,
): string {
  if (sameSets(set, full)) return `any ${noun}`;
  const inside = terms(set);
  const outside = terms(subtractSets(full, set));
  if (outside.length < inside.length && outside.length <= 3) return `any ${noun} but ${outside.take(3).join(', ')}`;
  const first = inside.take(6);
  const shown = inside.length > 6 ? [...first, `... (${inside.length} in all)`] : first;
  return `${inside.length === 1 && !first[0]?.includes('-') && !first[0]?.includes('/') ? noun : plural} ${shown.join(', ')}`;
}

function addresses(set: IntervalSet, family: Family): string {
  const text = choose(set, allAddresses(family), (s) => cidrTerms(s, family), 'address', '');
  return text.startsWith(' ') ? text.slice(1) : text;
}

function interfacesText(region: Region, scope: RegionScope): string | undefined {
  if (region.iface === scope.atoms.all) return undefined;
  const inside = atomLabels(scope.atoms, region.iface);
  const outside = atomLabels(scope.atoms, scope.atoms.all & ~region.iface);
  const preposition = scope.hook === 'output' ? 'via' : 'on';
  return outside.length <= inside.length
    ? `${preposition} any interface but ${outside.join(', ')}`
    : `${preposition} ${inside.join(', ')}`;
}

/** Fields most regions leave whole: named only when they are not. */
function extras(region: Region, scope: RegionScope): string[] {
  const out: string[] = [];
  if (scope.hook === 'output' && !sameSets(region.gid, ALL_IDS))
    out.push(choose(region.gid, ALL_IDS, rangeTerms, 'gid', 'gids'));
  const iface = interfacesText(region, scope);
  if (iface) out.push(iface);
  if (scope.hook === 'output' && !sameSets(region.saddr, allAddresses(scope.family)))
    out.push(`from source ${addresses(region.saddr, scope.family)}`);
  if (!sameSets(region.sport, ALL_PORTS_SET))
    out.push(`from ${choose(region.sport, ALL_PORTS_SET, rangeTerms, 'source port', 'source ports')}`);
  const marks = marksText(region.mark);
  if (!(marks.length === 1 && marks[0] === 'any') && !(marks.length === 1 && marks[0] === '0x0'))
    out.push(`mark ${marks.join(' or ')}`);
  const states = bitNames(CT_STATES, region.ctstates);
  if (!(states.length === 1 && states[0] === 'new')) out.push(`conntrack ${states.join(', ').toUpperCase()}`);
  return out;
}

/** The region in words: "outbound TCP to 10.0.0.0/8, any port, from any uid but 2102, ...". */
export function describeRegion(region: Region, scope: RegionScope): string {
  const protocol = bitNames(PROTOCOLS, region.protocols)
    .map((name) => name.toUpperCase())
    .join(' and ');
  const port = choose(region.dport, ALL_PORTS_SET, rangeTerms, 'port', 'ports');
  if (scope.hook === 'output') {
    const uid = choose(region.uid, ALL_IDS, rangeTerms, 'uid', 'uids');
    return [
      `outbound ${protocol} to ${addresses(region.daddr, scope.family)}`,
      port,
      `from ${uid}`,
      ...extras(region, scope),
    ].join(', ');
  }
  const head = `inbound ${protocol} from ${addresses(region.saddr, scope.family)} to ${port}`;
  const allButLoopback =
    scope.family === 'ipv4'
      ? subtractSets(allAddresses('ipv4'), [[0x7f000000n, 0x7fffffffn]])
      : subtractSets(allAddresses('ipv6'), [[1n, 1n]]);
  const destination =
    sameSets(region.daddr, allButLoopback) || sameSets(region.daddr, allAddresses(scope.family))
      ? []
      : [`for ${addresses(region.daddr, scope.family)}`];
  return [head, ...destination, ...extras(region, scope)].join(', ');
}
