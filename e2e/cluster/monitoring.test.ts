import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeAuthority } from '../../test/harness/certs.js';
import { runPromqlScript } from '../../test/harness/promql-engine.js';
import { interlock, interlockRun, kubectl, waitFor } from './cluster.js';
import { installAgent, installWebhook, type InstalledWebhook } from './install.js';

// The monitoring part on the real cluster (issue 46: "installed, monitored, checked"): the
// Prometheus Operator's own CRDs (scripts/ensure-prometheus-crds.sh, the version
// cluster/prometheus-operator/go.mod pins) served by the real API server, which validates what
// `manifest --monitoring` prints against their schemas. `check --pre --monitoring` fails before
// they exist and passes after; each PodMonitor selects its part's running pods by a port they
// name, whose path answers with the series the rules read; the documented uninstall removes it.
// No Prometheus runs here: what it would scrape is fetched as it would fetch it.
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const CRDS = ['podmonitors', 'prometheusrules'];
const LABEL = 'app.kubernetes.io/part-of=interlock';
const CHECK_FAILED = 69;

type Doc = Record<string, ReturnType<typeof JSON.parse>>;

/** The agent's series a default install does not export, by design, and the agent flag that exports each. */
const GATED = new Map([
  ['interlock_node_cni_audit_healthy', '--cni-audit'],
  ['interlock_node_capture_lost_pods', '--recheck-interval'],
  ['interlock_node_mesh_plugin_failures_total', '--report-condition'],
  ['interlock_node_mesh_ready', '--report-condition'],
]);

/** What the scrapes gave, as promqltest series: every sample, and `up`, with the Operator's target labels. */
const scraped: string[] = [];

/**
 * One scrape as a Prometheus holds it: each sample of the exposition with the target's labels
 * (a PodMonitor's job, namespace, pod, endpoint, instance, and the node our relabeling adds), a
 * scraped label of the same name kept as exported_NAME (honorLabels false), and `up` 1; each
 * value held for 30 minutes.
 */
function seriesOf(text: string, target: Readonly<Record<string, string>>): string[] {
  const quoted = (labels: Readonly<Record<string, string>>) =>
    Object.entries(labels)
      .map(([key, value]) => `${key}="${value}"`)
      .join(',');
  const samples = text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const [, name, labels = '', value] = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line) ?? [];
      const own: Record<string, string> = {};
      for (const [, key, text] of labels.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g))
        own[key! in target ? `exported_${key!}` : key!] = text!;
      return `${name!}{${quoted({ ...own, ...target })}} ${value!.replace('+Inf', 'Inf')}x30`;
    });
  return [...samples, `up{${quoted(target)}} 1x30`];
}

let crdDir = '';
let webhook: InstalledWebhook | undefined;
let agent = '';
let monitoring = '';

const crdFile = (kind: string) => join(crdDir, `monitoring.coreos.com_${kind}.yaml`);
const items = async (args: readonly string[]): Promise<Doc[]> =>
  (JSON.parse(await kubectl([...args, '-o', 'json'])) as { items: Doc[] }).items;

beforeAll(async () => {
  crdDir = execFileSync('bash', ['scripts/ensure-prometheus-crds.sh'], { cwd: REPO, encoding: 'utf8' }).trim();
  for (const kind of CRDS) await kubectl(['delete', '--ignore-not-found', '--wait=true', '-f', crdFile(kind)]);
  webhook = await installWebhook('cluster-monitoring');
  agent = await installAgent();
}, 600_000);
afterAll(async () => {
  if (monitoring) await kubectl(['delete', '--ignore-not-found', '-f', '-'], monitoring).catch(() => '');
  for (const kind of CRDS) await kubectl(['delete', '--ignore-not-found', '-f', crdFile(kind)]).catch(() => '');
  for (const printed of [webhook?.printed, agent])
    if (printed) await kubectl(['delete', '-f', '-', '--wait=true', '--timeout=120s'], printed).catch(() => '');
  if (webhook) removeAuthority(webhook.authority);
}, 300_000);

describe("manifest --monitoring against the Prometheus Operator's real CRDs", () => {
  it('check --pre --monitoring fails while the CRDs are missing, naming both, and passes once they are served', async () => {
    const missing = await interlockRun(['check', '--pre', '--monitoring']);
    expect(missing.exitCode).toBe(CHECK_FAILED);
    expect(missing.stdout).toMatch(
      / {2}FAIL {2}.*--monitoring prints podmonitors and prometheusrules, which this cluster does not serve/,
    );
    for (const kind of CRDS) await kubectl(['apply', '--server-side', '-f', crdFile(kind)]);
    await kubectl([
      'wait',
      '--for=condition=Established',
      '--timeout=60s',
      ...CRDS.map((kind) => `crd/${kind}.monitoring.coreos.com`),
    ]);
    const served = await waitFor(
      'check --pre to see the CRDs served',
      async () => {
        const ran = await interlockRun(['check', '--pre', '--monitoring']);
        return (
          /ok {4}the Prometheus Operator's PodMonitor and PrometheusRule are served/.test(ran.stdout) && ran.stdout
        );
      },
      60_000,
    );
    expect(served).not.toMatch(/FAIL .*monitoring/);
  }, 180_000);

  it('applies as printed; the API server checks it against the CRD schemas and refuses a broken rule', async () => {
    monitoring = await interlock(['manifest', '--monitoring']);
    const applied = await kubectl(['apply', '-f', '-'], monitoring);
    expect(applied).toMatch(/podmonitor\.monitoring\.coreos\.com\/interlock-node (created|configured|unchanged)/);
    expect(applied).toMatch(/podmonitor\.monitoring\.coreos\.com\/interlock-webhook (created|configured|unchanged)/);
    expect(applied).toMatch(/prometheusrule\.monitoring\.coreos\.com\/interlock (created|configured|unchanged)/);
    const [rule] = await items(['get', 'prometheusrule', '-A', '-l', LABEL]);
    const broken = structuredClone(rule!);
    broken['spec'].groups[0].rules[0].for = 'five minutes';
    delete broken['metadata'].resourceVersion;
    await expect(kubectl(['apply', '--dry-run=server', '-f', '-'], JSON.stringify(broken))).rejects.toThrow(/for/);
  }, 120_000);

  it("each PodMonitor selects its part's running pods by a port they name; that path serves the series the rules read", async () => {
    const monitors = await items(['get', 'podmonitor', '-A', '-l', LABEL]);
    expect(monitors.map((monitor) => monitor['metadata'].name).sort()).toEqual(['interlock-node', 'interlock-webhook']);
    const exported = new Set<string>();
    scraped.length = 0;
    for (const monitor of monitors) {
      const selector = Object.entries(monitor['spec'].selector.matchLabels as Record<string, string>)
        .map(([key, value]) => `${key}=${value}`)
        .join(',');
      const pods = await items(['get', 'pods', '-n', monitor['metadata'].namespace, '-l', selector]);
      expect(pods.length, monitor['metadata'].name).toBeGreaterThan(0);
      for (const endpoint of monitor['spec'].podMetricsEndpoints as Doc[])
        for (const pod of pods) {
          const ports = (pod['spec'].containers as Doc[]).flatMap((container) => (container['ports'] ?? []) as Doc[]);
          const port = ports.find((candidate) => candidate['name'] === endpoint['port']);
          expect(port, `${pod['metadata'].name} names no port ${String(endpoint['port'])}`).toBeDefined();
          const ip = String(pod['status'].podIP);
          // Fetched from the host, as a Prometheus would: only through the node (scripts/cluster.sh host_routes).
          expect(execFileSync('ip', ['route', 'get', ip], { encoding: 'utf8' })).toMatch(/ dev ilk-cluster0 /);
          const url = `http://${ip}:${String(port!['containerPort'])}${String(endpoint['path'])}`;
          const response = await fetch(url, { signal: AbortSignal.timeout(5000) });
          expect(response.status, url).toBe(200);
          const text = await response.text();
          for (const [, name] of text.matchAll(/^# TYPE (\S+) /gm)) exported.add(name!);
          const target = {
            job: `${String(monitor['metadata'].namespace)}/${String(monitor['metadata'].name)}`,
            namespace: String(pod['metadata'].namespace),
            pod: String(pod['metadata'].name),
            endpoint: String(endpoint['port']),
            instance: `${ip}:${String(port!['containerPort'])}`,
            node: String(pod['spec'].nodeName),
          };
          scraped.push(...seriesOf(text, target));
        }
    }
    const [rule] = await items(['get', 'prometheusrule', '-A', '-l', LABEL]);
    const read = new Set(
      (rule!['spec'].groups as Doc[])
        .flatMap((group) => group['rules'] as Doc[])
        .flatMap((alert) => [...String(alert['expr']).matchAll(/\binterlock_[a-z_]+/g)].map(([name]) => name)),
    );
    expect(read.size).toBeGreaterThan(6);
    expect([...read].filter((name) => !exported.has(name) && !GATED.has(name))).toEqual([]);
    // The gated ones are absent for the reason named, not by a typo the set would hide.
    expect([...GATED.keys()].filter((name) => exported.has(name) || !read.has(name))).toEqual([]);
  }, 120_000);

  it("the rules as the API server stores them, run by Prometheus's engine on what was scraped: only the blind alerts fire", async () => {
    expect(scraped.length).toBeGreaterThan(20);
    const [rule] = await items(['get', 'prometheusrule', '-A', '-l', LABEL]);
    const alerts = (rule!['spec'].groups as Doc[]).flatMap((group) => group['rules'] as Doc[]);
    // The series load: a failing eval below is then an alert's answer, not a script the engine refused.
    const loads = runPromqlScript(
      ['load 1m', ...scraped.map((line) => `  ${line}`), '', 'eval instant at 20m vector(1)', '  {} 1', ''].join('\n'),
    );
    expect(loads.passed, loads.output).toBe(true);
    const fired = alerts
      .filter((alert) => {
        const script = ['load 1m', ...scraped.map((line) => `  ${line}`), ''];
        script.push(`eval instant at 20m vector(1) and on() (count(${String(alert['expr'])}) > 0)`, '');
        // Silent: the eval expects nothing, and passes. Firing: it returns {} 1, and fails.
        const outcome = runPromqlScript(script.join('\n'));
        expect(outcome.output, String(alert['alert'])).not.toMatch(/parse error|could not parse/i);
        return !outcome.passed;
      })
      .map((alert) => String(alert['alert']));
    // This cluster runs no kube-state-metrics: the two alerts that say so fire, and nothing else does.
    expect(fired.sort()).toEqual(['InterlockNodeAlertsBlind', 'InterlockWebhookAlertsBlind']);
  }, 300_000);

  it('the documented uninstall removes the monitoring objects and their record, and nothing else', async () => {
    await kubectl(['delete', '-f', '-', '--wait=true'], monitoring);
    monitoring = '';
    expect(await kubectl(['get', 'podmonitor,prometheusrule', '-A', '-l', LABEL, '-o', 'name'])).toBe('');
    expect(await kubectl(['get', 'configmap', '-A', '-l', LABEL, '-o', 'name'])).not.toContain(
      'interlock-install-monitoring',
    );
    await kubectl(['rollout', 'status', 'deployment/interlock-webhook', '-n', 'interlock-webhook', '--timeout=30s']);
    await kubectl(['rollout', 'status', 'daemonset/interlock-node-linkerd', '-n', 'interlock-system', '--timeout=30s']);
  }, 120_000);
});
