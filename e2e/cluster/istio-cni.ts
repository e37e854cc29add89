import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { kubectl, serviceAccountKubeconfig, STATE } from './cluster.js';

// Istio's real CNI plugin, istio.io/istio/cni/cmd/istio-cni at tag 1.27.0 (cluster/mesh-cni/go.mod,
// built by scripts/ensure-istio-cni.sh), set up on the cluster's node as the istio-cni chart's node
// agent (install-cni) sets it up: the binary in the CNI bin directory, a kubeconfig with its
// ServiceAccount's token in its run directory, and its entry appended to the node's conflist. In
// sidecar mode the plugin needs nothing else: it reads the pod from the API server and writes the
// pod's iptables rules itself (istio-iptables' code, in process). The node agent is not run: in
// sidecar mode it only installs those three things, serves the plugin's log socket (absent, so
// the plugin logs to its rolling file) and runs the repair controller; its CNI event socket is for
// ambient only.

const ENSURE = fileURLToPath(new URL('../../scripts/ensure-istio-cni.sh', import.meta.url));
/** install-cni's own output for a chained conflist, istio/istio 1.27.0 (test/fixtures/cni/configs/README.md). */
const GOLDEN = fileURLToPath(
  new URL('../../test/fixtures/cni/configs/istio-1.27.0-list-with-istio.conflist.golden', import.meta.url),
);
/** The chart's cniAgentRunDir (/var/run/istio-cni on a real node), under the cluster's state. */
const ISTIO_CNI_RUN_DIR = join(STATE, 'istio-cni');
const PLUGIN = join(STATE, 'cni-bin', 'istio-cni');
const NAMESPACE = 'istio-system';
const CLUSTER_OBJECTS = ['clusterrole/istio-cni', 'clusterrolebinding/istio-cni'];

// The istio-cni chart's ServiceAccount, ClusterRole and binding, istio/istio 1.27.0
// manifests/charts/istio-cni/templates/{serviceaccount,clusterrole,clusterrolebinding}.yaml, the
// release in istio-system (labels left out; the repair controller's role is not needed).
const RBAC = `apiVersion: v1
kind: Namespace
metadata: {name: ${NAMESPACE}}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: istio-cni, namespace: ${NAMESPACE}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: istio-cni}
rules:
- apiGroups: [""]
  resources: ["pods","nodes","namespaces"]
  verbs: ["get", "list", "watch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: istio-cni}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: istio-cni}
subjects:
- {kind: ServiceAccount, name: istio-cni, namespace: ${NAMESPACE}}
`;

/**
 * The `istio-cni` entry install-cni appends to the node's conflist: the golden's shape, with the
 * values the chart's defaults give (values.yaml: excludeNamespaces [kube-system], global.logging
 * info, the release namespace) and this node's run directory. Ambient is off, as in the chart's
 * default, so the plugin never reads the (golden's empty) enablement selectors.
 */
function istioCniEntry(): Record<string, unknown> {
  const golden = JSON.parse(readFileSync(GOLDEN, 'utf8')) as { plugins: Array<Record<string, unknown>> };
  const entry = golden.plugins.find((plugin) => plugin['type'] === 'istio-cni');
  if (!entry) throw new Error(`${GOLDEN}: no istio-cni entry`);
  return {
    ...entry,
    cni_agent_run_dir: ISTIO_CNI_RUN_DIR,
    exclude_namespaces: ['kube-system'],
    plugin_log_level: 'info',
    pod_namespace: NAMESPACE,
  };
}

/**
 * Builds (once, cached) and installs istio-cni on the node, and returns its conflist entry for
 * `chainMeshPlugin`. Nothing is chained yet.
 */
export async function installIstioCni(): Promise<Record<string, unknown>> {
  const built = execFileSync('bash', [ENSURE], { encoding: 'utf8', timeout: 1_200_000 }).trim();
  copyFileSync(built, `${PLUGIN}.tmp`);
  chmodSync(`${PLUGIN}.tmp`, 0o755);
  renameSync(`${PLUGIN}.tmp`, PLUGIN);
  await kubectl(['apply', '-f', '-'], RBAC);
  // The controller-manager publishes the cluster's CA into each namespace shortly after it exists.
  await kubectl(['wait', '--for=create', 'configmap/kube-root-ca.crt', '-n', NAMESPACE, '--timeout=60s']);
  // Anew: a run killed before its cleanup leaves a log that names the same pods.
  rmSync(ISTIO_CNI_RUN_DIR, { recursive: true, force: true });
  mkdirSync(ISTIO_CNI_RUN_DIR, { recursive: true, mode: 0o700 });
  // The kubeconfig install-cni writes (cni/pkg/install/kubeconfig.go): the API's Service, its CA, the token.
  const kubeconfig = await serviceAccountKubeconfig(NAMESPACE, 'istio-cni');
  writeFileSync(join(ISTIO_CNI_RUN_DIR, 'istio-cni-kubeconfig'), kubeconfig, { mode: 0o600 });
  return istioCniEntry();
}

/** What the plugin logged (its rolling log in the run directory: no node agent serves its socket). */
export function istioCniLog(): string {
  try {
    return readFileSync(join(ISTIO_CNI_RUN_DIR, 'istio-cni.log'), 'utf8');
  } catch {
    return '';
  }
}

/** Removes what `installIstioCni` made; the chain must no longer name istio-cni. */
export async function removeIstioCni(): Promise<void> {
  await kubectl(['delete', ...CLUSTER_OBJECTS, '--ignore-not-found']);
  await kubectl(['delete', 'namespace', NAMESPACE, '--ignore-not-found', '--wait=true', '--timeout=120s']);
  rmSync(ISTIO_CNI_RUN_DIR, { recursive: true, force: true });
  rmSync(PLUGIN, { force: true });
}
