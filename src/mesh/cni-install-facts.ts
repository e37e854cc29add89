/**
 * Where a mesh says it runs in CNI mode, from its own charts (each mesh module names the chart
 * templates beside its value; the CNI namespaces are pinned in
 * test/fixtures/meshes/facts/infrastructure-namespaces.json): the CNI node DaemonSet's name, and
 * the ConfigMap whose `values` key holds the control plane's chart values with the switch's path.
 */
export interface MeshCniFacts {
  readonly daemonSet: string;
  /**
   * The namespace the CNI DaemonSet runs in when installed as the mesh documents it (its charts
   * install into the release namespace; the documented one is pinned in
   * test/fixtures/meshes/facts/infrastructure-namespaces.json).
   */
  readonly namespace: string;
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
