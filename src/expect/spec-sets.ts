import type { Cidr } from '../addr/cidr.js';
import type { Family, IpAddress } from '../addr/ip.js';
import type { PortSet } from '../addr/port-set.js';
import type { CidrSet } from '../config/interception.js';
import { atomsMatching, type InterfaceAtoms } from '../trace/interface-atoms.js';
import { EMPTY_SET, span, subtractSets, unionSets, type IntervalSet } from '../trace/interval-set.js';
import { ALL_IDS, ALL_PORTS_SET, allAddresses, cidrSpan, portSetSpan } from '../trace/match-constraint.js';

/** The configuration's lists as field sets of one family. */
export function cidrSet(cidrs: readonly Cidr[], family: Family): IntervalSet {
  return cidrs
    .filter((cidr) => cidr.family === family)
    .reduce<IntervalSet>((set, cidr) => unionSets(set, cidrSpan(cidr.base, cidr.prefix, family)), EMPTY_SET);
}

export function includedSet(included: CidrSet, family: Family): IntervalSet {
  return included.kind === 'all' ? allAddresses(family) : cidrSet(included.cidrs, family);
}

export function addressSet(addresses: readonly IpAddress[], family: Family): IntervalSet {
  return addresses
    .filter((address) => address.family === family)
    .reduce<IntervalSet>((set, address) => unionSets(set, span(address.value, address.value)), EMPTY_SET);
}

export function notAddresses(set: IntervalSet, family: Family): IntervalSet {
  return subtractSets(allAddresses(family), set);
}

export function ports(set: PortSet): IntervalSet {
  return portSetSpan(set);
}

export function notPorts(set: IntervalSet): IntervalSet {
  return subtractSets(ALL_PORTS_SET, set);
}

export function portList(list: readonly number[]): IntervalSet {
  return list
    .filter((port) => port > 0)
    .reduce<IntervalSet>((set, port) => unionSets(set, span(BigInt(port), BigInt(port))), EMPTY_SET);
}

export function ids(list: readonly number[]): IntervalSet {
  return list.reduce<IntervalSet>((set, id) => unionSets(set, span(BigInt(id), BigInt(id))), EMPTY_SET);
}

export function notIds(list: readonly number[]): IntervalSet {
  return subtractSets(ALL_IDS, ids(list));
}

export function interfaces(atoms: InterfaceAtoms, names: readonly string[]): bigint {
  return atomsMatching(atoms, names);
}

export function notInterfaces(atoms: InterfaceAtoms, names: readonly string[]): bigint {
  return atoms.all & ~atomsMatching(atoms, names);
}

/** Destinations the kernel always routes over `lo`: 127.0.0.0/8 and ::1. */
export function loopbackRange(family: Family): IntervalSet {
  return family === 'ipv4' ? cidrSpan(0x7f000000n, 8, 'ipv4') : span(1n, 1n);
}
