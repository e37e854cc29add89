import type { MeshIdentity } from './mesh-identity.js';
import { presetPorts } from './preset-ports.js';

/**
 * Istio's sidecar dataplane: istio-init / istio-cni rules, istio-validation (exit 126). Facts
 * pinned in test/fixtures/meshes/facts and the injector's goldens under test/fixtures/meshes/istio.
 */
export const ISTIO = {
  name: 'istio',
  failureExitCode: 126,
  controlPlaneNamespace: 'istio-system',
  // istio 1.28.9 manifests/charts/istio-cni/templates/daemonset.yaml (`istio-cni` + `-node`) and
  // istio-discovery/templates/istiod-injector-configmap.yaml (`values`: JSON, pilot.cni picked in),
  // whose injection template renders istio-validation only when .Values.pilot.cni.enabled.
  cniInstall: {
    daemonSet: 'istio-cni-node',
    namespace: 'istio-system',
    config: { configMap: 'istio-sidecar-injector', key: 'values', format: 'json', path: ['pilot', 'cni', 'enabled'] },
    installCni: 'helm install istio-cni istio/cni -n istio-system',
    enableCni: 'helm upgrade istiod istio/istiod -n istio-system --reuse-values --set pilot.cni.enabled=true',
  },
  containers: { validator: 'istio-validation', proxy: 'istio-proxy', rulesWriter: 'istio-init' },
  // Istio's validator runs as the proxy's uid, which its rules treat specially.
  validatorUid: 1337,
  // Its node agent's port on the host network (`manifest --node-agent`): one per mesh, so two meshes' agents share a node.
  nodeAgentPort: 9479,
  cniPlugin: 'istio-cni',
  podMetadata: 'annotations',
  namespaceAnnotationFallback: false,
  // istio-cni (cni/pkg/plugin/sidecar_redirect.go): an annotation, present even if empty, replaces
  // the plugin's default (the preset's); the status and metrics ports are always added to the
  // inbound exclusions; istio.io/reroute-virtual-interfaces wins over kubevirtInterfaces.
  podAnnotations: [
    {
      key: 'traffic.sidecar.istio.io/includeInboundPorts',
      flag: '--include-inbound-ports',
      merge: 'replace',
      empty: 'value',
    },
    {
      key: 'traffic.sidecar.istio.io/excludeInboundPorts',
      flag: '--exclude-inbound-ports',
      merge: 'append',
      empty: 'value',
    },
    {
      key: 'traffic.sidecar.istio.io/includeOutboundIPRanges',
      flag: '--include-outbound-cidrs',
      merge: 'replace',
      empty: 'value',
    },
    {
      key: 'traffic.sidecar.istio.io/excludeOutboundIPRanges',
      flag: '--exclude-outbound-cidrs',
      merge: 'replace',
      empty: 'value',
    },
    {
      key: 'traffic.sidecar.istio.io/includeOutboundPorts',
      flag: '--include-outbound-ports',
      merge: 'replace',
      empty: 'value',
    },
    {
      key: 'traffic.sidecar.istio.io/excludeOutboundPorts',
      flag: '--exclude-outbound-ports',
      merge: 'replace',
      empty: 'value',
    },
    {
      key: 'traffic.sidecar.istio.io/excludeInterfaces',
      flag: '--exclude-interfaces',
      merge: 'replace',
      empty: 'value',
    },
    {
      key: 'traffic.sidecar.istio.io/kubevirtInterfaces',
      flag: '--reroute-interfaces',
      merge: 'replace',
      empty: 'value',
    },
    { key: 'istio.io/reroute-virtual-interfaces', flag: '--reroute-interfaces', merge: 'replace', empty: 'value' },
  ],
  annotationSwitches: [
    { annotation: 'sidecar.istio.io/interceptionMode', on: ['TPROXY'], off: ['REDIRECT'], flag: '--tproxy' },
  ],
  opaqueAnnotations: [],
  labelExclusions: [],
  // The sidecar injector acts on `sidecar.istio.io/inject` (label, else annotation; `true` opts in,
  // anything else out) or a namespace label, and skips a pod carrying `sidecar.istio.io/status`.
  admission: {
    injector: "Istio's sidecar injector",
    podSwitch: [
      { in: 'labels', key: 'sidecar.istio.io/inject' },
      { in: 'annotations', key: 'sidecar.istio.io/inject' },
    ],
    switchOn: ['true'],
    namespaceSwitches: [
      { in: 'labels', key: 'istio-injection', values: ['enabled'] },
      { in: 'labels', key: 'istio.io/rev', values: undefined },
    ],
    injectedAnnotations: ['sidecar.istio.io/status'],
  },
  capturedPods: undefined,
  dropIn: {
    argv: 'istio-iptables',
    // istio-validation's args start with this subcommand of pilot-agent.
    programs: ['istio-iptables'],
    command: undefined,
    ownFlags: [],
    rulesWriterValidation: ['--run-validation', '--skip-rule-apply'],
    mountPaths: [],
  },
  // The istio-cni / sidecar-injector defaults; 15008 (the HBONE tunnel) is inboundTunnelPort.
  capture: {
    inboundPort: 15006,
    outboundPort: 15001,
    proxyUids: [1337],
    proxyGids: [1337],
    excludeInboundPorts: presetPorts('15020,15021,15090'),
    excludeOutboundPorts: presetPorts('15020'),
    dnsPort: 15053,
    inboundTunnelPort: 15008,
    proxyLoopbackToInbound: true,
  },
} as const satisfies MeshIdentity;
