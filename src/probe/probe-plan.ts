import { cidrContains, cidrOf } from '../addr/cidr.js';
import { formatIp, parseIp, sameIp, type Family, type IpAddress } from '../addr/ip.js';
import { portSetHas, portSetIsEmpty } from '../addr/port-set.js';
import type { InterceptionSpec } from '../config/interception.js';
import { familyLabel, type NetworkAssessment } from '../network/assess-pod-network.js';
import type { PodNetwork } from '../network/pod-network.js';
import { routability } from '../network/route-lookup.js';

/** Which road the probe takes: the app's outbound capture, or Istio's proxy-loopback capture. */
export type ProbePath = 'outbound' | 'proxy-loopback';

/** One connection to make and where it must arrive if the rules intercept it. */
export interface ProbeTarget {
  readonly family: Family;
  readonly path: ProbePath;
  readonly destination: IpAddress;
  readonly port: number;
  /** The listener port interception must deliver the connection to. */
  readonly expectedPort: number;
  /** The interface the connection would leave through uncaptured (for messages). */
  readonly via: string;
}

export type PlanProblemKind = 'ProbeUnroutable' | 'ProbeIdentityExcluded' | 'NothingToProbe';

export interface PlanProblem {
  readonly kind: PlanProblemKind;
  readonly family: Family | undefined;
  readonly message: string;
}

export type ProbePlan = { readonly ok: true; readonly targets: readonly ProbeTarget[] } | { readonly ok: false; readonly problem: PlanProblem };

export interface ProbeIdentity {
  readonly uid: number;
  readonly gid: number;
  readonly groups: readonly number[];
}

export interface PlanInput {
  readonly spec: InterceptionSpec;
  readonly network: PodNetwork;
  readonly assessment: NetworkAssessment;
  readonly identity: ProbeIdentity;
  readonly overrides: Partial<Record<Family, IpAddress>>;
  readonly probePort: number | undefined;
}

/**
 * Documentation ranges (RFC 5737, RFC 3849): covered by a default route, never a real host, so an
 * uncaptured probe reaches nobody even when the cluster has no egress.
 */
const DOCUMENTATION_ADDRESSES: Readonly<Record<Family, readonly string[]>> = {
  ipv4: ['192.0.2.1', '198.51.100.1', '203.0.113.1'],
  ipv6: ['2001:db8::1', '2001:db8:1::1'],
};

const PREFERRED_PORTS = [20001, 20002, 31337, 40001];

export function planProbes(input: PlanInput): ProbePlan {
  const { spec, identity } = input;
  const runsAsProxy = spec.proxyUids.includes(identity.uid) || spec.proxyGids.includes(identity.gid);
  if (runsAsProxy) return planProxyLoopback(input);

  const groups = new Set([identity.gid, ...identity.groups]);
  const excludedGroup = spec.excludeOutboundGids.find((gid) => groups.has(gid));
  if (excludedGroup !== undefined) {
    return fail('ProbeIdentityExcluded', undefined, `the validator runs with gid ${excludedGroup}, whose outbound traffic --exclude-outbound-gids leaves uncaptured; run it with another group`);
  }
  if (spec.includeOutboundGids.kind === 'list' && !spec.includeOutboundGids.ids.some((gid) => groups.has(gid))) {
    return fail('ProbeIdentityExcluded', undefined, `the validator's groups (${[...groups].join(', ')}) are not among --include-outbound-gids ${spec.includeOutboundGids.ids.join(',')}; run it with one of them`);
  }

  const targets: ProbeTarget[] = [];
  for (const family of input.assessment.familiesToProve) {
    const target = planOutbound(input, family);
    if ('kind' in target) return { ok: false, problem: target };
    targets.push(target);
  }
  return { ok: true, targets };
}

function planOutbound(input: PlanInput, family: Family): ProbeTarget | PlanProblem {
  const { spec, network } = input;
  const ports = candidatePorts(input);
  const capturedByAddress = (ip: IpAddress): boolean =>
    (spec.includeOutboundCidrs.kind === 'all' || spec.includeOutboundCidrs.cidrs.some((cidr) => cidrContains(cidr, ip)))
    && !spec.excludeOutboundCidrs.some((cidr) => cidrContains(cidr, ip));
  const excludedEverywhere = (ip: IpAddress): boolean => spec.excludeOutboundCidrs.some((cidr) => cidrContains(cidr, ip));

  const override = input.overrides[family];
  const candidates = override ? [override] : candidateAddresses(input, family);
  const reasons: string[] = [];
  for (const destination of candidates) {
    const neighbour = onLinkNeighbour(network, destination);
    if (neighbour && !override) { reasons.push(`${formatIp(destination)}: ${neighbour}`); continue; }
    const road = routability(network, destination);
    if (!road.routed) { reasons.push(`${formatIp(destination)}: ${road.why}`); continue; }
    if (spec.excludeInterfaces.includes(road.linkName)) { reasons.push(`${formatIp(destination)}: leaves through excluded interface ${road.linkName}`); continue; }
    if (excludedEverywhere(destination)) { reasons.push(`${formatIp(destination)}: inside --exclude-outbound-cidrs`); continue; }
    // A port-captured probe (Istio includeOutboundPorts) needs no captured address.
    const port = capturedByAddress(destination)
      ? ports.find((candidate) => !portSetHas(spec.excludeOutboundPorts, candidate))
      : ports.find((candidate) => portSetHas(spec.includeOutboundPorts, candidate) && !portSetHas(spec.excludeOutboundPorts, candidate));
    if (port === undefined) { reasons.push(`${formatIp(destination)}: outside --include-outbound-cidrs and no --include-outbound-ports to use`); continue; }
    return { family, path: 'outbound', destination, port, expectedPort: spec.outboundPort, via: road.linkName };
  }
  const label = familyLabel(family);
  if (override) {
    return { kind: 'ProbeUnroutable', family, message: `${label} probe address ${reasons[0] ?? formatIp(override)}; give a --probe-address the pod routes and the rules capture` };
  }
  return {
    kind: portSetIsEmpty(spec.includeOutboundPorts) && spec.includeOutboundCidrs.kind === 'list' && spec.includeOutboundCidrs.cidrs.length === 0 ? 'NothingToProbe' : 'ProbeUnroutable',
    family,
    message: `no ${label} address both routed by the pod and captured by the configuration (${reasons.slice(0, 4).join('; ')}); give --probe-address`,
  };
}

/** Probe ports: the operator's, else a high port no preset excludes, else an included one. */
function candidatePorts(input: PlanInput): number[] {
  if (input.probePort !== undefined) return [input.probePort];
  const included = input.spec.includeOutboundPorts.kind === 'ranges' ? input.spec.includeOutboundPorts.ranges.map((range) => range.from) : [];
  return [...PREFERRED_PORTS, ...included];
}

function candidateAddresses(input: PlanInput, family: Family): IpAddress[] {
  const documentation = DOCUMENTATION_ADDRESSES[family].map((text) => parseIp(text)).filter((ip): ip is IpAddress => ip !== undefined);
  // Without a default route (air-gapped pods) fall back to an address inside a routed network:
  // the included CIDRs first, then each route, skipping its first addresses (gateways live there).
  const included = input.spec.includeOutboundCidrs.kind === 'list' ? input.spec.includeOutboundCidrs.cidrs : [];
  // Networks behind a gateway before on-link ones: an on-link address may be a live neighbour.
  const routed = input.network.routes
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
function onLinkNeighbour(network: PodNetwork, destination: IpAddress): string | undefined {
  const subnet = network.addresses.find((entry) => entry.address.family === destination.family && entry.scope !== 'host'
    && cidrContains(cidrOf(entry.address, entry.prefix), destination));
  if (subnet) return `on the pod's own subnet ${formatIp(subnet.address)}/${subnet.prefix}`;
  if (network.routes.some((route) => route.gateway && sameIp(route.gateway, destination))) return 'it is a gateway of the pod';
  return undefined;
}

function planProxyLoopback(input: PlanInput): ProbePlan {
  const { spec, identity } = input;
  if (!spec.proxyLoopbackToInbound) {
    return fail('ProbeIdentityExcluded', undefined,
      `the validator runs as uid ${identity.uid} gid ${identity.gid}, the proxy's own identity, whose traffic the ${spec.mesh} rules exclude from capture; run it as another uid (for example 65534)`);
  }
  const targets: ProbeTarget[] = [];
  for (const family of input.assessment.familiesToProve) {
    // Istio sends the proxy's loopback traffic to a non-loopback address of the pod back into
    // inbound capture; the pod's own address is such a destination and never leaves the pod.
    const own = input.assessment.perFamily[family].addresses[0];
    const port = input.probePort ?? PREFERRED_PORTS.find((candidate) => !portSetHas(spec.excludeInboundPorts, candidate) && candidate !== spec.inboundTunnelPort);
    if (!own || port === undefined) {
      return fail('ProbeUnroutable', family, `${familyLabel(family)}: no pod address to probe the proxy-loopback capture with`);
    }
    targets.push({ family, path: 'proxy-loopback', destination: own.address, port, expectedPort: spec.inboundPort, via: 'lo' });
  }
  return { ok: true, targets };
}

function fail(kind: PlanProblemKind, family: Family | undefined, message: string): ProbePlan {
  return { ok: false, problem: { kind, family, message } };
}

