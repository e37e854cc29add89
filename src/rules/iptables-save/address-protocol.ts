import { parseCidr, type Cidr } from '../../addr/cidr.js';
import { parseIp, type Family } from '../../addr/ip.js';
import type { Match } from '../model.js';

const PROTOCOL_NUMBERS: ReadonlyMap<string, string> = new Map([
  ['6', 'tcp'],
  ['17', 'udp'],
  ['1', 'icmp'],
  ['58', 'ipv6-icmp'],
  ['132', 'sctp'],
]);

// Matches are immutable: every `-p tcp` of a dump shares one object (a large dump has one per rule).
const SHARED_PROTOCOL_MATCHES = new Map<string, Match>();
const SHARED_NEGATED = new Map<string, Match>();

/** `-p VALUE`: a protocol by name or number; `all` (or 0) is every protocol. */
export function protocolMatch(value: string, negated: boolean): Match {
  const name = PROTOCOL_NUMBERS.get(value) ?? value.toLowerCase();
  if (name === 'all' || name === '0')
    return negated
      ? { kind: 'unknown', text: `! -p ${value}` }
      : { kind: 'protocol', protocols: ['tcp', 'udp', 'icmp', 'ipv6-icmp', 'sctp'], negated: false };
  const shared = (negated ? SHARED_NEGATED : SHARED_PROTOCOL_MATCHES).get(name);
  if (shared) return shared;
  const match: Match = { kind: 'protocol', protocols: [name], negated };
  if (SHARED_PROTOCOL_MATCHES.size + SHARED_NEGATED.size < 64)
    (negated ? SHARED_NEGATED : SHARED_PROTOCOL_MATCHES).set(name, match);
  return match;
}

/** `-s`/`-d VALUE`: one or a comma-separated list of networks of the dump's family. */
export function addressMatch(field: 'saddr' | 'daddr', value: string, family: Family, negated: boolean): Match {
  const cidrs: Cidr[] = [];
  // One network is the common case: no split.
  for (const item of value.includes(',') ? value.split(',') : [value]) {
    const cidr = parseMaskedCidr(item);
    if (!cidr || cidr.family !== family)
      return { kind: 'unknown', text: `${negated ? '! ' : ''}${field === 'saddr' ? '-s' : '-d'} ${value}` };
    cidrs.push(cidr);
  }
  return { kind: 'address', field, family, cidrs, negated };
}

/** iptables prints `/32`-style prefixes, but accepts and may print dotted netmasks too. */
function parseMaskedCidr(text: string): Cidr | undefined {
  const slash = text.indexOf('/');
  if (slash > 0 && text.indexOf('.', slash + 1) >= 0) {
    const mask = parseIp(text.slice(slash + 1));
    if (!mask || mask.family !== 'ipv4') return undefined;
    const bits = mask.value.toString(2).padStart(32, '0');
    if (!/^1*0*$/.test(bits)) return undefined;
    return parseCidr(`${text.slice(0, slash)}/${bits.indexOf('0') < 0 ? 32 : bits.indexOf('0')}`);
  }
  return parseCidr(text);
}
