import { cidrContains } from '../addr/cidr.js';
import { formatIp, sameIp, type Family, type IpAddress } from '../addr/ip.js';
import { portSetIsEmpty } from '../addr/port-set.js';
import type { InterceptionSpec } from '../config/interception.js';
import { familyLabel, type NetworkAssessment } from '../network/assess-pod-network.js';
import type { PodNetwork } from '../network/pod-network.js';
import { routability } from '../network/route-lookup.js';
import { directReach, localWhy } from './direct-reach.js';
import { candidateAddresses, isDocumentationAddress, onLinkNeighbour, type Random } from './probe-addresses.js';
import { loopbackPortProblem, outboundPortProblem, PREFERRED_PORTS, spreadPorts } from './probe-ports.js';

/** Which path the probe takes: the app's outbound capture, or Istio's proxy-loopback capture. */
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

export type PlanProblemKind = 'ProbeUnroutable' | 'ProbeIdentityExcluded' | 'NothingToProbe' | 'ConfigInvalid';

export interface PlanProblem {
  readonly kind: PlanProblemKind;
  readonly family: Family | undefined;
  readonly message: string;
}

export type ProbePlan =
  | { readonly ok: true; readonly targets: readonly ProbeTarget[]; readonly notes: readonly string[] }
  | { readonly ok: false; readonly problem: PlanProblem };

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
  /** --probe-address: the operator's destination, used as given or refused. */
  readonly overrides: Partial<Record<Family, IpAddress>>;
  /** --probe-address-hint: preferred when routed and captured, otherwise the plan chooses. */
  readonly hints: Partial<Record<Family, IpAddress>>;
  readonly probePort: number | undefined;
  /** A port above 1024 drawn by the caller (the plan stays pure), probed in every family. */
  readonly randomPort: number;
  /** Every outbound exclusion is known: the probe may spread beyond its first port. */
  readonly spread: boolean;
  /** Draws the documentation address in each range (injected: the plan stays pure). */
  readonly random: Random;
}

type FamilyPlan = { readonly targets: readonly ProbeTarget[]; readonly notes: readonly string[] } | PlanProblem;

export function planProbes(input: PlanInput): ProbePlan {
  const { spec, identity } = input;
  const runsAsProxy = spec.proxyUids.includes(identity.uid) || spec.proxyGids.includes(identity.gid);
  const listenerPorts = [runsAsProxy ? spec.inboundPort : spec.outboundPort];
  if (input.probePort !== undefined && listenerPorts.includes(input.probePort)) {
    return fail(
      'ConfigInvalid',
      undefined,
      `--probe-port ${input.probePort} is the port the validator itself listens on: a probe to it can arrive without any rule, so its pass would prove nothing; choose another port`,
    );
  }
  // Every given address is checked, probed family or not: a nonsensical flag is an error, not ignored.
  for (const override of Object.values(input.overrides)) {
    const local = localWhy(input.network, override);
    if (local)
      return fail(
        'ConfigInvalid',
        override.family,
        `--probe-address ${formatIp(override)} ${local}: a probe to it never leaves the pod, so it cannot show that the rules capture anything; give an address outside the pod`,
      );
  }
  if (!runsAsProxy) {
    const excluded = excludedIdentity(spec, identity);
    if (excluded) return fail('ProbeIdentityExcluded', undefined, excluded);
  } else if (!spec.proxyLoopbackToInbound) {
    return fail(
      'ProbeIdentityExcluded',
      undefined,
      `the validator runs as uid ${identity.uid} gid ${identity.gid}, the proxy's own identity, whose traffic the ${spec.mesh} rules exclude from capture; run it as another uid (for example 65534)`,
    );
  }
  const targets: ProbeTarget[] = [];
  const notes: string[] = [];
  for (const family of input.assessment.familiesToProve) {
    const planned = runsAsProxy
      ? planProxyLoopback(input, family, listenerPorts)
      : planOutbound(input, family, listenerPorts);
    if ('kind' in planned) return { ok: false, problem: planned };
    targets.push(...planned.targets);
    notes.push(...planned.notes);
  }
  // The plan's own proof obligation: no target may reach the listener except through the rules.
  const direct = targets
    .map((target) => directReach(input.network, target, listenerPorts))
    .find((why) => why !== undefined);
  if (direct)
    return fail(
      'ConfigInvalid',
      undefined,
      `a probe target can reach the validator's listener without any rule: ${direct}`,
    );
  return { ok: true, targets, notes };
}

function excludedIdentity(spec: InterceptionSpec, identity: ProbeIdentity): string | undefined {
  const groups = new Set([identity.gid, ...identity.groups]);
  const excludedGroup = spec.excludeOutboundGids.find((gid) => groups.has(gid));
  if (excludedGroup !== undefined) {
    return `the validator runs with gid ${excludedGroup}, whose outbound traffic --exclude-outbound-gids leaves uncaptured; run it with another group`;
  }
  if (spec.includeOutboundGids.kind === 'list' && !spec.includeOutboundGids.ids.some((gid) => groups.has(gid))) {
    return `the validator's groups (${[...groups].join(', ')}) are not among --include-outbound-gids ${spec.includeOutboundGids.ids.join(',')}; run it with one of them`;
  }
  return undefined;
}

interface Destination {
  readonly destination: IpAddress;
  readonly via: string;
  readonly byPortOnly: boolean;
}

function planOutbound(input: PlanInput, family: Family, listenerPorts: readonly number[]): FamilyPlan {
  const override = input.overrides[family];
  const hint = override ? undefined : input.hints[family];
  const candidates = override ? [override] : candidateAddresses(input.spec, input.network, family, input.random, hint);
  const reasons: string[] = [];
  for (const candidate of candidates) {
    const why = destinationProblem(input, candidate, override !== undefined);
    if (why) {
      reasons.push(`${formatIp(candidate)}: ${why}`);
      continue;
    }
    const chosen = chooseDestination(input, candidate);
    const first = firstOutboundPort(input, chosen.byPortOnly, listenerPorts);
    if (first === undefined) {
      reasons.push(`${formatIp(candidate)}: outside --include-outbound-cidrs and no --include-outbound-ports to use`);
      continue;
    }
    const spread = spreadPorts(
      first,
      input.randomPort,
      input.spec.includeOutboundPorts,
      outboundPortProblem(input.spec, listenerPorts, chosen.byPortOnly),
      input.spread,
    );
    const notes = [
      `${familyLabel(family)}: ports ${spread.ports.join(', ')}${input.spread ? ` (random port ${input.randomPort})` : ''}`,
      ...spread.skipped.map((text) => `${familyLabel(family)}: skipped ${text}`),
    ];
    notes.unshift(
      `${familyLabel(family)}: probe address ${formatIp(candidate)}${choiceOf(candidate, hint, override, reasons)}`,
    );

    const targets = spread.ports.map((port) => ({
      family,
      path: 'outbound' as const,
      destination: candidate,
      port,
      expectedPort: input.spec.outboundPort,
      via: chosen.via,
    }));
    return { targets, notes };
  }
  return unroutable(input, family, override, reasons);
}

/** Where the chosen destination came from, for the log: the operator, the hint, a documentation range, a route. */
function choiceOf(
  candidate: IpAddress,
  hint: IpAddress | undefined,
  override: IpAddress | undefined,
  reasons: readonly string[],
): string {
  if (override) return ' (--probe-address)';
  if (hint && sameIp(hint, candidate)) return ' (the probe address hint)';
  const source = isDocumentationAddress(candidate)
    ? ', drawn at random from the documentation ranges the pod routes'
    : ', inside a network the pod routes (no documentation range is routed)';
  if (!hint) return source;
  const hintWhy = reasons.find((reason) => reason.startsWith(`${formatIp(hint)}: `));
  return `${source}; hint ${hintWhy ?? `${formatIp(hint)} not needed`}`;
}

/** Why this candidate cannot carry the probe, or undefined when it can. */
function destinationProblem(input: PlanInput, destination: IpAddress, given: boolean): string | undefined {
  const { spec, network } = input;
  const local = localWhy(network, destination);
  if (local) return local;
  const neighbour = onLinkNeighbour(network, destination);
  if (neighbour && !given) return neighbour;
  const road = routability(network, destination);
  if (!road.routed) return road.why;
  if (spec.excludeInterfaces.includes(road.linkName)) return `leaves through excluded interface ${road.linkName}`;
  if (spec.excludeOutboundCidrs.some((cidr) => cidrContains(cidr, destination)))
    return 'inside --exclude-outbound-cidrs';
  return undefined;
}

function chooseDestination(input: PlanInput, destination: IpAddress): Destination {
  const { spec } = input;
  const road = routability(input.network, destination);
  const capturedByAddress =
    spec.includeOutboundCidrs.kind === 'all' ||
    spec.includeOutboundCidrs.cidrs.some((cidr) => cidrContains(cidr, destination));
  return { destination, via: road.routed ? road.linkName : '?', byPortOnly: !capturedByAddress };
}

/** The operator's port, else a high port no preset excludes, else an included one. */
function firstOutboundPort(
  input: PlanInput,
  byPortOnly: boolean,
  listenerPorts: readonly number[],
): number | undefined {
  if (input.probePort !== undefined) return input.probePort;
  const included =
    input.spec.includeOutboundPorts.kind === 'ranges'
      ? input.spec.includeOutboundPorts.ranges.map((range) => range.from)
      : [];
  const problem = outboundPortProblem(input.spec, listenerPorts, byPortOnly);
  return [...PREFERRED_PORTS, ...included].find((port) => problem(port) === undefined);
}

function unroutable(
  input: PlanInput,
  family: Family,
  override: IpAddress | undefined,
  reasons: readonly string[],
): PlanProblem {
  const { spec } = input;
  const label = familyLabel(family);
  if (override) {
    return {
      kind: 'ProbeUnroutable',
      family,
      message: `${label} probe address ${reasons[0] ?? formatIp(override)}; give a --probe-address the pod routes and the rules capture`,
    };
  }
  const nothing =
    portSetIsEmpty(spec.includeOutboundPorts) &&
    spec.includeOutboundCidrs.kind === 'list' &&
    spec.includeOutboundCidrs.cidrs.length === 0;
  return {
    kind: nothing ? 'NothingToProbe' : 'ProbeUnroutable',
    family,
    message: `no ${label} address both routed by the pod and captured by the configuration (${reasons.slice(0, 4).join('; ')}); give --probe-address`,
  };
}

function planProxyLoopback(input: PlanInput, family: Family, listenerPorts: readonly number[]): FamilyPlan {
  const { spec } = input;
  // Istio sends the proxy's loopback traffic to a non-loopback address of the pod back into
  // inbound capture; the pod's own address is such a destination and never leaves the pod.
  const own = input.assessment.perFamily[family].addresses[0];
  const problem = loopbackPortProblem(spec, listenerPorts);
  const first = input.probePort ?? PREFERRED_PORTS.find((port) => problem(port) === undefined);
  if (!own || first === undefined) {
    return {
      kind: 'ProbeUnroutable',
      family,
      message: `${familyLabel(family)}: no pod address to probe the proxy-loopback capture with`,
    };
  }
  const spread = spreadPorts(first, input.randomPort, spec.includeOutboundPorts, problem, input.spread);
  const targets = spread.ports.map((port) => ({
    family,
    path: 'proxy-loopback' as const,
    destination: own.address,
    port,
    expectedPort: spec.inboundPort,
    via: 'lo',
  }));
  const notes = [
    `${familyLabel(family)}: ports ${spread.ports.join(', ')}${input.spread ? ` (random port ${input.randomPort})` : ''}`,
    ...spread.skipped.map((text) => `${familyLabel(family)}: skipped ${text}`),
  ];
  return { targets, notes };
}

function fail(kind: PlanProblemKind, family: Family | undefined, message: string): ProbePlan {
  return { ok: false, problem: { kind, family, message } };
}
