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
/** The file name upstream's docs give it (docs/how-to-use.md, v4.2.2): first in the directory. */
const MULTUS_FILE = join(STATE, 'net.d', '00-multus.conf');
const CLUSTER_OBJECTS = ['clusterrole/multus', 'clusterrolebinding/multus'];

// The ServiceAccount, ClusterRole and binding of deployments/multus-daemonset-thick.yml (v4.2.2),
// in kube-system as there (labels left out): the thin deployment's role with list and watch of pods
// added, which the thick daemon's pod informer needs.
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
  verbs: ["get", "list", "update", "watch"]
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

/**
 * Builds (once, cached) and installs the thin plugin (and the thick shim) and the thin plugin's
 * kubeconfig; Multus's file is not written yet. Returns the directory of the built binaries.
 */
export async function installMultus(): Promise<string> {
  const built = execFileSync('bash', [ENSURE], { encoding: 'utf8', timeout: 900_000 }).trim();
  for (const binary of ['multus', 'multus-shim']) {
    const plugin = join(STATE, 'cni-bin', binary);
    copyFileSync(join(built, binary), `${plugin}.tmp`);
    chmodSync(`${plugin}.tmp`, 0o755);
    renameSync(`${plugin}.tmp`, plugin);
  }
  await kubectl(['apply', '-f', '-'], RBAC);
  rmSync(MULTUS_DIR, { recursive: true, force: true });
  mkdirSync(MULTUS_DIR, { recursive: true, mode: 0o700 });
  writeFileSync(KUBECONFIG_FILE, await serviceAccountKubeconfig('kube-system', 'multus'), { mode: 0o600 });
  return built;
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
  for (const binary of ['multus', 'multus-shim']) rmSync(join(STATE, 'cni-bin', binary), { force: true });
}

/** The thick daemon's run directory (upstream: the host's /run), under the cluster's state. */
const THICK_RUN_DIR = join(STATE, 'multus-run');
const NETNS_DIR = join(STATE, 'containerd-state', 'io.containerd.grpc.v1.cri', 'netns');
/** Where it listens for its shim: a directory it makes anew in the run directory (/run/multus/). */
const THICK_SOCKET_DIR = `${join(THICK_RUN_DIR, 'multus')}/`;

/**
 * Upstream's thick daemon (deployments/multus-daemonset-thick.yml, v4.2.2): the multus-daemon
 * DaemonSet in kube-system, host network and PID, privileged, the node's root at /hostroot
 * (HostToContainer) for its chrootDir, its daemon-config.json (multusConfigFile auto: it writes the
 * multus-shim file 00-multus.conf from the directory's first file). Changed for this node: the
 * node's CNI conf, bin, run and netns dirs are mounted at their own paths (not under /host), the
 * plugins are found in the node's bin dir, and the daemon binary built here is mounted from its cache into Interlock's image (nothing is pulled).
 */
export function thickMultusDaemonSet(built: string, image: string): string {
  const netD = join(STATE, 'net.d');
  const config = {
    chrootDir: '/hostroot',
    cniVersion: '0.3.1',
    logLevel: 'verbose',
    logToStderr: true,
    cniConfigDir: netD,
    multusAutoconfigDir: netD,
    multusConfigFile: 'auto',
    socketDir: THICK_SOCKET_DIR,
    // The node's plugins; upstream's default is /opt/cni/bin.
    binDir: join(STATE, 'cni-bin'),
    // Written into the shim's file, so the shim finds the socket (the shim's default is /run/multus/).
    daemonSocketDir: THICK_SOCKET_DIR,
  };
  const volumes: ReadonlyArray<{ name: string; path: string; mountPath: string; extra?: string }> = [
    { name: 'cni', path: netD, mountPath: netD },
    // The daemon finds a plugin in its own view before it runs it in the chroot (upstream mounts
    // the node's /opt/cni/bin so).
    { name: 'cnibin', path: join(STATE, 'cni-bin'), mountPath: join(STATE, 'cni-bin'), extra: ', readOnly: true' },
    { name: 'run', path: THICK_RUN_DIR, mountPath: THICK_RUN_DIR },
    { name: 'hostroot', path: '/', mountPath: '/hostroot', extra: ', mountPropagation: HostToContainer' },
    // The pods' network namespaces, which the daemon checks before it runs the chain (upstream
    // mounts /run/netns so): containerd keeps them under its state directory here.
    { name: 'netns', path: NETNS_DIR, mountPath: NETNS_DIR, extra: ', mountPropagation: HostToContainer' },
    { name: 'bin', path: built, mountPath: '/multus', extra: ', readOnly: true' },
  ];
  const mounts = volumes.map((v) => `        - {name: ${v.name}, mountPath: ${v.mountPath}${v.extra ?? ''}}`);
  const sources = volumes.map((v) => `      - {name: ${v.name}, hostPath: {path: ${v.path}}}`);
  return `apiVersion: v1
kind: ConfigMap
metadata: {name: multus-daemon-config, namespace: kube-system}
data:
  daemon-config.json: '${JSON.stringify(config)}'
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: kube-multus-ds, namespace: kube-system}
spec:
  selector: {matchLabels: {name: multus}}
  template:
    metadata: {labels: {name: multus}}
    spec:
      hostNetwork: true
      hostPID: true
      tolerations: [{operator: Exists, effect: NoSchedule}, {operator: Exists, effect: NoExecute}]
      serviceAccountName: multus
      terminationGracePeriodSeconds: 10
      containers:
      - name: kube-multus
        image: ${image}
        command: [/multus/multus-daemon, -config, /etc/multus/daemon-config.json]
        securityContext: {privileged: true, runAsUser: 0, runAsGroup: 0}
        env: [{name: MULTUS_NODE_NAME, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}]
        volumeMounts:
${mounts.join('\n')}
        - {name: config, mountPath: /etc/multus, readOnly: true}
      volumes:
${sources.join('\n')}
      - {name: config, configMap: {name: multus-daemon-config}}
`;
}

/** Makes the run directory the DaemonSet mounts. */
export function makeThickRunDir(): void {
  mkdirSync(THICK_RUN_DIR, { recursive: true, mode: 0o700 });
}

/** Removes the thick daemon (its config manager removes the shim's file when it stops). */
export async function removeThickMultus(): Promise<void> {
  await kubectl([
    'delete',
    'daemonset/kube-multus-ds',
    'configmap/multus-daemon-config',
    '-n',
    'kube-system',
    '--ignore-not-found',
    // The daemon's pod gone too (its config manager removes the shim's file as it stops).
    '--cascade=foreground',
    '--wait=true',
  ]);
  rmSync(THICK_RUN_DIR, { recursive: true, force: true });
}
