import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { kubectl, serviceAccountKubeconfig, STATE } from './cluster.js';

// Multus's real thin plugin, gopkg.in/k8snetworkplumbingwg/multus-cni.v4/cmd/multus at tag v4.2.2
// (cluster/multus/go.mod, built by scripts/ensure-multus.sh), set up on the cluster's node as
// upstream's thin DaemonSet sets it up (k8snetworkplumbingwg/multus-cni v4.2.2,
// deployments/multus-daemonset.yml): the binary in the CNI bin directory, a kubeconfig with its
// `multus` ServiceAccount's token, and its own file first in the node's CNI configuration
// directory, so that containerd loads Multus and Multus runs the pod's primary network.

const ENSURE = fileURLToPath(new URL('../../scripts/ensure-multus.sh', import.meta.url));
/** Multus's own state: its kubeconfig, its cache (`cniDir`) and its log, under the cluster's. */
const MULTUS_DIR = join(STATE, 'multus');
const KUBECONFIG_FILE = join(MULTUS_DIR, 'multus.kubeconfig');
const MULTUS_LOG = join(MULTUS_DIR, 'multus.log');
const PLUGIN = join(STATE, 'cni-bin', 'multus');
/** The file name upstream's docs give it (docs/how-to-use.md, v4.2.2): first in the directory. */
const MULTUS_FILE = join(STATE, 'net.d', '00-multus.conf');
const CLUSTER_OBJECTS = ['clusterrole/multus', 'clusterrolebinding/multus'];

// The ServiceAccount, ClusterRole and binding of deployments/multus-daemonset.yml (v4.2.2), in
// kube-system as there (labels left out).
const RBAC = `apiVersion: v1
kind: ServiceAccount
metadata: {name: multus, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: multus}
rules:
- apiGroups: ["k8s.cni.cncf.io"]
  resources: ["*"]
  verbs: ["*"]
- apiGroups: [""]
  resources: ["pods", "pods/status"]
  verbs: ["get", "update"]
- apiGroups: ["", "events.k8s.io"]
  resources: ["events"]
  verbs: ["create", "patch", "update"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: multus}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: multus}
subjects:
- {kind: ServiceAccount, name: multus, namespace: kube-system}
`;

/** Builds (once, cached) and installs the thin plugin and its kubeconfig; Multus's file is not written yet. */
export async function installMultus(): Promise<void> {
  const built = execFileSync('bash', [ENSURE], { encoding: 'utf8', timeout: 900_000 }).trim();
  copyFileSync(join(built, 'multus'), `${PLUGIN}.tmp`);
  chmodSync(`${PLUGIN}.tmp`, 0o755);
  renameSync(`${PLUGIN}.tmp`, PLUGIN);
  await kubectl(['apply', '-f', '-'], RBAC);
  rmSync(MULTUS_DIR, { recursive: true, force: true });
  mkdirSync(MULTUS_DIR, { recursive: true, mode: 0o700 });
  writeFileSync(KUBECONFIG_FILE, await serviceAccountKubeconfig('kube-system', 'multus'), { mode: 0o600 });
}

/**
 * Multus's thin file: upstream's cni-conf.json (deployments/multus-daemonset.yml, v4.2.2: name,
 * type, capabilities, kubeconfig) with `fields` (its `delegates` or `clusterNetwork`), and the
 * options of docs/configuration.md that point it at this node: binDir (default /opt/cni/bin),
 * cniDir (its cache, default /var/lib/cni/multus), a log file. cniVersion 0.3.1 as the docs'
 * examples (upstream's file sets none).
 */
export function thinMultusConf(fields: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return {
    cniVersion: '0.3.1',
    name: 'multus-cni-network',
    type: 'multus',
    capabilities: { portMappings: true },
    kubeconfig: KUBECONFIG_FILE,
    binDir: join(STATE, 'cni-bin'),
    cniDir: join(MULTUS_DIR, 'cache'),
    logFile: MULTUS_LOG,
    logLevel: 'verbose',
    ...fields,
  };
}

/** Writes Multus's file (whole: containerd watches the directory), or removes it. */
export function setMultus(conf: Readonly<Record<string, unknown>> | undefined): void {
  if (!conf) {
    rmSync(MULTUS_FILE, { force: true });
    return;
  }
  writeFileSync(`${MULTUS_FILE}.tmp`, JSON.stringify(conf, null, 2));
  renameSync(`${MULTUS_FILE}.tmp`, MULTUS_FILE);
}

/** What Multus logged. */
export function multusLog(): string {
  try {
    return readFileSync(MULTUS_LOG, 'utf8');
  } catch {
    return '';
  }
}

/** Removes what `installMultus` and `setMultus` made. */
export async function removeMultus(): Promise<void> {
  setMultus(undefined);
  await kubectl(['delete', ...CLUSTER_OBJECTS, '--ignore-not-found']);
  await kubectl(['delete', 'serviceaccount', 'multus', '-n', 'kube-system', '--ignore-not-found']);
  rmSync(MULTUS_DIR, { recursive: true, force: true });
  rmSync(PLUGIN, { force: true });
}
