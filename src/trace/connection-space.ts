import type { Family } from '../addr/ip.js';
import { ANY_MARK, ZERO_MARK } from './mark-set.js';
import { ALL_IDS, ALL_PORTS_SET, allAddresses } from './match-constraint.js';
import { bitsOf, CT_STATES, PROTOCOLS, type Region } from './region.js';

/**
 * Every new TCP connection of one family: any address, port, owner, interface atom in `iface`
 * and socket mark, no conntrack mark. The space a trace starts from; a caller that asks about
 * more (UDP, INVALID) or less (no socket mark) spreads this and sets that field.
 */
export function connectionSpace(family: Family, iface: bigint): Region {
  return {
    protocols: bitsOf(PROTOCOLS, ['tcp']),
    saddr: allAddresses(family),
    daddr: allAddresses(family),
    sport: ALL_PORTS_SET,
    dport: ALL_PORTS_SET,
    uid: ALL_IDS,
    gid: ALL_IDS,
    iface,
    mark: ANY_MARK,
    ctmark: ZERO_MARK,
    ctstates: bitsOf(CT_STATES, ['new']),
  };
}
