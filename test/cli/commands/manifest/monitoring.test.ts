import { PodMonitor, PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { parser } from '@prometheus-io/lezer-promql';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { runManifest } from '../../../../src/cli/commands/manifest/run.js';
import { alertRules } from '../../../../src/cli/commands/manifest/monitoring.js';
import { promAgentMetrics, promGateMetrics } from '../../../../src/node-agent/agent-metrics.js';
import { promWebhookMetrics } from '../../../../src/webhook/webhook-metrics.js';
import { promRecheckMetrics } from '../../../../src/node-agent/recheck/recheck-metrics.js';
import { makeAuthority, removeAuthority } from '../../../harness/certs.js';
import { expectGolden } from '../../../harness/golden.js';

type Doc = Record<string, ReturnType<typeof JSON.parse>>;

async function printed(...argv: string[]): Promise<Doc[]> {
  const outcome = await runManifest(['--monitoring', ...argv], {});
  expect(outcome.exitCode, outcome.stderr).toBe(0);
  return parseAllDocuments(outcome.stdout).map((document) => document.toJS() as Doc);
}

/** Every series the code registers, with its label names: both registries, every method called once. */
function exported(): Map<string, readonly string[]> {
  const registry = new Registry();
  const agent = promAgentMetrics(registry);
  agent.podsWatched(1);
  agent.queueDepth(0);
  agent.cniAudit(true);
  const gate = promGateMetrics(registry);
  gate.meshReady('True');
  const webhook = promWebhookMetrics(registry);
  void webhook;
  promRecheckMetrics(registry);
  const names = new Map<string, readonly string[]>();
  for (const metric of registry.getMetricsAsArray()) {
    const labelNames = (metric as unknown as { labelNames?: string[] }).labelNames ?? [];
    names.set(metric.name, labelNames);
  }
  return names;
}

/** Series other exporters provide, which the rules read by design (kube-state-metrics, Prometheus itself). */
const EXTERNAL = new Map<string, readonly string[]>([
  ['up', ['job']],
  ['kube_node_spec_taint', ['node', 'key', 'value', 'effect']],
  ['kube_node_info', ['node']],
  ['kube_daemonset_status_desired_number_scheduled', ['namespace', 'daemonset']],
  ['kube_deployment_spec_replicas', ['namespace', 'deployment']],
]);
/**
 * The labels every scraped series carries beside its own: the Prometheus Operator's target labels
 * for a PodMonitor (job is namespace/name), and the node the monitors' relabeling adds.
 */
const TARGET_LABELS = ['job', 'namespace', 'pod', 'node'];

/** The metric names of a PromQL expression, from the Prometheus project's own grammar; undefined when it does not parse. */
function metricsOf(expr: string): { metrics: string[]; grouping: string[] } | undefined {
  const tree = parser.parse(expr);
  let broken = false;
  const metrics: string[] = [];
  const grouping: string[] = [];
  tree.iterate({
    enter: (node) => {
      if (node.type.isError) broken = true;
      if (node.name === 'Identifier' && node.node.parent?.name === 'VectorSelector')
        metrics.push(expr.slice(node.from, node.to));
      if (node.name === 'LabelName' && node.node.parent?.name === 'GroupingLabels')
        grouping.push(expr.slice(node.from, node.to));
    },
  });
  return broken ? undefined : { metrics, grouping };
}

describe('interlock manifest --monitoring', () => {
  it("validates against the Prometheus Operator's CRD schemas (PodMonitor, PrometheusRule)", async () => {
    const documents = await printed();
    // Then the install record (install-record.test.ts).
    expect(documents.map((document) => document.kind)).toEqual([
      'PodMonitor',
      'PodMonitor',
      'PrometheusRule',
      'ConfigMap',
    ]);
    for (const document of documents.slice(0, 3)) {
      const Model = document.kind === 'PodMonitor' ? PodMonitor : PrometheusRule;
      new Model(document as never).validate();
    }
    const broken = structuredClone(documents[2]!);
    broken.spec.groups[0].rules[0].for = 15;
    expect(() => new PrometheusRule(broken as never).validate()).toThrow();
    const monitor = structuredClone(documents[1]!);
    monitor.spec.podMetricsEndpoints[0].scheme = 'gopher';
    expect(() => new PodMonitor(monitor as never).validate()).toThrow();
  });

  it('prints the monitors and the rule as recorded: every alert, severity, duration and text reviewed in the diff', async () => {
    const outcome = await runManifest(['--monitoring'], {});
    expect(outcome.exitCode, outcome.stderr).toBe(0);
    // Up to the install record (the last document), which carries the release's version and is
    // recorded by install-record.test.ts.
    const printedText = outcome.stdout.slice(0, outcome.stdout.lastIndexOf('\n---\n') + 1);
    expect(printedText).toContain('kind: PrometheusRule');
    expectGolden(join(import.meta.dirname, '../../../fixtures/golden/monitoring/manifest.yaml'), printedText);
  });

  it("selects the parts' pods by their selector labels, in their namespaces, with the ports they name", async () => {
    const documents = await printed('--webhook-namespace', 'hooks', '--node-namespace', 'agents');
    const [agent, webhook, rule] = documents;
    expect(agent!.metadata.namespace).toBe('agents');
    expect(agent!.spec.selector.matchLabels).toEqual({ 'app.kubernetes.io/name': 'interlock-node' });
    expect(agent!.spec.podMetricsEndpoints[0].port).toBe('metrics');
    expect(webhook!.metadata.namespace).toBe('hooks');
    // The admission port answers 404 on /metrics: the monitor scrapes the plain-HTTP metrics port.
    expect(webhook!.spec.podMetricsEndpoints[0].port).toBe('metrics');
    expect(webhook!.spec.podMetricsEndpoints[0].scheme).toBeUndefined();
    expect(webhook!.spec.podMetricsEndpoints[0].tlsConfig).toBeUndefined();
    expect(JSON.stringify(rule)).toContain('up{job=\\"hooks/interlock-webhook\\"}');
  });

  it('printed once per agent namespace: each rule speaks for its own agents, the shared alerts come out identical', async () => {
    const [a, b] = await Promise.all([printed('--node-namespace', 'mesh-a'), printed('--node-namespace', 'mesh-b')]);
    const ruleOf = (documents: Doc[]) => documents.find((document) => document.kind === 'PrometheusRule')!;
    expect([ruleOf(a!).metadata.namespace, ruleOf(b!).metadata.namespace]).toEqual(['mesh-a', 'mesh-b']);
    // The webhook's PodMonitor is the same object twice: a second apply changes nothing.
    expect(a![1]).toEqual(b![1]);
    const rules = (documents: Doc[]) =>
      new Map<string, Doc>(ruleOf(documents).spec.groups[0].rules.map((rule: Doc) => [rule.alert, rule]));
    const [inA, inB] = [rules(a!), rules(b!)];
    expect([...inA.keys()]).toEqual([...inB.keys()]);
    for (const [alert, rule] of inA) {
      const other = inB.get(alert)!;
      // Every alert on the agents' own series is scoped to this namespace's agents.
      if (/interlock_node_/.test(rule.expr)) expect(rule.expr, alert).toContain('job="mesh-a/interlock-node"');
      if (/mesh-a/.test(rule.expr)) {
        // An agent's alert reads its own namespace's agents only, and says which namespace.
        expect(rule.expr, alert).not.toContain('mesh-b');
        expect(other.expr, alert).toBe(rule.expr.replaceAll('mesh-a', 'mesh-b'));
        expect(rule.expr, alert).toMatch(/job="mesh-a\/interlock-node"|namespace="mesh-a"/);
      } else {
        // Identical alerts (same name and labels): Alertmanager sends them once.
        expect(other, alert).toEqual(rule);
      }
    }
  });

  it('covers what an operator alerts on: blocked pods by reason, breaker, taint, webhook errors, certificate expiry', () => {
    const rules = alertRules({});
    const byName = (name: string) => rules.find((rule) => rule.alert === name)!.expr;
    expect(byName('InterlockPodsBlocked')).toMatch(/by \(namespace, node, reason\).*interlock_node_blocked_pods_total/);
    expect(byName('InterlockNodeBreakerOpen')).toContain('interlock_node_breaker_open');
    expect(byName('InterlockCaptureLost')).toMatch(/by \(namespace, node, mesh\).*interlock_node_capture_lost_pods/);
    expect(byName('InterlockNodeTainted')).toContain('key="interlock.dev/cni-not-ready"');
    expect(byName('InterlockWebhookErrors')).toContain('interlock_webhook_errors_total');
    expect(byName('InterlockWebhookCertificateExpiring')).toContain(
      'interlock_webhook_certificate_expiry_timestamp_seconds',
    );
  });

  it('every alert expression parses as PromQL and reads only series that exist, grouped by labels they carry', () => {
    const names = exported();
    expect(names.size).toBeGreaterThan(8);
    for (const rule of alertRules({})) {
      const parsed = metricsOf(rule.expr);
      expect(parsed, rule.expr).toBeDefined();
      expect(parsed!.metrics.length, rule.expr).toBeGreaterThan(0);
      const labels = new Set(TARGET_LABELS);
      for (const metric of parsed!.metrics) {
        const known = names.get(metric) ?? EXTERNAL.get(metric);
        expect(known, `${rule.alert}: ${metric}`).toBeDefined();
        for (const label of known!) labels.add(label);
      }
      for (const label of parsed!.grouping) expect([...labels], `${rule.alert} by ${label}`).toContain(label);
    }
  });

  it('the same check catches a misspelled metric, an unparsable expression and a label the metric lacks', () => {
    const names = exported();
    const misspelled = metricsOf('max by (node) (interlock_node_breaker_opened) == 1')!;
    expect(misspelled.metrics.every((metric) => names.has(metric))).toBe(false);
    expect(metricsOf('sum by (reason (rate(interlock_webhook_errors_total[5m]))')).toBeUndefined();
    const grouped = metricsOf('sum by (reason) (rate(interlock_webhook_errors_total[5m]))')!;
    expect(grouped.grouping).toEqual(['reason']);
    expect(names.get('interlock_webhook_errors_total')).toEqual(['cause']);
    expect(names.get('interlock_webhook_errors_total')).not.toContain(grouped.grouping[0]);
  });

  it("the webhook exports its serving certificate's expiry, the series the expiry alert reads", async () => {
    const authority = makeAuthority('expiry');
    try {
      const registry = new Registry();
      promWebhookMetrics(registry).servingCertificate(authority.cert);
      const text = await registry.metrics();
      const value = Number(/^interlock_webhook_certificate_expiry_timestamp_seconds (\d+)$/m.exec(text)?.[1]);
      const { X509Certificate } = await import('node:crypto');
      const expected = Math.floor(new Date(new X509Certificate(authority.cert).validTo).getTime() / 1000);
      expect(value).toBe(expected);
    } finally {
      removeAuthority(authority);
    }
  });
});
