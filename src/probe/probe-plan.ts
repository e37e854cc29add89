import { cidrContains } from '../addr/cidr.js';
import { formatIp, sameIp, type Family, type IpAddress } from '../addr/ip.js';
import { portSetIsEmpty } from '../addr/port-set.js';
import type { InterceptionSpec } from '../config/interception.js';
import type { ValidateConfig } from '../config/validate-config.js';
import { familyLabel, type NetworkAssessment } from '../network/assess-pod-network.js';
import type { PodNetwork } from '../network/pod-network.js';
import { routability } from '../network/route-lookup.js';
import { directReach, localWhy } from './direct-reach.js';
import { candidateAddresses, isDocumentationAddress, onLinkNeighbour, type Random } from './probe-addresses.js';
import { loopbackPortProblem, outboundPortProblem, PREFERRED_PORTS, spreadPorts } from './probe-ports.js';

/** Which path the probe takes: the app's outbound capture, or Istio's proxy-loopback capture. */
export type ProbePath = 'outbound' | 'proxy-loopback';

/** The uid and gid a probe connection is made as, when it is not the validator's own. */
export interface RunAs {
  readonly uid: number;
  readonly gid: number;
}

/** One connection to make and where it must arrive if the rules intercept it. */
export interface ProbeTarget {
  readonly family: Family;
  readonly path: ProbePath;
  /** Set when the connection is made by a child process as another identity (connect-as.ts). */
  readonly as?: RunAs;
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

/** A path the mesh's rules give that the probe did not try, and why: said in the verdict, never claimed. */
export interface UnprobedPath {
  readonly path: ProbePath;
  readonly message: string;
}

export type ProbePlan =
  | {
      readonly ok: true;
      readonly targets: readonly ProbeTarget[];
      readonly notes: readonly string[];
      readonly unprobed: readonly UnprobedPath[];
    }
  | { readonly ok: false; readonly error: PlanProblem };

export interface ProbeIdentity {
  readonly uid: number;
  readonly gid: number;
  readonly groups: readonly number[];
  /** CAP_SETUID and CAP_SETGID are effective: a child can connect as another uid and gid. */
  readonly canSwitch?: boolean;
}

/** What the plan reads of validate's configuration, under the same names. */
type PlanConfig = Pick<ValidateConfig, 'probeAddresses' | 'probeAddressHints' | 'probePort' | 'probeSpread'>;

export interface PlanInput extends PlanConfig {
  readonly spec: InterceptionSpec;
  readonly network: PodNetwork;
  readonly assessment: NetworkAssessment;
  readonly identity: ProbeIdentity;
  /** A port above 1024 drawn by the caller (the plan stays pure), probed in every family. */
  readonly randomPort: number;
  /** Draws the documentation address in each range (injected: the plan stays pure). */
  readonly random: Random;
}

type FamilyPlan = { readonly targets: readonly ProbeTarget[]; readonly notes: readonly string[] } | PlanProblem;

export function planProbes(input: PlanInput): ProbePlan {
  const { spec, identity } = input;
  const runsAsProxy = spec.proxyUids.includes(identity.uid) || spec.proxyGids.includes(identity.gid);
  const paths = pathsOf(spec, identity, runsAsProxy);
  const listenerPorts = [paths.own, ...(paths.other ? [paths.other.path] : [])].map((path) =>
    path === 'proxy-loopback' ? spec.inboundPort : spec.outboundPort,
  );
  const refused = refusal(input, runsAsProxy, listenerPorts);
  if (refused) return refused;
  const targets: ProbeTarget[] = [];
  const notes: string[] = [];
  for (const family of input.assessment.familiesToProve) {
    for (const [path, as] of [[paths.own, undefined], ...(paths.other ? [[paths.other.path, paths.other.as]] : [])] as [
      ProbePath,
      RunAs | undefined,
    ][]) {
      const planned =
        path === 'proxy-loopback'
          ? planProxyLoopback(input, family, listenerPorts)
          : planOutbound(input, family, listenerPorts);
      if ('kind' in planned) return { ok: false, error: planned };
      targets.push(...planned.targets.map((target) => (as ? { ...target, as } : target)));
      notes.push(...planned.notes);
    }
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
  return { ok: true, targets, notes: [...notes, paths.note], unprobed: paths.unprobed };
}

/** A flag or identity under which no probe could prove anything: refused before any target is planned. */
function refusal(input: PlanInput, runsAsProxy: boolean, listenerPorts: readonly number[]): ProbePlan | undefined {
  const { spec, identity } = input;
  if (input.probePort !== undefined && listenerPorts.includes(input.probePort)) {
    return fail(
      'ConfigInvalid',
      undefined,
      `--probe-port ${input.probePort} is the port the validator itself listens on: a probe to it can arrive without any rule, so its pass would prove nothing; choose another port`,
    );
  }
  // Every given address is checked, probed family or not: a nonsensical flag is an error, not ignored.
  for (const override of Object.values(input.probeAddresses)) {
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
  return undefined;
}

interface Paths {
  /** The path this process's own connections take. */
  readonly own: ProbePath;
  /** The mesh's other path, probed by a child process as the identity that takes it. */
  readonly other: { readonly path: ProbePath; readonly as: RunAs } | undefined;
  readonly unprobed: readonly UnprobedPath[];
  readonly note: string;
}

const APP_PATH = "the application's outbound capture (any uid but the proxy's)";
const PROXY_PATH = "the proxy-loopback capture (the proxy uid's own traffic to the pod's address)";

/**
 * Istio's rules give two outbound paths by owner: the proxy uid's traffic RETURNs except its
 * loopback traffic to the pod's address (into the inbound port), everyone else's is redirected to
 * the outbound port. A connection proves only the path of the identity that made it, so the other
 * path is probed as the identity that takes it when this process may switch, else named unprobed.
 */
function pathsOf(spec: InterceptionSpec, identity: ProbeIdentity, runsAsProxy: boolean): Paths {
  const own: ProbePath = runsAsProxy ? 'proxy-loopback' : 'outbound';
  const self = `uid ${identity.uid} gid ${identity.gid} (this process)`;
  const proxyUid = spec.proxyUids[0];
  if (!spec.proxyLoopbackToInbound || proxyUid === undefined)
    return { own, other: undefined, unprobed: [], note: `probe path: ${pathName(own)} as ${self}` };
  const otherPath: ProbePath = runsAsProxy ? 'outbound' : 'proxy-loopback';
  const as = runsAsProxy ? appIdentity(spec) : { uid: proxyUid, gid: spec.proxyGids[0] ?? proxyUid };
  if (identity.canSwitch !== true) {
    const message = `${pathName(otherPath)} was not probed: the validator runs as uid ${identity.uid} without CAP_SETUID and CAP_SETGID, so it cannot connect as uid ${as.uid}, and its own connections prove only ${pathName(own)}`;
    return {
      own,
      other: undefined,
      unprobed: [{ path: otherPath, message }],
      note: `probe path: ${pathName(own)} as ${self}; ${message}`,
    };
  }
  return {
    own,
    other: { path: otherPath, as },
    unprobed: [],
    note: `probe paths: ${pathName(own)} as ${self}; ${pathName(otherPath)} as uid ${as.uid} gid ${as.gid} (a child process)`,
  };
}

const pathName = (path: ProbePath): string => (path === 'outbound' ? APP_PATH : PROXY_PATH);

/** An identity the rules treat as the application's: not the proxy's, in no excluded group. */
function appIdentity(spec: InterceptionSpec): RunAs {
  const free = (id: number, taken: readonly number[]): number => {
    let candidate = id;
    while (taken.includes(candidate)) candidate--;
    return candidate;
  };
  const uid = free(65534, spec.proxyUids);
  const gid =
    spec.includeOutboundGids.kind === 'list' && spec.includeOutboundGids.ids[0] !== undefined
      ? spec.includeOutboundGids.ids[0]
      : free(65534, [...spec.proxyGids, ...spec.excludeOutboundGids]);
  return { uid, gid };
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
  const override = input.probeAddresses[family];
  const hint = override ? undefined : input.probeAddressHints[family];
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
      input.probeSpread,
    );
    const notes = [
      `${familyLabel(family)}: ports ${spread.ports.join(', ')}${input.probeSpread ? ` (random port ${input.randomPort})` : ''}`,
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
  const spread = spreadPorts(first, input.randomPort, spec.includeOutboundPorts, problem, input.probeSpread);
  const targets = spread.ports.map((port) => ({
    family,
    path: 'proxy-loopback' as const,
    destination: own.address,
    port,
    expectedPort: spec.inboundPort,
    via: 'lo',
  }));
  const notes = [
    `${familyLabel(family)}: ports ${spread.ports.join(', ')}${input.probeSpread ? ` (random port ${input.randomPort})` : ''}`,
    ...spread.skipped.map((text) => `${familyLabel(family)}: skipped ${text}`),
  ];
  return { targets, notes };
}

function fail(kind: PlanProblemKind, family: Family | undefined, message: string): ProbePlan {
  return { ok: false, error: { kind, family, message } };
}
