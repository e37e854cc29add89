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
  containers: { validator: 'kuma-validation', proxy: 'kuma-sidecar', rulesWriter: 'kuma-init' },
  // kuma-validation runs as the sidecar's uid (runAsUser/runAsGroup 5678 in the injector's goldens).
  validatorUid: 5678,
  cniPlugin: 'kuma-cni',
  podMetadata: undefined,
  namespaceAnnotationFallback: false,
  annotationFlags: {
    'traffic.kuma.io/exclude-inbound-ports': '--exclude-inbound-ports',
    'traffic.kuma.io/exclude-outbound-ports': '--exclude-outbound-ports',
    'traffic.kuma.io/exclude-outbound-ips': '--exclude-outbound-cidrs',
  },
  annotationSwitches: [],
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
  capture: {
    inboundPort: 15006,
    outboundPort: 15001,
    proxyUids: [5678],
    dnsPort: 15053,
    proxyLoopbackToInbound: true,
  },
} as const satisfies MeshIdentity;
