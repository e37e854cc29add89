import type { ManifestDocument } from '../../../inject/manifest.js';
import { interlockLabels } from '../../../kube/interlock-labels.js';
import { NODE_TAINT } from '../../../node-agent/agent-api.js';
import { NODE_AGENT_NAME } from '../../../node-agent/manifest.js';
import { MESH_CONDITION } from '../../../node-agent/node-gate.js';
import { WEBHOOK_NAME, WEBHOOK_NAMESPACE } from '../../../webhook/webhook-manifest.js';

export interface MonitoringOptions {
  readonly webhookNamespace?: string;
  readonly nodeNamespace?: string;
}

type Document = Record<string, unknown>;

/** An alert of the PrometheusRule: the expression, how long it must hold, and what to do. */
export interface AlertRule {
  readonly alert: string;
  readonly expr: string;
  readonly for: string;
  readonly severity: 'warning' | 'critical';
  readonly summary: string;
  readonly description: string;
}

const labels = () => interlockLabels('interlock-monitoring', 'monitoring');
/** Each scraped series names its node: the agent's alerts say which node to look at. */
const nodeRelabeling = () => [
  { sourceLabels: ['__meta_kubernetes_pod_node_name'], targetLabel: 'node', action: 'replace' },
];

/** The parts' namespaces: the flags', else where `manifest` puts each part by default. */
const partNamespaces = (options: MonitoringOptions) => ({
  nodeNamespace: options.nodeNamespace ?? 'interlock-system',
  webhookNamespace: options.webhookNamespace ?? WEBHOOK_NAMESPACE,
});

/** Whose alerts a rule speaks for: the part's namespace and the job label its PodMonitor gives (namespace/name). */
interface Scope {
  readonly namespace: string;
  readonly job: string;
}

/** The agents' DaemonSets: one per mesh (`interlock-node-MESH`), and the single agent of earlier releases. */
const AGENT_DAEMONSETS = `${NODE_AGENT_NAME}(-.+)?`;

/**
 * The alerts an operator wants, on the metrics Interlock exports (src/node-agent/agent-metrics.ts,
 * src/webhook/webhook-metrics.ts), each scoped to its part's job and namespace: an operator with
 * agents in two namespaces prints `--monitoring` once per namespace, and each rule speaks for its
 * own agents (the webhook's and the taint's alerts come out identical, which Alertmanager dedupes).
 * What Interlock cannot count itself (the taint it sets, how many agents and webhook replicas are
 * wanted) is read from kube-state-metrics, and an alert says when those series are missing.
 */
export function alertRules(options: MonitoringOptions): AlertRule[] {
  const { nodeNamespace, webhookNamespace } = partNamespaces(options);
  const agents = { namespace: nodeNamespace, job: `${nodeNamespace}/${NODE_AGENT_NAME}` };
  const webhook = { namespace: webhookNamespace, job: `${webhookNamespace}/${WEBHOOK_NAME}` };
  return [
    ...agentAlerts(agents),
    ...agentPresenceAlerts(agents),
    ...recheckAlerts(agents),
    ...gateAlerts(agents),
    ...webhookAlerts(webhook),
  ];
}

/** The node agent's alerts on its own metrics. */
function agentAlerts({ job }: Scope): AlertRule[] {
  return [
    {
      alert: 'InterlockPodsBlocked',
      expr: `sum by (namespace, node, reason) (increase(interlock_node_blocked_pods_total{job="${job}"}[15m])) > 0`,
      for: '0m',
      severity: 'warning',
      summary: 'Pods on {{ $labels.node }} failed the mesh check: {{ $labels.reason }}',
      description:
        '{{ $value }} validator failures in 15 minutes; kubectl describe pod shows the reason. A reason other than the CNI not ready yet means the mesh is misconfigured on that node.',
    },
    {
      alert: 'InterlockNodeBreakerOpen',
      expr: `max by (namespace, node) (interlock_node_breaker_open{job="${job}"}) == 1`,
      for: '1m',
      severity: 'critical',
      summary: 'Interlock stopped recreating pods on {{ $labels.node }}',
      description:
        "The node's circuit breaker is open: too many pods failed there. Check the node's CNI (interlock cni-check) and the agent's Events.",
    },
    {
      alert: 'InterlockCniAuditFailing',
      expr: `max by (namespace, node) (interlock_node_cni_audit_healthy{job="${job}"}) == 0`,
      for: '5m',
      severity: 'warning',
      summary: 'The CNI configuration audit fails on {{ $labels.node }}',
      description: 'The mesh plugin is not chained as pods need it there. Run interlock cni-check on the node.',
    },
    {
      alert: 'InterlockNodeAgentApiErrors',
      expr: `sum by (namespace, node, operation) (rate(interlock_node_api_errors_total{job="${job}"}[5m])) > 0.1`,
      for: '10m',
      severity: 'warning',
      summary: 'The node agent on {{ $labels.node }} fails to {{ $labels.operation }}',
      description: 'Kubernetes API calls fail; check its RBAC with interlock check.',
    },
  ];
}

/**
 * Whether the agents run where they should, and the taint they set: kube-state-metrics' series.
 * The agents' DaemonSets say how many are wanted (linux nodes only, several meshes' agents per
 * namespace), so an install without an agent wants none and never alarms.
 */
function agentPresenceAlerts({ namespace, job }: Scope): AlertRule[] {
  const desired = `kube_daemonset_status_desired_number_scheduled{namespace="${namespace}",daemonset=~"${AGENT_DAEMONSETS}"}`;
  return [
    {
      alert: 'InterlockNodeTainted',
      expr: `max by (node) (kube_node_spec_taint{key="${NODE_TAINT.key}"}) > 0`,
      for: '5m',
      severity: 'critical',
      summary: 'Node {{ $labels.node }} is tainted: its CNI is suspect',
      description: `The node agent set ${NODE_TAINT.key}:${NODE_TAINT.effect}; no new pod is scheduled there until the breaker closes. Needs kube-state-metrics.`,
    },
    {
      alert: 'InterlockNodeAgentDown',
      // max by daemonset: kube-state-metrics may run as two replicas, each exporting the series;
      // group_left keeps the namespace (on() alone would leave the alert without labels). Without
      // kube-state-metrics, agents scraped and every one down still fire.
      expr: `(sum by (namespace) (max by (namespace, daemonset) (${desired})) > on() group_left () (count(up{job="${job}"} == 1) or on() vector(0))) or on() (max by (namespace) (up{job="${job}"}) == 0)`,
      for: '10m',
      severity: 'warning',
      summary: 'Fewer node agents answer in {{ $labels.namespace }} than their DaemonSets want',
      description:
        'A node without its agent has no gate, no re-check and no CNI audit. kubectl get daemonset and interlock check name the nodes.',
    },
    {
      alert: 'InterlockNodeAlertsBlind',
      expr: `count by (namespace) (up{job="${job}"}) unless on() (count(${desired}) and on() count(kube_node_info))`,
      for: '15m',
      severity: 'warning',
      summary: 'InterlockNodeAgentDown and InterlockNodeTainted cannot fire: no kube-state-metrics series',
      description:
        "The node agents in {{ $labels.namespace }} are scraped, but kube-state-metrics' kube_daemonset_status_desired_number_scheduled for their DaemonSets or kube_node_info is absent: install kube-state-metrics with its daemonsets and nodes collectors, and scrape it.",
    },
  ];
}

/** The re-check's alert (`--recheck-interval`): silent while its gauge is absent. */
function recheckAlerts({ job }: Scope): AlertRule[] {
  return [
    {
      alert: 'InterlockCaptureLost',
      expr: `max by (namespace, node, mesh) (interlock_node_capture_lost_pods{job="${job}"}) > 0`,
      for: '0m',
      severity: 'critical',
      summary: 'Running {{ $labels.mesh }} pods on {{ $labels.node }} lost their capture',
      description:
        'The re-check (--recheck-interval) found {{ $value }} running pods whose traffic no longer reaches the proxy: plaintext on the wire, or (ambient, reason ZtunnelNotListening) sent to ztunnel ports where nothing listens. kubectl get events --field-selector reason=CaptureLost (or reason=ZtunnelNotListening) names them.',
    },
  ];
}

/** The node gate's alerts (`--report-condition`, `--startup-taint`): silent while its metrics are absent. */
function gateAlerts({ job }: Scope): AlertRule[] {
  return [
    {
      alert: 'InterlockMeshPluginFailing',
      expr: `sum by (namespace, node, cause) (increase(interlock_node_mesh_plugin_failures_total{job="${job}"}[10m])) > 0`,
      for: '0m',
      severity: 'critical',
      summary: "The mesh's CNI plugin fails pod sandboxes on {{ $labels.node }}: {{ $labels.cause }}",
      description: `Pods there never start (kubelet FailedCreatePodSandBox). kubectl describe node shows the condition ${MESH_CONDITION} and the MeshPluginFailing Event with the plugin's message.`,
    },
    {
      alert: 'InterlockNodeNotMeshReady',
      expr: `max by (namespace, node) (interlock_node_mesh_ready{job="${job}"}) == 0`,
      for: '5m',
      severity: 'warning',
      summary: 'Node {{ $labels.node }} is not ready for meshed pods',
      description: `The node condition ${MESH_CONDITION} is False; its reason names the cause (CNIConfigBroken, MeshPluginFailing, BreakerOpen, CaptureLost).`,
    },
  ];
}

/**
 * The webhook's alerts. Whether it is down is judged against its Deployment's wanted replicas
 * (kube-state-metrics): an install without the webhook, or one scaled to zero, wants none.
 */
function webhookAlerts({ namespace, job }: Scope): AlertRule[] {
  const replicas = `kube_deployment_spec_replicas{namespace="${namespace}",deployment="${WEBHOOK_NAME}"}`;
  return [
    {
      alert: 'InterlockWebhookErrors',
      expr: `sum by (namespace, cause) (rate(interlock_webhook_errors_total{job="${job}"}[5m])) > 0`,
      for: '5m',
      severity: 'warning',
      summary: 'The admission webhook answers requests it could not read: {{ $labels.cause }}',
      description: 'Pods admitted on these errors follow --on-error. Check the webhook logs.',
    },
    {
      alert: 'InterlockWebhookDown',
      // Installed: its Deployment wants replicas (kube-state-metrics), or without that series, its
      // pods are scraped and every one is down.
      expr: `((max by (namespace) (${replicas}) > 0) or on() (max by (namespace) (up{job="${job}"}) == 0)) unless on() (up{job="${job}"} == 1)`,
      for: '5m',
      severity: 'critical',
      summary: 'No admission webhook replica answers in {{ $labels.namespace }}',
      description:
        'Its Deployment wants replicas and none is scraped up. With failurePolicy Fail, pods in the selected namespaces cannot be created. Run interlock check.',
    },
    {
      alert: 'InterlockWebhookAlertsBlind',
      expr: `count by (namespace) (up{job="${job}"}) unless on() count(${replicas})`,
      for: '15m',
      severity: 'warning',
      summary: 'InterlockWebhookDown cannot fire: no kube-state-metrics series',
      description:
        "The webhook in {{ $labels.namespace }} is scraped, but kube-state-metrics' kube_deployment_spec_replicas for its Deployment is absent: install kube-state-metrics with its deployments collector, and scrape it.",
    },
    {
      alert: 'InterlockWebhookCertificateExpiring',
      expr: `min by (namespace) (interlock_webhook_certificate_expiry_timestamp_seconds{job="${job}"}) - time() < 14 * 24 * 3600`,
      for: '1h',
      severity: 'warning',
      summary: "The webhook's serving certificate expires within 14 days",
      description:
        'cert-manager renews it 15 days ahead; if this fires, renewal failed (kubectl describe certificate). An expired certificate fails every admission call.',
    },
  ];
}

/** `interlock manifest --monitoring`: a PodMonitor per part and a PrometheusRule (Prometheus Operator CRDs). */
export function monitoringDocuments(options: MonitoringOptions): ManifestDocument[] {
  const { nodeNamespace, webhookNamespace } = partNamespaces(options);
  const monitor = (name: string, namespace: string, endpoint: Document): Document => ({
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PodMonitor',
    metadata: { name, namespace, labels: labels() },
    spec: {
      selector: { matchLabels: { 'app.kubernetes.io/name': name } },
      podMetricsEndpoints: [{ path: '/metrics', interval: '30s', relabelings: nodeRelabeling(), ...endpoint }],
    },
  });
  const rules = alertRules(options).map((rule) => ({
    alert: rule.alert,
    expr: rule.expr,
    for: rule.for,
    labels: { severity: rule.severity },
    annotations: { summary: rule.summary, description: rule.description },
  }));
  return [
    {
      value: monitor(NODE_AGENT_NAME, nodeNamespace, { port: 'metrics' }),
      comment: [
        ' Prometheus Operator objects: apply after the webhook and the node agent (they go in their',
        " namespaces). A Prometheus selects monitors and rules by its own selectors: kube-prometheus-stack's",
        ' default wants the label release: <its release name>; add it with kubectl label if yours does.',
      ].join('\n'),
    },
    {
      // The metrics port (plain HTTP, like the kubelet's probes): the admission port answers 404 on
      // /metrics, which kept InterlockWebhookDown firing.
      value: monitor(WEBHOOK_NAME, webhookNamespace, { port: 'metrics' }),
    },
    {
      value: {
        apiVersion: 'monitoring.coreos.com/v1',
        kind: 'PrometheusRule',
        metadata: { name: 'interlock', namespace: nodeNamespace, labels: labels() },
        spec: { groups: [{ name: 'interlock', rules }] },
      },
    },
  ];
}
