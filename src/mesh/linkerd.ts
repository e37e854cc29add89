import type { MeshIdentity } from './mesh-identity.js';
import { presetPorts } from './preset-ports.js';

/**
 * Linkerd: proxy-init / linkerd-cni rules, linkerd-network-validator (exit 95). Facts pinned in
 * test/fixtures/meshes/facts and the injector's goldens under test/fixtures/meshes/linkerd.
 */
export const LINKERD = {
  name: 'linkerd',
  failureExitCode: 95,
  controlPlaneNamespace: 'linkerd',
  // linkerd2 charts/linkerd2-cni/templates/cni-plugin.yaml (DaemonSet linkerd-cni) and
  // charts/linkerd-control-plane/templates/config.yaml (linkerd-config, `values`: the chart's values as YAML).
  cniInstall: {
    daemonSet: 'linkerd-cni',
    namespace: 'linkerd-cni',
    config: { configMap: 'linkerd-config', key: 'values', format: 'yaml', path: ['cniEnabled'] },
    installCni: 'linkerd install-cni | kubectl apply -f -',
    enableCni: 'linkerd upgrade --linkerd-cni-enabled | kubectl apply -f -',
  },
  containers: { validator: 'linkerd-network-validator', proxy: 'linkerd-proxy', rulesWriter: 'linkerd-init' },
  // Linkerd's validator runs as nobody.
  validatorUid: 65534,
  // Its node agent's port on the host network (`manifest --node-agent`): one per mesh, so two meshes' agents share a node.
  nodeAgentPort: 9478,
  cniPlugin: 'linkerd-cni',
  podMetadata: 'annotations',
  namespaceAnnotationFallback: true,
  // linkerd-cni (cni-plugin/main.go): an empty annotation is absent; skip-inbound-ports adds to the
  // proxy's own (4190, 4191); skip-subnets are sources whose inbound traffic proxy-init leaves alone
  // (its --subnets-to-ignore, on the inbound redirect chain).
  podAnnotations: [
    { key: 'config.linkerd.io/proxy-uid', flag: '--proxy-uid', merge: 'replace', empty: 'absent' },
    { key: 'config.linkerd.io/proxy-gid', flag: '--proxy-gid', merge: 'replace', empty: 'absent' },
    {
      key: 'config.linkerd.io/skip-outbound-ports',
      flag: '--exclude-outbound-ports',
      merge: 'replace',
      empty: 'absent',
    },
    { key: 'config.linkerd.io/skip-inbound-ports', flag: '--exclude-inbound-ports', merge: 'append', empty: 'absent' },
    { key: 'config.linkerd.io/skip-subnets', flag: '--exclude-inbound-cidrs', merge: 'replace', empty: 'absent' },
  ],
  annotationSwitches: [],
  opaqueAnnotations: [],
  // Control-plane pods also skip the API server's ports (the `kubernetes` Service's port and target
  // port; 443,6443 when linkerd-cni cannot read them), which no pod metadata shows.
  labelExclusions: [
    { label: 'linkerd.io/control-plane-component', flag: '--exclude-outbound-ports', value: '443,6443' },
  ],
  // The proxy injector acts on `linkerd.io/inject: enabled|ingress` (pod, else namespace) and
  // skips a pod that has its proxy.
  admission: {
    injector: "Linkerd's proxy injector",
    podSwitch: [{ in: 'annotations', key: 'linkerd.io/inject' }],
    switchOn: ['enabled', 'ingress'],
    namespaceSwitches: [{ in: 'annotations', key: 'linkerd.io/inject', values: ['enabled', 'ingress'] }],
    injectedAnnotations: [],
  },
  capturedPods: undefined,
  dropIn: {
    argv: 'linkerd2-network-validator',
    // The path Linkerd's injector puts in `command:`; the image provides it (a shim that passes
    // the bare name first).
    programs: ['/usr/lib/linkerd/linkerd2-network-validator', 'linkerd2-network-validator'],
    command: ['/usr/lib/linkerd/linkerd2-network-validator'],
    // --log-format, --log-level and --timeout are Interlock's flags too; these two are Linkerd's alone.
    ownFlags: ['--connect-addr', '--listen-addr'],
    rulesWriterValidation: undefined,
    mountPaths: [],
  },
  capture: {
    inboundPort: 4143,
    outboundPort: 4140,
    proxyUids: [2102],
    excludeInboundPorts: presetPorts('4190,4191'),
  },
} as const satisfies MeshIdentity;
