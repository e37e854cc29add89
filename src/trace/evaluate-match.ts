import { cidrContains } from '../addr/cidr.js';
import { portSetHas } from '../addr/port-set.js';
import type { Match } from '../rules/model.js';
import type { Packet } from './packet.js';

/** Mutable per-traversal packet state the mangle/raw rules can change. */
export interface PacketState {
  mark: number;
  ctmark: number;
}

/**
 * Evaluates one match against the packet. `unknown` means the tracer does not model it; the caller
 * then decides whether the answer depends on it (it never assumes a match passes).
 */
export function evaluateMatch(match: Match, packet: Packet, state: PacketState): boolean | 'unknown' {
  switch (match.kind) {
    case 'comment':
      return true;
    case 'protocol':
      return match.protocols.includes(packet.protocol) !== match.negated;
    case 'l3':
      return packet.family === match.family;
    case 'port': {
      const port = match.field === 'dport' ? packet.destinationPort : packet.sourcePort;
      return portSetHas(match.ports, port) !== match.negated;
    }
    case 'address': {
      // nft's `ip daddr` never matches an IPv6 packet, not even negated: the payload is absent.
      if (packet.family !== match.family) return false;
      const address = match.field === 'daddr' ? packet.destination : packet.source;
      let inside = false;
      for (const cidr of match.cidrs) {
        if (cidrContains(cidr, address)) {
          inside = true;
          break;
        }
      }
      return inside !== match.negated;
    }
    case 'interface': {
      const name = match.field === 'iif' ? packet.inInterface : packet.outInterface;
      // No interface on this hook (oif in PREROUTING, iif in OUTPUT): the kernel sees an empty name.
      const actual = name ?? '';
      return match.names.some((pattern) => interfaceMatches(pattern, actual)) !== match.negated;
    }
    case 'owner': {
      // Only local sockets have an owner; iptables' and nft's owner tests both fail without one.
      const id = match.field === 'uid' ? packet.uid : packet.gid;
      if (packet.hook !== 'output' || id === undefined) return false;
      return match.ids.some((range) => id >= range.from && id <= range.to) !== match.negated;
    }
    case 'mark': {
      const actual = match.field === 'mark' ? state.mark : state.ctmark;
      return ((actual & match.mask) >>> 0 === (match.value & match.mask) >>> 0) !== match.negated;
    }
    case 'ctstate':
      return match.states.includes(packet.ctState ?? 'new') !== match.negated;
    case 'unknown':
      return 'unknown';
  }
}

/** iptables' and nft's interface wildcard: a trailing `+` / `*` matches any suffix. */
function interfaceMatches(pattern: string, actual: string): boolean {
  if (pattern.endsWith('+') || pattern.endsWith('*')) return actual.startsWith(pattern.slice(0, -1));
  return pattern === actual;
}
