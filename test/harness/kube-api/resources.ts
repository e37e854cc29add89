/**
 * Every resource the stand-in serves, declared once: discovery, routes, list kinds, watch kinds and
 * the OpenAPI v3 documents are derived from this table. Core pods, events and nodes carry the
 * agent's behaviour; the others are stored as given, so every object `interlock` prints can be
 * applied, listed and described by the real kubectl.
 */
export interface ResourceInfo {
  readonly name: string;
  readonly singular: string;
  readonly kind: string;
  /** '' for the core group. */
  readonly group: string;
  readonly version: string;
  readonly namespaced: boolean;
  readonly shortNames?: readonly string[];
  /** The package whose generated types hold the kind's fields: kubernetes-models, or a CRD's own. */
  readonly models?: string;
}

const core = (name: string, kind: string, namespaced: boolean, shortNames?: string[]): ResourceInfo => ({
  name,
  singular: kind.toLowerCase(),
  kind,
  group: '',
  version: 'v1',
  namespaced,
  ...(shortNames ? { shortNames } : {}),
});
const grouped = (group: string, version: string, name: string, kind: string, namespaced: boolean): ResourceInfo => ({
  name,
  singular: kind.toLowerCase(),
  kind,
  group,
  version,
  namespaced,
});

export const RESOURCE_TABLE = [
  core('pods', 'Pod', true, ['po']),
  core('events', 'Event', true, ['ev']),
  core('nodes', 'Node', false, ['no']),
  core('namespaces', 'Namespace', false, ['ns']),
  core('serviceaccounts', 'ServiceAccount', true, ['sa']),
  core('configmaps', 'ConfigMap', true, ['cm']),
  core('secrets', 'Secret', true),
  core('services', 'Service', true, ['svc']),
  // As the endpoints controller writes them: `interlock check` reads the webhook Service's.
  core('endpoints', 'Endpoints', true, ['ep']),
  // `manifest --node-agent` prints one outside kube-system, for its system-node-critical pods.
  core('resourcequotas', 'ResourceQuota', true, ['quota']),
  grouped('apps', 'v1', 'deployments', 'Deployment', true),
  grouped('apps', 'v1', 'daemonsets', 'DaemonSet', true),
  grouped('apps', 'v1', 'statefulsets', 'StatefulSet', true),
  grouped('apps', 'v1', 'replicasets', 'ReplicaSet', true),
  grouped('batch', 'v1', 'jobs', 'Job', true),
  grouped('batch', 'v1', 'cronjobs', 'CronJob', true),
  grouped('policy', 'v1', 'poddisruptionbudgets', 'PodDisruptionBudget', true),
  grouped('networking.k8s.io', 'v1', 'networkpolicies', 'NetworkPolicy', true),
  grouped('rbac.authorization.k8s.io', 'v1', 'roles', 'Role', true),
  grouped('rbac.authorization.k8s.io', 'v1', 'rolebindings', 'RoleBinding', true),
  grouped('rbac.authorization.k8s.io', 'v1', 'clusterroles', 'ClusterRole', false),
  grouped('rbac.authorization.k8s.io', 'v1', 'clusterrolebindings', 'ClusterRoleBinding', false),
  grouped('admissionregistration.k8s.io', 'v1', 'mutatingwebhookconfigurations', 'MutatingWebhookConfiguration', false),
  // GA in 1.30: `manifest --node-agent` keeps each agent to its own node's pods with one.
  grouped('admissionregistration.k8s.io', 'v1', 'validatingadmissionpolicies', 'ValidatingAdmissionPolicy', false),
  grouped(
    'admissionregistration.k8s.io',
    'v1',
    'validatingadmissionpolicybindings',
    'ValidatingAdmissionPolicyBinding',
    false,
  ),
  // cert-manager's CRDs, as a cluster that runs cert-manager serves them (`manifest --webhook` uses them).
  { ...grouped('cert-manager.io', 'v1', 'issuers', 'Issuer', true), models: '@kubernetes-models/cert-manager' },
  {
    ...grouped('cert-manager.io', 'v1', 'certificates', 'Certificate', true),
    models: '@kubernetes-models/cert-manager',
  },
  // The Prometheus Operator's CRDs, as a cluster that runs it serves them (`manifest --monitoring`).
  {
    ...grouped('monitoring.coreos.com', 'v1', 'podmonitors', 'PodMonitor', true),
    models: '@kubernetes-models/prometheus-operator',
  },
  {
    ...grouped('monitoring.coreos.com', 'v1', 'prometheusrules', 'PrometheusRule', true),
    models: '@kubernetes-models/prometheus-operator',
  },
  grouped(
    'admissionregistration.k8s.io',
    'v1',
    'validatingwebhookconfigurations',
    'ValidatingWebhookConfiguration',
    false,
  ),
] as const satisfies readonly ResourceInfo[];

export type ResourceName = (typeof RESOURCE_TABLE)[number]['name'];

export function resourceInfo(name: string): ResourceInfo | undefined {
  return RESOURCE_TABLE.find((info) => info.name === name);
}

export const apiVersionOf = (info: ResourceInfo): string =>
  info.group ? `${info.group}/${info.version}` : info.version;

/** The group versions served, core first: `v1`, `apps/v1`, ... */
export function groupVersions(): readonly { group: string; version: string }[] {
  const seen = new Map<string, { group: string; version: string }>();
  for (const info of RESOURCE_TABLE) seen.set(apiVersionOf(info), { group: info.group, version: info.version });
  return [...seen.values()];
}
