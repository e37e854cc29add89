import type { Mesh } from '../config/interception.js';
import type { Platform } from '../config/platform.js';
import { ADMISSION_OPT_OUT, interlockLabels } from '../kube/interlock-labels.js';
import { workloadSecurityContext } from '../kube/workload-security-context.js';
import { LINUX_NODES, pullSecretFields } from '../kube/pod-placement.js';
import { NODE_TAINT } from './agent-api.js';
import { netnsMountPaths } from './netns-dir.js';
import type { NodeAction } from './node-action.js';
import { nodeScopePolicy } from './node-scope-policy.js';

export interface NodeAgentManifestOptions {
  readonly image: string;
  readonly namespace?: string;
  readonly mesh?: Mesh;
  readonly action?: NodeAction;
  readonly taint?: boolean;
  readonly containerName?: string;
  /** `node` flags as the operator gave them to `manifest --node-agent`, passed to the agent verbatim. */
  readonly nodeArgs?: readonly string[];
  /** With `--cni-audit`: the directories the audit reads, mounted read-only at the same paths. */
  readonly cni?: {
    readonly confDir: string;
    readonly binDirs: readonly string[];
    /** Multus's attachment directory, mounted only when the operator names it (it must exist). */
    readonly multusConfDir?: string;
    /** The runtime's CRI socket, which the audit asks what the runtime loaded (mounted read-only). */
    readonly criSocket?: string;
  };
  /** The port of `--listen` when given (metrics and probes); 9477 otherwise. */
  readonly listenPort?: number;
  /**
   * With `--recheck-interval`: the runtime's socket and where it mounts pods' network namespaces
   * (`--netns-dir`); the agent is then the privileged variant.
   */
  readonly recheck?: { readonly socketPath: string; readonly netnsDir: string };
  /** With `--report-condition` / `--startup-taint KEY`: the node gate's rights (and a toleration of that taint). */
  readonly gate?: NodeGateRights;
  /** openshift: the privileged SCC (by RBAC) and the SELinux type spc_t. */
  readonly platform?: Platform;
  /** Secrets of the agent's namespace its pods pull the image with. */
  readonly imagePullSecrets?: readonly string[];
}

/** What the node gate does to its Node: write the condition, lift the start-up taint. */
export interface NodeGateRights {
  readonly condition: boolean;
  readonly startupTaint: string | undefined;
}

export const NODE_AGENT_NAME = 'interlock-node';
const NODE_AGENT_METRICS_PORT = 9477;

interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  resourceNames?: string[];
  verbs: string[];
}

/**
 * On OpenShift: the agent's host network and hostPath volumes (and, re-checking, setns into pods'
 * namespaces) are beyond every SCC but `privileged`, which a ServiceAccount gets by the `use` verb.
 */
const PRIVILEGED_SCC_RULE: PolicyRule = {
  apiGroups: ['security.openshift.io'],
  resources: ['securitycontextconstraints'],
  resourceNames: ['privileged'],
  verbs: ['use'],
};

/**
 * Under SELinux a container_t process may neither read the host's CNI files nor enter other pods'
 * network namespaces: spc_t, as Istio's istio-cni chart gives its privileged node agent on
 * OpenShift (manifests/charts/istio-cni/files/profile-platform-openshift.yaml, 1.28.0; pinned in
 * test/fixtures/meshes/facts/openshift.json).
 */
const OPENSHIFT_SELINUX = { type: 'spc_t' } as const;

/**
 * Least privilege per action, equal to what the agent does (a test runs it against the API
 * stand-in and compares): `none` gets its own pod, lists and watches pods and creates Events; `delete` adds pods
 * delete; `label` adds pods patch; `--taint` adds nodes get/patch. Node Events need no node read:
 * like the kubelet, the agent names the node as the Event's uid.
 */
export function nodeAgentRules(
  action: NodeAction,
  taint: boolean,
  recheck = false,
  gate: NodeGateRights = { condition: false, startupTaint: undefined },
): PolicyRule[] {
  // get: its own pod, whose image it trusts without --trusted-image.
  const podVerbs = [
    'get',
    'list',
    'watch',
    ...(action === 'delete' ? ['delete'] : []),
    ...(action === 'label' ? ['patch'] : []),
  ];
  const gated = gate.condition || gate.startupTaint !== undefined;
  // The gate reads its Node (the condition's last transition, the taints) and, to lift the taint, patches it.
  const nodeVerbs = taint || gate.startupTaint !== undefined ? ['get', 'patch'] : gated ? ['get'] : [];
  return [
    { apiGroups: [''], resources: ['pods'], verbs: podVerbs },
    // The gate lists and watches the kubelet's FailedCreatePodSandBox Events.
    { apiGroups: [''], resources: ['events'], verbs: gated ? ['create', 'list', 'watch'] : ['create'] },
    ...(nodeVerbs.length > 0 ? [{ apiGroups: [''], resources: ['nodes'], verbs: nodeVerbs }] : []),
    ...(gate.condition ? [{ apiGroups: [''], resources: ['nodes/status'], verbs: ['patch'] }] : []),
    // The re-check reads ambient's namespace label and Linkerd's namespace annotations.
    ...(recheck ? [{ apiGroups: [''], resources: ['namespaces'], verbs: ['get'] }] : []),
  ];
}

function agentArgs(options: NodeAgentManifestOptions): string[] {
  const given = options.nodeArgs ?? [];
  const has = (name: string) => given.some((arg) => arg === `--${name}` || arg.startsWith(`--${name}=`));
  return [
    'node',
    `--mesh=${options.mesh ?? 'generic'}`,
    ...(has('action') ? [] : [`--action=${options.action ?? 'delete'}`]),
    ...(options.containerName && !has('container-name') ? [`--container-name=${options.containerName}`] : []),
    ...(options.taint && !has('taint') ? ['--taint'] : []),
    ...given,
    ...(has('listen') ? [] : [`--listen=0.0.0.0:${NODE_AGENT_METRICS_PORT}`]),
  ];
}

/**
 * Read-only hostPath volumes for the CNI audit: the agent must see the node's files, never change
 * them. The runtime's socket too, unless the re-check mounts it already.
 */
function cniVolumes(options: NodeAgentManifestOptions): { volumes: object[]; mounts: object[] } {
  if (!options.cni) return { volumes: [], mounts: [] };
  const { multusConfDir, criSocket } = options.cni;
  const paths = [options.cni.confDir, ...options.cni.binDirs, ...(multusConfDir === undefined ? [] : [multusConfDir])];
  const socket = criSocket !== undefined && !options.recheck ? criSocket : undefined;
  return {
    volumes: [
      ...paths.map((path, index) => ({ name: `cni-${index}`, hostPath: { path, type: 'Directory' } })),
      ...(socket === undefined ? [] : [{ name: 'cri-socket', hostPath: { path: socket, type: 'Socket' } }]),
    ],
    mounts: [
      ...paths.map((path, index) => ({ name: `cni-${index}`, mountPath: path, readOnly: true })),
      ...(socket === undefined ? [] : [{ name: 'cri-socket', mountPath: socket, readOnly: true }]),
    ],
  };
}

/**
 * The re-check's host paths, read-only: the runtime's socket (it answers ListPodSandbox and
 * PodSandboxStatus) and the directory of pod network namespaces (`--netns-dir`: by default
 * /run/netns, also mounted as /var/run/netns, the path containerd names; containerd with
 * netns_mounts_under_state_dir mounts them under its state directory), at the path the runtime
 * names, with HostToContainer propagation so namespaces created after the agent started appear.
 */
function recheckVolumes(options: NodeAgentManifestOptions): { volumes: object[]; mounts: object[] } {
  if (!options.recheck) return { volumes: [], mounts: [] };
  const { socketPath: socket, netnsDir } = options.recheck;
  const at = netnsMountPaths(netnsDir);
  return {
    volumes: [
      { name: 'cri-socket', hostPath: { path: socket, type: 'Socket' } },
      { name: 'netns', hostPath: { path: netnsDir, type: 'Directory' } },
    ],
    mounts: [
      { name: 'cri-socket', mountPath: socket, readOnly: true },
      ...at.map((mountPath) => ({ name: 'netns', mountPath, readOnly: true, mountPropagation: 'HostToContainer' })),
    ],
  };
}

/**
 * With Multus's directory audited, the agent reads the NetworkAttachmentDefinitions a
 * clusterNetwork or a meshed pod's annotation names, one by one: `get`, nothing broader.
 */
const ATTACHMENT_DEFINITION_RULE: PolicyRule = {
  apiGroups: ['k8s.cni.cncf.io'],
  resources: ['network-attachment-definitions'],
  verbs: ['get'],
};

/**
 * The re-check enters pods' network namespaces (setns: CAP_SYS_ADMIN) and reads their rules
 * (CAP_NET_ADMIN; CAP_NET_RAW for legacy iptables, and uid 0 for /proc/net/ip_tables_names).
 * CAP_SETPCAP lets each reading child drop CAP_SYS_ADMIN from its bounding set after `setns`,
 * before it parses the tenant's rules (without it the drop is silently skipped). Nothing else. The
 * API refuses allowPrivilegeEscalation false beside CAP_SYS_ADMIN.
 */
export const RECHECK_CAPABILITIES = ['SYS_ADMIN', 'NET_ADMIN', 'NET_RAW', 'SETPCAP'] as const;

function recheckSecurityContext(): Record<string, unknown> {
  return {
    runAsNonRoot: false,
    runAsUser: 0,
    runAsGroup: 0,
    allowPrivilegeEscalation: true,
    readOnlyRootFilesystem: true,
    capabilities: { drop: ['ALL'], add: [...RECHECK_CAPABILITIES] },
    seccompProfile: { type: 'RuntimeDefault' },
  };
}

/**
 * The audit's agent connects to the runtime's socket, which is the runtime's own (root, mode
 * 0660): uid 0, with every capability dropped, so nothing but the file's owner bits grant it.
 */
function socketSecurityContext(): Record<string, unknown> {
  return {
    runAsNonRoot: false,
    runAsUser: 0,
    runAsGroup: 0,
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    capabilities: { drop: ['ALL'] },
    seccompProfile: { type: 'RuntimeDefault' },
  };
}

/** Its uid stays on OpenShift too: the privileged SCC admits it (and the re-check needs uid 0). */
function agentSecurityContext(options: NodeAgentManifestOptions): Record<string, unknown> {
  const context = options.recheck
    ? recheckSecurityContext()
    : options.cni?.criSocket !== undefined
      ? socketSecurityContext()
      : workloadSecurityContext();
  return options.platform === 'openshift' ? { ...context, seLinuxOptions: { ...OPENSHIFT_SELINUX } } : context;
}

function agentContainer(options: NodeAgentManifestOptions): object {
  const port = options.listenPort ?? NODE_AGENT_METRICS_PORT;
  const mounts = [...cniVolumes(options).mounts, ...recheckVolumes(options).mounts];
  const probe = (path: string) => ({
    httpGet: { path, port },
    periodSeconds: 10,
    failureThreshold: 3,
  });
  return {
    name: 'node-agent',
    image: options.image,
    // The image's entrypoint is `interlock validate`; the agent is the same binary's `node` command.
    command: ['interlock'],
    args: agentArgs(options),
    // POD_NAME, POD_NAMESPACE: without --trusted-image the agent trusts its own image's repository,
    // read from its pod, so that kustomize's `images:` moves the trust with the image.
    env: [
      { name: 'NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
    ],
    ports: [{ name: 'metrics', containerPort: port, protocol: 'TCP' }],
    livenessProbe: probe('/healthz'),
    readinessProbe: probe('/readyz'),
    resources: { requests: { cpu: '10m', memory: '64Mi' }, limits: { memory: '128Mi' } },
    securityContext: agentSecurityContext(options),
    ...(mounts.length > 0 ? { volumeMounts: mounts } : {}),
  };
}

/**
 * The node agent's manifests, one object per document: Namespace, ServiceAccount, ClusterRole,
 * ClusterRoleBinding, the policy keeping each agent to its node's pods (unless `none`), DaemonSet. The DaemonSet uses the host network: the agent must keep working
 * on exactly the node whose CNI is broken, where a pod-network pod could not even start. Host
 * network and hostPath are beyond PodSecurity `baseline`, so its Namespace enforces `privileged`.
 */
export function nodeAgentManifest(options: NodeAgentManifestOptions): readonly object[] {
  const namespace = options.namespace ?? 'interlock-system';
  const labels = interlockLabels(NODE_AGENT_NAME, 'node-agent');
  const metadata = { name: NODE_AGENT_NAME, labels };
  return [
    {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: namespace, labels: { ...labels, 'pod-security.kubernetes.io/enforce': 'privileged' } },
    },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { ...metadata, namespace } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata,
      rules: [
        ...nodeAgentRules(
          options.action ?? 'delete',
          options.taint === true,
          options.recheck !== undefined,
          options.gate,
        ),
        ...(options.cni?.multusConfDir === undefined ? [] : [{ ...ATTACHMENT_DEFINITION_RULE }]),
        ...(options.platform === 'openshift' ? [{ ...PRIVILEGED_SCC_RULE }] : []),
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata,
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: NODE_AGENT_NAME },
      subjects: [{ kind: 'ServiceAccount', name: NODE_AGENT_NAME, namespace }],
    },
    ...nodeScopePolicy(options.action ?? 'delete', { name: NODE_AGENT_NAME, namespace }, labels),
    ...criticalPodQuota(namespace, metadata),
    daemonSet(options, { ...metadata, namespace }, labels),
  ];
}

const CRITICAL_PRIORITY = 'system-node-critical';

/**
 * Where the API server limits the critical priority classes to namespaces with a ResourceQuota of
 * that PriorityClass scope (GKE does, and any cluster may), the agent's pods are refused outside
 * kube-system without one: printed there as istio-cni's chart prints it, before the DaemonSet
 * (test/fixtures/meshes/facts/node-agent-placement.json). kube-system needs none.
 */
function criticalPodQuota(namespace: string, metadata: { name: string; labels: object }): object[] {
  if (namespace === 'kube-system') return [];
  return [
    {
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { ...metadata, namespace },
      spec: {
        hard: { pods: '5000' },
        scopeSelector: {
          matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: [CRITICAL_PRIORITY] }],
        },
      },
    },
  ];
}

/** The agent's DaemonSet: on the host network, tolerating the taints it must outlive. */
function daemonSet(options: NodeAgentManifestOptions, metadata: object, labels: Record<string, string>): object {
  const volumes = [...cniVolumes(options).volumes, ...recheckVolumes(options).volumes];
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata,
    spec: {
      selector: { matchLabels: { 'app.kubernetes.io/name': NODE_AGENT_NAME } },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '10%' } },
      template: {
        metadata: { labels: { ...labels, [ADMISSION_OPT_OUT.key]: ADMISSION_OPT_OUT.value } },
        spec: {
          serviceAccountName: NODE_AGENT_NAME,
          hostNetwork: true,
          dnsPolicy: 'ClusterFirstWithHostNet',
          priorityClassName: CRITICAL_PRIORITY,
          terminationGracePeriodSeconds: 10,
          nodeSelector: { ...LINUX_NODES },
          ...pullSecretFields(options.imagePullSecrets),
          // It must stay on, and come back to, the node it tainted; and run on every node meshed
          // pods may run on, whatever its taints (NoExecute too): as linkerd-cni's DaemonSet does.
          tolerations: [
            { key: NODE_TAINT.key, operator: 'Exists', effect: NODE_TAINT.effect },
            { operator: 'Exists' },
            // The node is born with the start-up taint, whatever its effect, and the agent is what lifts it.
            ...(options.gate?.startupTaint ? [{ key: options.gate.startupTaint, operator: 'Exists' }] : []),
          ],
          containers: [agentContainer(options)],
          ...(volumes.length > 0 ? { volumes } : {}),
        },
      },
    },
  };
}
