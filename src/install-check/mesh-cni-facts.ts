import type { Mesh } from '../mesh/meshes.js';

/**
 * Where each mesh says it runs in CNI mode, from its own charts (pinned in
 * test/fixtures/meshes/facts/mesh-cni-install.json): the CNI node DaemonSet's name, and the
 * ConfigMap whose `values` key holds the control plane's chart values with the switch's path.
 */
export interface MeshCniFacts {
  readonly daemonSet: string;
  readonly config?: {
    readonly configMap: string;
    readonly key: 'values';
    readonly format: 'yaml' | 'json';
    readonly path: readonly string[];
  };
  /** The command that turns CNI mode on, as the mesh's docs give it. */
  readonly installCni: string;
  readonly enableCni?: string;
}

export const MESH_CNI: Readonly<Partial<Record<Mesh, MeshCniFacts>>> = {
  // linkerd2 charts/linkerd2-cni/templates/cni-plugin.yaml (DaemonSet linkerd-cni) and
  // charts/linkerd-control-plane/templates/config.yaml (linkerd-config, `values`: the chart's values as YAML).
  linkerd: {
    daemonSet: 'linkerd-cni',
    config: { configMap: 'linkerd-config', key: 'values', format: 'yaml', path: ['cniEnabled'] },
    installCni: 'linkerd install-cni | kubectl apply -f -',
    enableCni: 'linkerd upgrade --linkerd-cni-enabled | kubectl apply -f -',
  },
  // istio 1.28.9 manifests/charts/istio-cni/templates/daemonset.yaml (`istio-cni` + `-node`) and
  // istio-discovery/templates/istiod-injector-configmap.yaml (`values`: JSON, pilot.cni picked in),
  // whose injection template renders istio-validation only when .Values.pilot.cni.enabled.
  istio: {
    daemonSet: 'istio-cni-node',
    config: { configMap: 'istio-sidecar-injector', key: 'values', format: 'json', path: ['pilot', 'cni', 'enabled'] },
    installCni: 'helm install istio-cni istio/cni -n istio-system',
    enableCni: 'helm upgrade istiod istio/istiod -n istio-system --reuse-values --set pilot.cni.enabled=true',
  },
  // Ambient has no mode switch: istio-cni's node agent is what captures the pods.
  'istio-ambient': {
    daemonSet: 'istio-cni-node',
    installCni: 'helm install istio-cni istio/cni -n istio-system --set profile=ambient',
  },
};
