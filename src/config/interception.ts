import { parseCidr, type Cidr } from '../addr/cidr.js';
import type { IpAddress } from '../addr/ip.js';
import { ALL_PORTS, NO_PORTS, type PortSet } from '../addr/port-set.js';
import type { Dataplane, MarkMatch, MarkRoute } from '../mesh/mesh-identity.js';
import { meshIdentities, type Mesh } from '../mesh/meshes.js';
import type { CidrSet, IdSet } from './flag-parsers.js';

export type { CidrSet, IdSet } from './flag-parsers.js';
export { MESHES, type Mesh } from '../mesh/meshes.js';
export type { Dataplane, MarkMatch, MarkRoute } from '../mesh/mesh-identity.js';

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
  /**
   * With DNS captured, the mesh's DNS rules come first, ahead of its own chain (Kuma's OUTPUT): UDP
   * DNS from the passthrough source goes to the DNS port too (never the inbound port, so no loop),
   * and the application's TCP DNS goes there or, as Kuma does from kumahq/kuma#15401 (2.11.9,
   * 2.12.9, 2.13.5, 2.14.0), to its original destination.
   */
  readonly dnsRulesFirst: boolean;
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

export interface MeshPreset {
  readonly spec: InterceptionSpec;
  readonly failureExitCode: number;
  /** The init container name the mesh's repair controller looks for (exit code in lastState). */
  readonly validatorContainer: string;
  /** The type of the mesh's chained CNI plugin; generic has none (cni-check needs --mesh-plugin). */
  readonly cniPlugin: string | undefined;
}

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
  dnsRulesFirst: false,
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

/** Each mesh's preset, composed from its module in src/mesh/ (the one place a mesh is declared). */
export const PRESETS: Readonly<Record<Mesh, MeshPreset>> = Object.fromEntries(
  meshIdentities().map((identity): [Mesh, MeshPreset] => [
    identity.name,
    {
      failureExitCode: identity.failureExitCode,
      validatorContainer: identity.containers.validator,
      cniPlugin: identity.cniPlugin,
      spec: { ...CAPTURE_ALL, ...identity.capture, mesh: identity.name },
    },
  ]),
) as Record<Mesh, MeshPreset>;

function parsedCidr(text: string): Cidr {
  const cidr = parseCidr(text);
  if (!cidr) throw new Error(`preset CIDR ${text} does not parse`);
  return cidr;
}
