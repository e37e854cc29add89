import { formatIp, type IpAddress } from '../addr/ip.js';
import type { PodNetwork } from '../network/pod-network.js';
import { isLocalAddress } from '../network/route-lookup.js';

const V4_LOOPBACK = { base: 0x7f000000n, mask: 0xff000000n };
const V6_MAPPED = { base: 0xffff00000000n, mask: ~0xffffffffn & ((1n << 128n) - 1n) };

/**
 * Why a probe to this target could reach the validator's own listener with no rule at all, or
 * undefined when only the pod's NAT rules can bring it there. The listener binds the wildcard
 * address of its family, so a local destination, or a listener port, proves nothing.
 */
export function directReach(
  network: PodNetwork,
  target: { readonly path: 'outbound' | 'proxy-loopback'; readonly destination: IpAddress; readonly port: number },
  listenerPorts: readonly number[],
): string | undefined {
  if (listenerPorts.includes(target.port))
    return `port ${target.port} is a port the validator itself listens on, so a direct arrival there looks like a redirected one`;
  // The proxy-loopback probe targets the pod's own address on purpose; only its port keeps it honest.
  if (target.path === 'proxy-loopback') return undefined;
  const local = localWhy(network, target.destination);
  return local ? `${formatIp(target.destination)} ${local}` : undefined;
}

/** Why an outbound probe destination is not outside the pod, or undefined when it is. */
export function localWhy(network: PodNetwork, destination: IpAddress): string | undefined {
  if (destination.value === 0n) return 'is the unspecified address, which connects to this host itself';
  if (destination.family === 'ipv4' && (destination.value & V4_LOOPBACK.mask) === V4_LOOPBACK.base)
    return 'is a loopback address';
  if (destination.family === 'ipv6' && destination.value === 1n) return 'is the loopback address';
  if (destination.family === 'ipv6' && (destination.value & V6_MAPPED.mask) === V6_MAPPED.base)
    return 'is an IPv4-mapped address (an IPv4 destination in disguise)';
  if (isLocalAddress(network, destination)) return 'is an address of the pod itself';
  return undefined;
}
