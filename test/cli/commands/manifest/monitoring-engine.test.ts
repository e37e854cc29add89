import { beforeAll, describe, expect, it } from 'vitest';
import { alertRules, type MonitoringOptions } from '../../../../src/cli/commands/manifest/monitoring.js';
import { promqlRunner, runPromqlScript, runPromqlScripts } from '../../../harness/promql-engine.js';

/**
 * Each alert of `manifest --monitoring` through Prometheus's own PromQL engine (tools/promql,
 * github.com/prometheus/prometheus's promqltest): synthetic series as a Prometheus with the
 * Prometheus Operator and kube-state-metrics holds them, and whether the alert fires, with which
 * labels. The lezer grammar (monitoring.test.ts) only says an expression parses.
 */
const OPTIONS: MonitoringOptions = { webhookNamespace: 'hooks', nodeNamespace: 'agents' };

/**
 * A series as the agents' PodMonitor scrapes it: the Prometheus Operator's target labels for a
 * PodMonitor (namespace, container, pod, endpoint, and job = PodMonitor namespace/name:
 * prometheus-operator's pkg/prometheus/promcfg.go), and the node our relabeling adds.
 */
const agent = (metric: string, node: string, extra = '', namespace = 'agents', mesh = 'linkerd') =>
  `${metric}{job="${namespace}/interlock-node",namespace="${namespace}",pod="interlock-node-${mesh}-${node}",container="node-agent",endpoint="metrics",instance="${node}:4191",node="${node}"${extra}}`;
const webhook = (metric: string, pod: string, extra = '') =>
  `${metric}{job="hooks/interlock-webhook",namespace="hooks",pod="interlock-webhook-${pod}",container="webhook",endpoint="metrics",instance="${pod}:9443",node="n1"${extra}}`;
/**
 * kube-state-metrics' series, with the labels its docs list (docs/metrics/workload/daemonset-metrics.md,
 * deployment-metrics.md, cluster/node-metrics.md): the object's namespace, or the exporter's own
 * target namespace where the object has none (a Node).
 */
const ksm = (metric: string, labels: string, namespace = 'monitoring') =>
  `${metric}{job="kube-state-metrics",instance="ksm:8080",namespace="${namespace}",${labels}}`;

const NODES = ['n1', 'n2', 'n3'];
const nodeInfo = [...NODES, 'win1'].map((node) => `${ksm('kube_node_info', `node="${node}"`)} 1x30`);
const desired = (daemonset: string, count: number, namespace = 'agents') =>
  `${ksm('kube_daemonset_status_desired_number_scheduled', `daemonset="${daemonset}"`, namespace)} ${count}x30`;
const replicas = (count: number) =>
  `${ksm('kube_deployment_spec_replicas', 'deployment="interlock-webhook"', 'hooks')} ${count}x30`;
const agentsUp = (values: readonly number[], namespace = 'agents', mesh = 'linkerd') =>
  values.map((value, index) => `${agent('up', NODES[index]!, '', namespace, mesh)} ${value}x30`);
const webhookUp = (...values: number[]) => values.map((value, index) => `${webhook('up', `p${index}`)} ${value}x30`);
/** An install of both parts, scraped and described by kube-state-metrics, everything up. */
const healthy = [
  ...nodeInfo,
  desired('interlock-node-linkerd', 3),
  ...agentsUp([1, 1, 1]),
  replicas(2),
  ...webhookUp(1, 1),
];

interface Scenario {
  readonly alert: string;
  readonly name: string;
  readonly series: readonly string[];
  /** The label sets the alert fires with at 20m; none: silent. */
  readonly fires: readonly string[];
  readonly options?: MonitoringOptions;
}

const scenarios: Scenario[] = [
  {
    alert: 'InterlockWebhookDown',
    name: 'installed, 2 replicas wanted, none answers',
    series: [...nodeInfo, replicas(2), ...webhookUp(0, 0)],
    fires: ['{namespace="hooks"}'],
  },
  {
    alert: 'InterlockWebhookDown',
    name: 'installed, no pod scraped at all',
    series: [...nodeInfo, replicas(2)],
    fires: ['{namespace="hooks"}'],
  },
  {
    alert: 'InterlockWebhookDown',
    name: 'installed, no kube-state-metrics, every replica scraped down',
    series: webhookUp(0, 0),
    fires: ['{namespace="hooks"}'],
  },
  {
    alert: 'InterlockWebhookDown',
    name: 'not installed (node agent only)',
    series: [...nodeInfo, desired('interlock-node-linkerd', 3), ...agentsUp([1, 1, 1])],
    fires: [],
  },
  {
    alert: 'InterlockWebhookDown',
    name: 'one of two replicas answers',
    series: [...nodeInfo, replicas(2), ...webhookUp(1, 0)],
    fires: [],
  },
  { alert: 'InterlockWebhookDown', name: 'scaled to zero', series: [...nodeInfo, replicas(0)], fires: [] },
  {
    alert: 'InterlockNodeAgentDown',
    name: 'the DaemonSet desires 3, 2 answer',
    series: [...nodeInfo, desired('interlock-node-linkerd', 3), ...agentsUp([1, 1, 0])],
    fires: ['{namespace="agents"}'],
  },
  {
    alert: 'InterlockNodeAgentDown',
    name: 'the DaemonSet desires 3, no agent scraped at all',
    series: [...nodeInfo, desired('interlock-node-linkerd', 3)],
    fires: ['{namespace="agents"}'],
  },
  {
    alert: 'InterlockNodeAgentDown',
    name: 'two per-mesh agents, 2×3 desired, all up (a Windows node beside)',
    series: [
      ...nodeInfo,
      desired('interlock-node-linkerd', 3),
      desired('interlock-node-istio', 3),
      ...agentsUp([1, 1, 1]),
      ...agentsUp([1, 1, 1], 'agents', 'istio'),
    ],
    fires: [],
  },
  {
    alert: 'InterlockNodeAgentDown',
    name: 'two per-mesh agents, 2×3 desired, 5 up',
    series: [
      ...nodeInfo,
      desired('interlock-node-linkerd', 3),
      desired('interlock-node-istio', 3),
      ...agentsUp([1, 1, 1]),
      ...agentsUp([1, 0, 1], 'agents', 'istio'),
    ],
    fires: ['{namespace="agents"}'],
  },
  {
    alert: 'InterlockNodeAgentDown',
    name: 'no kube-state-metrics, every agent scraped down',
    series: agentsUp([0, 0, 0]),
    fires: ['{namespace="agents"}'],
  },
  {
    alert: 'InterlockNodeAgentDown',
    name: 'no kube-state-metrics, one agent of three down (blind: InterlockNodeAlertsBlind says so)',
    series: agentsUp([1, 0, 1]),
    fires: [],
  },
  {
    alert: 'InterlockNodeAgentDown',
    name: 'no agent installed',
    series: [...nodeInfo, replicas(2), ...webhookUp(1, 1)],
    fires: [],
  },
  {
    alert: 'InterlockNodeAgentDown',
    name: "another namespace's agents neither count nor alarm here",
    series: [...healthy, desired('interlock-node-kuma', 3, 'other'), ...agentsUp([1, 0, 0], 'other', 'kuma')],
    fires: [],
  },
  {
    alert: 'InterlockNodeAgentDown',
    name: "the other namespace's rule speaks for its own agents",
    series: [...healthy, desired('interlock-node-kuma', 3, 'other'), ...agentsUp([1, 0, 0], 'other', 'kuma')],
    fires: ['{namespace="other"}'],
    options: { ...OPTIONS, nodeNamespace: 'other' },
  },
  {
    alert: 'InterlockNodeAlertsBlind',
    name: 'agents scraped, no kube-state-metrics',
    series: agentsUp([1, 1, 1]),
    fires: ['{namespace="agents"}'],
  },
  {
    alert: 'InterlockNodeAlertsBlind',
    name: "kube-state-metrics without its nodes' series",
    series: [desired('interlock-node-linkerd', 3), ...agentsUp([1, 1, 1])],
    fires: ['{namespace="agents"}'],
  },
  { alert: 'InterlockNodeAlertsBlind', name: 'agents and kube-state-metrics', series: healthy, fires: [] },
  { alert: 'InterlockNodeAlertsBlind', name: 'no agent, no kube-state-metrics', series: webhookUp(1, 1), fires: [] },
  {
    alert: 'InterlockWebhookAlertsBlind',
    name: 'webhook scraped, no kube-state-metrics',
    series: webhookUp(1, 1),
    fires: ['{namespace="hooks"}'],
  },
  { alert: 'InterlockWebhookAlertsBlind', name: 'webhook and kube-state-metrics', series: healthy, fires: [] },
  {
    alert: 'InterlockWebhookAlertsBlind',
    name: 'no webhook, no kube-state-metrics',
    series: agentsUp([1, 1, 1]),
    fires: [],
  },
  {
    alert: 'InterlockNodeTainted',
    name: "the agent's taint on n2",
    series: [
      ...healthy,
      `${ksm('kube_node_spec_taint', 'node="n2",key="interlock.dev/cni-not-ready",value="",effect="NoSchedule"')} 1x30`,
    ],
    fires: ['{node="n2"}'],
  },
  {
    alert: 'InterlockNodeTainted',
    name: "another taint than the agent's",
    series: [
      ...healthy,
      `${ksm('kube_node_spec_taint', 'node="n2",key="node.kubernetes.io/unreachable",value="",effect="NoExecute"')} 1x30`,
    ],
    fires: [],
  },
  ...agentMetricScenarios(),
  ...webhookMetricScenarios(),
];

/** The agents' own metrics: firing on this namespace's agents, silent when healthy or when another namespace's agent is at fault. */
function agentMetricScenarios(): Scenario[] {
  // alert, the series it reads (src/node-agent/) and its labels, firing points, healthy points, and the
  // labels it fires with beside namespace and node.
  const cases: [string, string, string, string, string, string][] = [
    [
      'InterlockPodsBlocked',
      'interlock_node_blocked_pods_total',
      ',reason="NoProxyRedirect"',
      '0+5x30',
      '7x30',
      ',reason="NoProxyRedirect"',
    ],
    ['InterlockNodeBreakerOpen', 'interlock_node_breaker_open', '', '1x30', '0x30', ''],
    ['InterlockCniAuditFailing', 'interlock_node_cni_audit_healthy', '', '0x30', '1x30', ''],
    [
      'InterlockNodeAgentApiErrors',
      'interlock_node_api_errors_total',
      ',operation="delete",status="403"',
      '0+12x30',
      '0+3x30',
      ',operation="delete"',
    ],
    ['InterlockCaptureLost', 'interlock_node_capture_lost_pods', ',mesh="linkerd"', '2x30', '0x30', ',mesh="linkerd"'],
    [
      'InterlockMeshPluginFailing',
      'interlock_node_mesh_plugin_failures_total',
      ',cause="ExecFailed"',
      '0+1x30',
      '3x30',
      ',cause="ExecFailed"',
    ],
    ['InterlockNodeNotMeshReady', 'interlock_node_mesh_ready', '', '0x30', '1x30', ''],
  ];
  return cases.flatMap(([alert, metric, labels, firing, fine, fired]) => [
    {
      alert,
      name: 'at fault on n2',
      series: [...healthy, `${agent(metric, 'n2', labels)} ${firing}`],
      fires: [`{namespace="agents",node="n2"${fired}}`],
    },
    { alert, name: 'healthy on n2', series: [...healthy, `${agent(metric, 'n2', labels)} ${fine}`], fires: [] },
    {
      alert,
      name: "another namespace's agent at fault",
      series: [...healthy, `${agent(metric, 'n2', labels, 'other')} ${firing}`],
      fires: [],
    },
  ]);
}

function webhookMetricScenarios(): Scenario[] {
  const expiry = (days: number) =>
    `${webhook('interlock_webhook_certificate_expiry_timestamp_seconds', 'p0')} ${1200 + days * 86_400}x30`;
  const errors = (points: string) =>
    `${webhook('interlock_webhook_errors_total', 'p0', ',cause="BadRequest"')} ${points}`;
  return [
    {
      alert: 'InterlockWebhookErrors',
      name: 'errors in the last 5 minutes',
      series: [...healthy, errors('0+2x30')],
      fires: ['{namespace="hooks",cause="BadRequest"}'],
    },
    { alert: 'InterlockWebhookErrors', name: 'no new error', series: [...healthy, errors('4x30')], fires: [] },
    {
      alert: 'InterlockWebhookCertificateExpiring',
      name: 'expires in 5 days',
      series: [...healthy, expiry(5)],
      fires: ['{namespace="hooks"}'],
    },
    {
      alert: 'InterlockWebhookCertificateExpiring',
      name: 'expires in 60 days',
      series: [...healthy, expiry(60)],
      fires: [],
    },
  ];
}

/**
 * The script: the series every minute for 30 minutes, then the alert's expression at 20m, its
 * value set to 1 (`group`) so that the label sets are what is compared: `fires`, or nothing.
 */
function script(expr: string, series: readonly string[], fires: readonly string[]): string {
  return [
    'load 1m',
    ...series.map((line) => `  ${line}`),
    '',
    `eval instant at 20m group without () (${expr})`,
    ...fires.map((labels) => `  ${labels} 1`),
    '',
  ].join('\n');
}

const exprOf = (alert: string, options: MonitoringOptions = OPTIONS): string => {
  const rule = alertRules(options).find((candidate) => candidate.alert === alert);
  if (!rule) throw new Error(`manifest --monitoring has no alert ${alert}`);
  return rule.expr;
};

describe("manifest --monitoring's alerts, through Prometheus's PromQL engine", () => {
  // scripts/test.sh builds the runner before the tests; a bare `npm run test:unit` on a fresh
  // machine builds it here (minutes, Go needed).
  beforeAll(() => void promqlRunner(), 900_000);

  it('every alert has a scenario where it fires and one where it stays silent', () => {
    const names = alertRules(OPTIONS).map((rule) => rule.alert);
    for (const name of names) {
      const own = scenarios.filter((scenario) => scenario.alert === name);
      expect(own.filter((scenario) => scenario.fires.length > 0).length, `${name} fires`).toBeGreaterThan(0);
      expect(own.filter((scenario) => scenario.fires.length === 0).length, `${name} silent`).toBeGreaterThan(0);
    }
    expect(scenarios.filter((scenario) => !names.includes(scenario.alert)).map((scenario) => scenario.alert)).toEqual(
      [],
    );
  });

  it.each(scenarios.map((scenario) => [`${scenario.alert}: ${scenario.name}`, scenario] as const))(
    '%s',
    (_, scenario) => {
      const outcome = runPromqlScript(
        script(exprOf(scenario.alert, scenario.options), scenario.series, scenario.fires),
      );
      expect(outcome.output.trim(), scenario.fires.length > 0 ? 'fires' : 'silent').toBe('PASS');
      expect(outcome.passed).toBe(true);
    },
  );

  it("fails with the engine's message when an alert is broken: silent where it must fire, firing where it must not", () => {
    const breaker = scenarios.find(
      (scenario) => scenario.alert === 'InterlockNodeBreakerOpen' && scenario.fires.length > 0,
    )!;
    const neverFires = exprOf('InterlockNodeBreakerOpen').replace('== 1', '== 2');
    const silent = runPromqlScript(script(neverFires, breaker.series, breaker.fires));
    expect(silent.passed).toBe(false);
    expect(silent.output).toMatch(/expected metric \{.*node=\\?"n2\\?"\} with 1: \[1(\.0+)?\] not found/);
    // The webhook alert of the release before this one: critical forever on an agent-only install.
    const noWebhook = scenarios.find((scenario) => scenario.name === 'not installed (node agent only)')!;
    const firesForever = runPromqlScript(
      script('absent(up{job="hooks/interlock-webhook"} == 1)', noWebhook.series, []),
    );
    expect(firesForever.passed).toBe(false);
    expect(firesForever.output).toContain('unexpected metric {} in result, has value 1');
    const unparsable = runPromqlScript(script('sum(up', noWebhook.series, []));
    expect(unparsable.output).toContain('unclosed left parenthesis');
  });

  it('the runner runs every script of a directory, names the one that fails, and refuses an empty directory', () => {
    const up = 'load 1m\n  up{job="a"} 1x30\n\neval instant at 20m up == 1\n';
    const both = runPromqlScripts({
      'a.promql': `${up}  up{job="a"} 1\n`,
      'b.promql': up,
      'notes.txt': 'not a script',
    });
    expect(both.passed).toBe(false);
    expect(both.output).toContain('--- FAIL: TestScripts/b.promql');
    expect(both.output).not.toContain('TestScripts/a.promql');
    expect(both.output).toContain('unexpected metric {__name__="up", job="a"} in result');
    expect(runPromqlScripts({ 'a.promql': `${up}  up{job="a"} 1\n` }).passed).toBe(true);
    const none = runPromqlScripts({ 'notes.txt': 'not a script' });
    expect(none.passed).toBe(false);
    expect(none.output).toMatch(/no \*\.promql script in .*interlock-promql-/);
  });
});
