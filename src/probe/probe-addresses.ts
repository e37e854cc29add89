import { cidrContains, cidrOf } from '../addr/cidr.js';
import { formatIp, parseIp, sameIp, type Family, type IpAddress } from '../addr/ip.js';
import type { InterceptionSpec } from '../config/interception.js';
import type { PodNetwork } from '../network/pod-network.js';

/**
 * Documentation ranges (RFC 5737, RFC 3849): covered by a default route, never a real host, so an
 * uncaptured probe reaches nobody even when the cluster has no egress.
 */
const DOCUMENTATION_RANGES: Readonly<Record<Family, readonly { readonly base: string; readonly hostBits: number }[]>> =
  {
    ipv4: [
      { base: '192.0.2.0', hostBits: 8 },
      { base: '198.51.100.0', hostBits: 8 },
      { base: '203.0.113.0', hostBits: 8 },
    ],
    ipv6: [{ base: '2001:db8::', hostBits: 96 }],
  };

/** A uniform draw in [0, 1), injected so the plan stays pure and tests can fix it. */
export type Random = () => number;

/**
 * One address at random in each documentation range, the ranges in random order: rules that
 * capture only a fixed probe destination (192.0.2.1) cannot pass, since the author cannot guess it.
 * Never the range's first or last address.
 */
function documentationAddresses(family: Family, random: Random): IpAddress[] {
  const all = DOCUMENTATION_RANGES[family];
  // A random range first; the others follow as fallbacks when the first is not routed or is excluded.
  const start = Math.floor(random() * all.length) % all.length;
  const ranges = [...all.slice(start), ...all.slice(0, start)];
  return ranges.flatMap((range) => {
    const base = parseIp(range.base);
    if (!base) return [];
    const size = 1n << BigInt(range.hostBits);
    // 53 random bits are plenty to place one address; scaled into [1, size - 2].
    const draw = BigInt(Math.floor(random() * 2 ** 53));
    const offset = 1n + ((draw * (size - 2n)) >> 53n);
    return [{ family, value: base.value + offset }];
  });
}

export function isDocumentationAddress(ip: IpAddress): boolean {
  return DOCUMENTATION_RANGES[ip.family].some((range) => {
    const base = parseIp(range.base);
    return (
      base !== undefined &&
      cidrContains(
        { family: ip.family, base: base.value, prefix: (ip.family === 'ipv4' ? 32 : 128) - range.hostBits },
        ip,
      )
    );
  });
}

/**
 * Addresses to try, best first: a random documentation address per range, the operator's hint,
 * then one inside each routed network.
 */
export function candidateAddresses(
  spec: InterceptionSpec,
  network: PodNetwork,
  family: Family,
  random: Random,
  hint?: IpAddress,
): IpAddress[] {
  const documentation = documentationAddresses(family, random);
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
  return [...documentation, ...(hint ? [hint] : []), ...inside];
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
