import { parseIp, type IpAddress } from '../addr/ip.js';
import type { MarkMatch, MeshIdentity } from './mesh-identity.js';

/**
 * istio-cni's in-pod (ambient) constants: cni/pkg/config/config.go (1.28.0 on; before,
 * cni/pkg/iptables/iptables.go), host-probe defaults from cni/pkg/nodeagent/options.go
 * (the IPv6 one from 1.23.0); pinned in test/fixtures/meshes/facts/istio-ambient.json.
 */
const PROXY_MARK: MarkMatch = { value: 0x539, mask: 0xfff };
const ACCEPTED_MARK: MarkMatch = { value: 0x111, mask: 0xfff };
const ROUTE_TABLE = 100;

function presetIp(text: string): IpAddress {
  const ip = parseIp(text);
  if (!ip) throw new Error(`preset address ${text} does not parse`);
  return ip;
}

/**
 * Istio's ambient dataplane: istio-cni's node agent writes the rules inside the pod and ztunnel
 * binds 15001/15006/15008/15053 there, marking its sockets instead of running under a uid; the
 * chart captures DNS by default from 1.25 (cni.ambient.dnsCapture). No injector, no drop-in: the
 * validator is Interlock's own (exit 126, Istio's).
 */
export const ISTIO_AMBIENT = {
  name: 'istio-ambient',
  failureExitCode: 126,
  controlPlaneNamespace: 'istio-system',
  // Ambient has no mode switch: istio-cni's node agent is what captures the pods.
  cniInstall: {
    daemonSet: 'istio-cni-node',
    namespace: 'istio-system',
    installCni: 'helm install istio-cni istio/cni -n istio-system --set profile=ambient',
  },
  containers: { validator: 'istio-ambient-validation', proxy: undefined, rulesWriter: undefined },
  // Ambient's rules know no uid (ztunnel is told apart by its socket mark), so nobody will do.
  validatorUid: 65534,
  // Its node agent's port on the host network (`manifest --node-agent`): one per mesh, so two meshes' agents share a node.
  nodeAgentPort: 9480,
  cniPlugin: 'istio-cni',
  // Its per-pod annotations: ISTIO_AMBIENT_POD_ANNOTATIONS below.
  podMetadata: 'istio-cni-ambient',
  // istio-cni reads the pod's own ambient annotations, never its namespace's.
  namespaceAnnotationFallback: false,
  podAnnotations: [],
  annotationSwitches: [],
  opaqueAnnotations: [],
  labelExclusions: [],
  admission: undefined,
  // istio-cni's PodRedirectionEnabled (1.22 to 1.26, cni/pkg/util/podutil.go) and, from 1.27, the
  // chart's default cni.ambient.enablementSelectors (manifests/charts/istio-cni/values.yaml): the
  // namespace or pod label `ambient`, the pod's own `none` opting out; podHasSidecar reads
  // sidecar.istio.io/status and nothing else. Pinned in test/fixtures/meshes/facts/istio-ambient.json.
  capturedPods: {
    label: 'istio.io/dataplane-mode',
    on: 'ambient',
    off: 'none',
    sidecarAnnotation: 'sidecar.istio.io/status',
    enrolledAnnotation: 'ambient.istio.io/redirection',
    enrolledValue: 'enabled',
  },
  dropIn: undefined,
  // ztunnel binds 15001/15006/15008/15053 in the pod and marks its sockets instead of running
  // under a uid; the chart captures DNS by default from 1.25 (cni.ambient.dnsCapture).
  capture: {
    dataplane: 'ambient',
    inboundPort: 15006,
    outboundPort: 15001,
    inboundTunnelPort: 15008,
    dnsPort: 15053,
    dnsCapture: { servers: [] },
    proxyMarks: [PROXY_MARK],
    acceptedMarks: [ACCEPTED_MARK],
    hostProbeAddresses: [presetIp('169.254.7.127'), presetIp('fd16:9254:7127:1337:ffff:ffff:ffff:ffff')],
    markRoute: { mark: ACCEPTED_MARK, table: ROUTE_TABLE },
  },
} as const satisfies MeshIdentity;

/**
 * The pod annotations istio-cni's node agent reads when it writes a pod's rules
 * (getPodLevelTrafficOverrides, cni/pkg/nodeagent/net.go; names from istio/api's annotations.gen.go;
 * pinned per tag in test/fixtures/meshes/facts/istio-ambient.json). The pod's value wins over the
 * chart's: bypass-inbound-capture (from 1.24) turns inbound capture off (the `ingress*` goldens);
 * dns-capture (from 1.25) turns DNS capture on or off whatever cni.ambient.dnsCapture says (the
 * `dns_pod_*` goldens); reroute-virtual-interfaces (from 1.25) lists interfaces whose TCP is sent
 * to the outbound port (the `virtual_interfaces*` goldens). The booleans are Go's strconv.ParseBool
 * values; any other value is ignored by istio-cni, as if absent.
 */
export const ISTIO_AMBIENT_POD_ANNOTATIONS = {
  bypassInboundCapture: 'ambient.istio.io/bypass-inbound-capture',
  dnsCapture: 'ambient.istio.io/dns-capture',
  rerouteVirtualInterfaces: 'istio.io/reroute-virtual-interfaces',
} as const;

export type AmbientPodAnnotation = keyof typeof ISTIO_AMBIENT_POD_ANNOTATIONS;

/**
 * Which of those annotations istio-cni reads, from each minor on (its node agent's
 * cni/pkg/nodeagent/net.go at every tag of test/fixtures/meshes/istio-ambient; pinned per tag as
 * `pod-override` facts in test/fixtures/meshes/facts/istio-ambient.json): 1.21 to 1.23 read none,
 * 1.24 bypass-inbound-capture alone (Go's strconv.ParseBool, an unparsable value ignored), 1.25 on
 * all three. A version before the first row reads none; the last row is the newest's.
 */
const ISTIO_CNI_ANNOTATION_READS: readonly {
  readonly since: readonly [major: number, minor: number];
  readonly reads: readonly AmbientPodAnnotation[];
}[] = [
  { since: [1, 21], reads: [] },
  { since: [1, 24], reads: ['bypassInboundCapture'] },
  { since: [1, 25], reads: ['bypassInboundCapture', 'dnsCapture', 'rerouteVirtualInterfaces'] },
];

/** The annotations istio-cni of `version` (major, minor) reads; no version: the newest's. */
export function ambientAnnotationsRead(version?: readonly [number, number]): ReadonlySet<AmbientPodAnnotation> {
  const rows = ISTIO_CNI_ANNOTATION_READS;
  if (version === undefined) return new Set(rows[rows.length - 1]?.reads ?? []);
  const at = (since: readonly [number, number]) =>
    version[0] > since[0] || (version[0] === since[0] && version[1] >= since[1]);
  const row = [...rows].reverse().find((candidate) => at(candidate.since));
  return new Set(row?.reads ?? []);
}
