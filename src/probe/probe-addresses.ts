import { cidrContains, cidrOf } from '../addr/cidr.js';
import { formatIp, parseIp, sameIp, type Family, type IpAddress } from '../addr/ip.js';
import type { InterceptionSpec } from '../config/interception.js';
import type { PodNetwork } from '../network/pod-network.js';

/**
 * Documentation ranges (RFC 5737, RFC 3849): covered by a default route, never a real host, so an
 * uncaptured probe reaches nobody even when the cluster has no egress.
 */
const DOCUMENTATION_ADDRESSES: Readonly<Record<Family, readonly string[]>> = {
  ipv4: ['192.0.2.1', '198.51.100.1', '203.0.113.1'],
  ipv6: ['2001:db8::1', '2001:db8:1::1'],
};

/** Addresses to try, best first: documentation addresses, then one inside each routed network. */
export function candidateAddresses(spec: InterceptionSpec, network: PodNetwork, family: Family): IpAddress[] {
  const documentation = DOCUMENTATION_ADDRESSES[family]
    .map((text) => parseIp(text))
    .filter((ip): ip is IpAddress => ip !== undefined);
  // Without a default route (air-gapped pods) fall back to an address inside a routed network:
  // the included CIDRs first, then each route, skipping its first addresses (gateways live there).
  const included = spec.includeOutboundCidrs.kind === 'list' ? spec.includeOutboundCidrs.cidrs : [];
  // Networks behind a gateway before on-link ones: an on-link address may be a live neighbour.
  const routed = network.routes
    .filter((route) => route.family === family && route.type === 'unicast' && route.destination.prefix > 0)
    .sort((a, b) => Number(b.gateway !== undefined) - Number(a.gateway !== undefined))
    .map((route) => route.destination);
  const inside = [...included, ...routed]
    .filter((cidr) => cidr.family === family)
    .map((cidr) => {
      const hostBits = BigInt((family === 'ipv4' ? 32 : 128) - cidr.prefix);
      const size = 1n << hostBits;
      // The next-to-last address: clear of the network, broadcast and low gateway addresses.
      const offset = size > 4n ? size - 2n : size > 1n ? 1n : 0n;
      return { family, value: cidr.base + offset };
    });
  return [...documentation, ...inside];
}

/**
 * An automatically chosen probe must not be a host the pod can reach directly: on the pod's own
 * subnet (where a documentation address may really be in use, as in labs that number their links
 * from 192.0.2.0/24) or a gateway. If interception is missing, the SYN would reach that host.
 */
export function onLinkNeighbour(network: PodNetwork, destination: IpAddress): string | undefined {
  const subnet = network.addresses.find(
    (entry) =>
      entry.address.family === destination.family &&
      entry.scope !== 'host' &&
      cidrContains(cidrOf(entry.address, entry.prefix), destination),
  );
  if (subnet) return `on the pod's own subnet ${formatIp(subnet.address)}/${subnet.prefix}`;
  if (network.routes.some((route) => route.gateway && sameIp(route.gateway, destination)))
    return 'it is a gateway of the pod';
  return undefined;
}
