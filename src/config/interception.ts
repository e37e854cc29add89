import { parseCidr, type Cidr } from '../addr/cidr.js';
import { parseIp, type IpAddress } from '../addr/ip.js';
import { ALL_PORTS, NO_PORTS, parsePortSet, type PortSet } from '../addr/port-set.js';
import type { CidrSet, IdSet } from './flag-parsers.js';
import type { Mesh } from './interception-flags.js';

export type { CidrSet, IdSet } from './flag-parsers.js';
export { MESHES, type Mesh } from './interception-flags.js';

/**
 * What the mesh intends its capture rules to do. Every field is data the expectations are derived
 * from; a preset fills it, flags replace single fields.
 */
export interface InterceptionSpec {
  readonly mesh: Mesh;
  /** Port the proxy accepts redirected inbound connections on (Linkerd 4143, Istio 15006). */
  readonly inboundPort: number;
  /** Port the proxy accepts redirected outbound connections on (Linkerd 4140, Istio 15001). */
  readonly outboundPort: number;
  /** The proxy's uids, whose outbound traffic must never be redirected (that would loop). */
  readonly proxyUids: readonly number[];
  readonly proxyGids: readonly number[];
  readonly includeInboundPorts: PortSet;
  readonly excludeInboundPorts: PortSet;
  /** Inbound connections from these sources are not redirected (Linkerd's --subnets-to-ignore). */
  readonly excludeInboundCidrs: readonly Cidr[];
  /** Destinations whose outbound TCP must be redirected (Istio includeOutboundIPRanges; `*` = all). */
  readonly includeOutboundCidrs: CidrSet;
  readonly excludeOutboundCidrs: readonly Cidr[];
  /** Ports always redirected outbound, even outside includeOutboundCidrs (Istio includeOutboundPorts). */
  readonly includeOutboundPorts: PortSet;
  readonly excludeOutboundPorts: PortSet;
  /** Only traffic of these groups is captured outbound (Istio OwnerGroupsInclude; `*` = all). */
  readonly includeOutboundGids: IdSet;
  readonly excludeOutboundGids: readonly number[];
  /** Interfaces whose traffic the mesh leaves alone in both directions. */
  readonly excludeInterfaces: readonly string[];
  /** Inbound capture by TPROXY in mangle instead of REDIRECT in nat. */
  readonly tproxy: boolean;
  /** DNS to these servers (or, empty, to any server) is captured; undefined when DNS is not captured. */
  readonly dnsCapture: { readonly servers: readonly IpAddress[] } | undefined;
  /** Port the proxy's DNS resolver listens on for captured DNS (Istio 15053; 0 = none). */
  readonly dnsPort: number;
  /** Port of the mesh's inbound tunnel (Istio HBONE 15008; 0 = none): never redirected inbound. */
  readonly inboundTunnelPort: number;
  /** Destinations the host treats as its own loopback, never redirected (Istio HostIPv4LoopbackCidr; ::1 always). */
  readonly hostLoopbackCidr: Cidr;
  /** Interfaces whose arriving traffic is sent to the OUTBOUND port (Istio RerouteVirtualInterfaces, KubeVirt). */
  readonly rerouteInterfaces: readonly string[];
  /**
   * The proxy's own TCP over loopback to a non-loopback address of the pod goes to the inbound port
   * (Istio: the sidecar calling its own pod IP, and how istio-validation proves capture).
   */
  readonly proxyLoopbackToInbound: boolean;
  /** Connections in conntrack state INVALID are dropped on the way in (Istio DropInvalid / INVALID_DROP). */
  readonly dropInvalid: boolean;
  /**
   * Who owns the proxy and its rules: a sidecar in the pod (identified by uid/gid), or a node proxy
   * that enters the pod's namespace (Istio ambient's ztunnel, identified by its socket mark).
   */
  readonly dataplane: Dataplane;
  /** Packets carrying one of these marks are the proxy's own (ztunnel's SO_MARK 0x539/0xfff): never redirected. */
  readonly proxyMarks: readonly MarkMatch[];
  /**
   * Outbound TCP carrying one of these marks belongs to a connection the proxy accepted (Istio
   * ambient's connmark 0x111/0xfff, restored onto the packet in mangle OUTPUT): not redirected.
   */
  readonly acceptedMarks: readonly MarkMatch[];
  /** The node's health-probe source addresses: TCP from (inbound) and to (outbound) them is accepted. */
  readonly hostProbeAddresses: readonly IpAddress[];
  /** The policy route the rules rely on: `ip rule fwmark <mark> lookup <table>`, local default routes via lo there. */
  readonly markRoute: MarkRoute | undefined;
}

export type Dataplane = 'sidecar' | 'ambient';

/** A packet-mark test: `mark & mask == value`. */
export interface MarkMatch {
  readonly value: number;
  readonly mask: number;
}

export interface MarkRoute {
  readonly mark: MarkMatch;
  readonly table: number;
}

export interface MeshPreset {
  readonly spec: InterceptionSpec;
  readonly failureExitCode: number;
  /** The init container name the mesh's repair controller looks for (exit code in lastState). */
  readonly validatorContainer: string;
  /** The type of the mesh's chained CNI plugin; generic has none (cni-check needs --mesh-plugin). */
  readonly cniPlugin: string | undefined;
}

// The istio-cni / sidecar-injector defaults; 15008 (the HBONE tunnel) is inboundTunnelPort.
const ISTIO_EXCLUDED_INBOUND = parsedPorts('15020,15021,15090');
const LOOPBACK_HOST = parsedCidr('127.0.0.1/32');

/** What a mesh does unless its preset says otherwise: capture everything, exclude nothing. */
const CAPTURE_ALL: Omit<InterceptionSpec, 'mesh' | 'inboundPort' | 'outboundPort'> = {
  proxyUids: [],
  proxyGids: [],
  includeInboundPorts: ALL_PORTS,
  excludeInboundPorts: NO_PORTS,
  excludeInboundCidrs: [],
  includeOutboundCidrs: { kind: 'all' },
  excludeOutboundCidrs: [],
  includeOutboundPorts: NO_PORTS,
  excludeOutboundPorts: NO_PORTS,
  includeOutboundGids: { kind: 'all' },
  excludeOutboundGids: [],
  excludeInterfaces: [],
  tproxy: false,
  dnsCapture: undefined,
  dnsPort: 0,
  inboundTunnelPort: 0,
  hostLoopbackCidr: LOOPBACK_HOST,
  rerouteInterfaces: [],
  proxyLoopbackToInbound: false,
  dropInvalid: false,
  dataplane: 'sidecar',
  proxyMarks: [],
  acceptedMarks: [],
  hostProbeAddresses: [],
  markRoute: undefined,
};

/**
 * istio-cni's in-pod (ambient) constants: cni/pkg/config/config.go (1.28.0 on; before,
 * cni/pkg/iptables/iptables.go), host-probe defaults from cni/pkg/nodeagent/options.go
 * (the IPv6 one from 1.23.0); pinned in test/fixtures/meshes/facts/istio-ambient.json.
 */
const AMBIENT_PROXY_MARK: MarkMatch = { value: 0x539, mask: 0xfff };
const AMBIENT_ACCEPTED_MARK: MarkMatch = { value: 0x111, mask: 0xfff };
const AMBIENT_ROUTE_TABLE = 100;
const AMBIENT_HOST_PROBES = [parsedIp('169.254.7.127'), parsedIp('fd16:9254:7127:1337:ffff:ffff:ffff:ffff')];

export const PRESETS: Readonly<Record<Mesh, MeshPreset>> = {
  linkerd: {
    failureExitCode: 95,
    validatorContainer: 'linkerd-network-validator',
    cniPlugin: 'linkerd-cni',
    spec: {
      ...CAPTURE_ALL,
      mesh: 'linkerd',
      inboundPort: 4143,
      outboundPort: 4140,
      proxyUids: [2102],
      excludeInboundPorts: parsedPorts('4190,4191'),
    },
  },
  istio: {
    failureExitCode: 126,
    validatorContainer: 'istio-validation',
    cniPlugin: 'istio-cni',
    spec: {
      ...CAPTURE_ALL,
      mesh: 'istio',
      inboundPort: 15006,
      outboundPort: 15001,
      proxyUids: [1337],
      proxyGids: [1337],
      excludeInboundPorts: ISTIO_EXCLUDED_INBOUND,
      excludeOutboundPorts: parsedPorts('15020'),
      dnsPort: 15053,
      inboundTunnelPort: 15008,
      proxyLoopbackToInbound: true,
    },
  },
  // ztunnel binds 15001/15006/15008/15053 in the pod and marks its sockets instead of running
  // under a uid; the chart captures DNS by default from 1.25 (cni.ambient.dnsCapture).
  'istio-ambient': {
    failureExitCode: 126,
    validatorContainer: 'istio-ambient-validation',
    cniPlugin: 'istio-cni',
    spec: {
      ...CAPTURE_ALL,
      mesh: 'istio-ambient',
      dataplane: 'ambient',
      inboundPort: 15006,
      outboundPort: 15001,
      inboundTunnelPort: 15008,
      dnsPort: 15053,
      dnsCapture: { servers: [] },
      proxyMarks: [AMBIENT_PROXY_MARK],
      acceptedMarks: [AMBIENT_ACCEPTED_MARK],
      hostProbeAddresses: AMBIENT_HOST_PROBES,
      markRoute: { mark: AMBIENT_ACCEPTED_MARK, table: AMBIENT_ROUTE_TABLE },
    },
  },
  // Generic has no ports of its own: --inbound-port and --outbound-port are required.
  generic: {
    failureExitCode: 97,
    validatorContainer: 'interlock',
    cniPlugin: undefined,
    spec: { ...CAPTURE_ALL, mesh: 'generic', inboundPort: 0, outboundPort: 0 },
  },
};

function parsedCidr(text: string): Cidr {
  const cidr = parseCidr(text);
  if (!cidr) throw new Error(`preset CIDR ${text} does not parse`);
  return cidr;
}

function parsedIp(text: string): IpAddress {
  const ip = parseIp(text);
  if (!ip) throw new Error(`preset address ${text} does not parse`);
  return ip;
}

function parsedPorts(text: string): PortSet {
  const parsed = parsePortSet(text);
  if (!parsed.ok) throw new Error(`preset port list ${text}: ${parsed.problem}`);
  return parsed.value;
}
