import type { MeshIdentity } from './mesh-identity.js';

/**
 * Kuma: kuma-init / kuma-cni rules (chains KUMA_MESH_*), kuma-validation. Facts pinned in
 * test/fixtures/meshes/kuma (kumahq/kuma `test/transparentproxy/testdata/*.golden`, the
 * injector's goldens, `pkg/plugins/runtime/k8s/metadata/annotations.go`).
 *
 * Failure code 98, not Kuma's 1: kumactl exits 1 through cobra on any error and nothing in Kuma
 * reads it (kumahq/kuma#13572: no repair controller), so no consumer depends on 1; while 1 is
 * what a crashed Node.js returns, and Interlock's node agent, here Kuma's repair controller,
 * must never recreate pods on a crash it took for a verdict.
 */
export const KUMA = {
  name: 'kuma',
  failureExitCode: 98,
  controlPlaneNamespace: 'kuma-system',
  containers: { validator: 'kuma-validation', proxy: 'kuma-sidecar', rulesWriter: 'kuma-init' },
  // kuma-validation runs as the sidecar's uid (runAsUser/runAsGroup 5678 in the injector's goldens).
  validatorUid: 5678,
  // Its node agent's port on the host network (`manifest --node-agent`): one per mesh, so two meshes' agents share a node.
  nodeAgentPort: 9481,
  cniPlugin: 'kuma-cni',
  podMetadata: 'annotations',
  namespaceAnnotationFallback: false,
  // kuma-cni without a transparent-proxy config annotation (NewIntermediateConfig and mapToConfig,
  // app/cni/pkg/cni/annotations_linux.go and injector_linux.go, v2.14.3; names from
  // pkg/plugins/runtime/k8s/metadata/annotations.go): each annotation or its default; an empty or
  // unparseable value fails the plugin, which then writes no rules. Both exclusion lists default to
  // the Envoy admin port 9901; the application probe proxy port (default 9001, `0` none) is added to
  // the inbound ones.
  podAnnotations: [
    { key: 'kuma.io/transparent-proxying-inbound-port', flag: '--inbound-port', merge: 'replace', empty: 'refused' },
    { key: 'kuma.io/transparent-proxying-outbound-port', flag: '--outbound-port', merge: 'replace', empty: 'refused' },
    { key: 'kuma.io/sidecar-uid', flag: '--proxy-uid', merge: 'replace', empty: 'refused' },
    {
      key: 'traffic.kuma.io/exclude-inbound-ports',
      flag: '--exclude-inbound-ports',
      merge: 'replace',
      empty: 'refused',
      absent: '9901',
    },
    {
      key: 'kuma.io/application-probe-proxy-port',
      flag: '--exclude-inbound-ports',
      merge: 'append',
      empty: 'refused',
      absent: '9001',
      none: '0',
    },
    {
      key: 'traffic.kuma.io/exclude-outbound-ports',
      flag: '--exclude-outbound-ports',
      merge: 'replace',
      empty: 'refused',
      absent: '9901',
    },
    { key: 'traffic.kuma.io/exclude-inbound-ips', flag: '--exclude-inbound-cidrs', merge: 'replace', empty: 'refused' },
    {
      key: 'traffic.kuma.io/exclude-outbound-ips',
      flag: '--exclude-outbound-cidrs',
      merge: 'replace',
      empty: 'refused',
    },
    { key: 'kuma.io/builtin-dns-port', flag: '--dns-port', merge: 'replace', empty: 'refused' },
  ],
  // GetEnabled: `enabled`/`true` on, `disabled`/`false` off (any case; another case is refused here).
  annotationSwitches: [
    { annotation: 'kuma.io/builtin-dns', on: ['enabled', 'true'], off: ['disabled', 'false'], flag: '--dns-capture' },
    {
      annotation: 'traffic.kuma.io/drop-invalid-packets',
      on: ['enabled', 'true'],
      off: ['disabled', 'false'],
      flag: '--drop-invalid',
    },
  ],
  // The whole config as YAML (the injector writes it when the control plane has a transparent-proxy
  // ConfigMap: kuma-cni then reads only it), eBPF instead of iptables, per-uid exclusions, and a
  // gateway's missing inbound redirect: rules the reader does not model.
  opaqueAnnotations: [
    { key: 'traffic.kuma.io/transparent-proxy-config' },
    { key: 'kuma.io/transparent-proxying-ebpf', values: ['enabled', 'true'] },
    { key: 'traffic.kuma.io/exclude-outbound-ports-for-uids' },
    { key: 'kuma.io/gateway', values: ['enabled', 'true'] },
  ],
  labelExclusions: [],
  // The injector reads the `kuma.io/sidecar-injection` label, the pod's before the namespace's
  // (`enabled`, `true` or `yes` opt in: metadata.GetEnabled), and skips a pod with kuma-sidecar.
  admission: {
    injector: "Kuma's sidecar injector",
    podSwitch: [{ in: 'labels', key: 'kuma.io/sidecar-injection' }],
    switchOn: ['enabled', 'true', 'yes'],
    namespaceSwitches: [{ in: 'labels', key: 'kuma.io/sidecar-injection', values: ['enabled', 'true', 'yes'] }],
    injectedAnnotations: ['kuma.io/sidecar-injected'],
  },
  capturedPods: undefined,
  dropIn: {
    argv: 'kumactl',
    // The injector's `command:` (NewValidationContainer); the image provides the path, a shim that
    // passes the bare name first.
    programs: ['/usr/bin/kumactl', 'kumactl'],
    command: ['/usr/bin/kumactl', 'install', 'transparent-proxy-validator'],
    ownFlags: ['--validation-server-port', '--transparent-proxy-config', '--ip-family-mode'],
    rulesWriterValidation: undefined,
    // The kuma-sidecar-tmp emptyDir, where kumactl's --config-file lives (NewValidationContainer).
    mountPaths: ['/tmp'],
  },
  // The transparent proxy's defaults: 15001 out, 15006 in, the kuma-dp uid 5678 returned, its
  // loopback TCP (not to 127.0.0.1 / ::1) sent to the inbound redirect, DNS to 15053 when enabled.
  // With DNS on, its rules come first in OUTPUT (builder_table_nat.go): UDP DNS to 15053 ahead of
  // the 127.0.0.6 return; the application's TCP DNS went to 15053 until kumahq/kuma#15401 (2.11.9,
  // 2.12.9, 2.13.5, 2.14.0) returned it to its original destination; either is Kuma's.
  capture: {
    inboundPort: 15006,
    outboundPort: 15001,
    proxyUids: [5678],
    dnsPort: 15053,
    dnsRulesFirst: true,
    proxyLoopbackToInbound: true,
  },
} as const satisfies MeshIdentity;
