import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { chartFiles } from '../../scripts/chart.mjs';
import { runManifest } from '../../src/cli/commands/manifest/run.js';
import { INSTALL_RECORD_NAME } from '../../src/cli/commands/manifest/install-record.js';

/**
 * charts/interlock against `interlock manifest`: the checked-in chart is what scripts/chart.mjs
 * generates, the real helm (scripts/ensure-helm.sh, built by scripts/test.sh before the tests)
 * lints it, and `helm template` renders the same objects as manifest for the same settings.
 */
const repo = join(import.meta.dirname, '../..');
const chart = join(repo, 'charts/interlock');
const IMAGE = 'registry.example/team/mesh-interlock:1.2.3';
/** A CA file as an operator passes it (manifest --ca-bundle, helm --set-file webhook.caBundle). */
const caDir = mkdtempSync(join(tmpdir(), 'interlock-chart-test-'));
const CA_FILE = join(caDir, 'ca.crt');
writeFileSync(CA_FILE, '-----BEGIN CERTIFICATE-----\nMIIBchart+test/CA==\n-----END CERTIFICATE-----\n');
afterAll(() => rmSync(caDir, { recursive: true, force: true }));

function helm(...args: string[]): string {
  const binary = execFileSync('bash', [join(repo, 'scripts/ensure-helm.sh')], { encoding: 'utf8' }).trim();
  return execFileSync(binary, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

type K8sObject = { kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> } };
const key = (object: K8sObject) => `${object.kind}/${object.metadata.namespace ?? ''}/${object.metadata.name}`;

/** The objects, without manifest's install record: the chart's is its Helm release. */
function objects(text: string): Map<string, K8sObject> {
  const all = parseAllDocuments(text)
    .map((document) => document.toJS() as K8sObject | null)
    .filter((object): object is K8sObject => object !== null)
    .filter((object) => object.metadata.labels?.['app.kubernetes.io/name'] !== INSTALL_RECORD_NAME);
  return new Map(all.map((object) => [key(object), object]));
}

async function manifest(argv: string[]): Promise<string> {
  const outcome = await runManifest(argv, {});
  expect(outcome.exitCode, outcome.stderr).toBe(0);
  return outcome.stdout;
}

interface Case {
  readonly mesh: string;
  readonly webhook: boolean;
  readonly nodeAgent: boolean;
  readonly failurePolicy?: 'Fail';
  /** nodeAgent.cniAudit, with the CNI bin directory a platform values file pins (or the default). */
  readonly cniAudit?: { readonly valuesFile?: string; readonly binDir: string };
  /** platform=openshift from values-openshift.yaml. */
  readonly openshift?: true;
  /** webhook.caBundle from a file, as manifest --ca-bundle (no cert-manager objects). */
  readonly caBundle?: true;
  /** webhook.exemptNamespaces, as manifest --exempt-namespaces (it replaces the default list). */
  readonly exempt?: readonly string[];
  /** Each part's imagePullSecrets from values, as manifest --image-pull-secret names them. */
  readonly pullSecrets?: readonly string[];
}

const CASES: readonly Case[] = [
  { mesh: 'linkerd', webhook: true, nodeAgent: true },
  { mesh: 'linkerd', webhook: true, nodeAgent: true, caBundle: true },
  { mesh: 'istio-ambient', webhook: true, nodeAgent: false, caBundle: true, failurePolicy: 'Fail' },
  { mesh: 'istio', webhook: false, nodeAgent: true },
  { mesh: 'kuma', webhook: true, nodeAgent: false, failurePolicy: 'Fail' },
  { mesh: 'kuma', webhook: true, nodeAgent: false, failurePolicy: 'Fail', exempt: ['ops', 'cert-manager'] },
  { mesh: 'linkerd', webhook: true, nodeAgent: false, exempt: ['ops'] },
  { mesh: 'istio-ambient', webhook: true, nodeAgent: true },
  { mesh: 'linkerd', webhook: false, nodeAgent: false },
  { mesh: 'kuma', webhook: true, nodeAgent: true, failurePolicy: 'Fail' },
  { mesh: 'generic', webhook: false, nodeAgent: true },
  { mesh: 'istio', webhook: false, nodeAgent: true, cniAudit: { binDir: '/opt/cni/bin' } },
  { mesh: 'istio-ambient', webhook: true, nodeAgent: true, openshift: true },
  { mesh: 'kuma', webhook: true, nodeAgent: true, openshift: true, failurePolicy: 'Fail' },
  {
    mesh: 'linkerd',
    webhook: true,
    nodeAgent: true,
    cniAudit: { valuesFile: 'values-gke.yaml', binDir: '/home/kubernetes/bin' },
  },
  { mesh: 'linkerd', webhook: true, nodeAgent: true, pullSecrets: ['regcred', 'mirror-cred'] },
];

async function expected(test: Case): Promise<string> {
  const image = `--image=${IMAGE}`;
  const platform = test.openshift ? '--platform=openshift' : '--platform=kubernetes';
  const cni = test.cniAudit
    ? ['--cni-audit', `--cni-bin-dir=${test.cniAudit.binDir}`, '--cni-conf-dir=/etc/cni/net.d']
    : [];
  const pull = test.pullSecrets ? [`--image-pull-secret=${test.pullSecrets.join(',')}`] : [];
  const agent = test.nodeAgent
    ? await manifest(['--node-agent', `--mesh=${test.mesh}`, ...cni, image, platform, ...pull])
    : '';
  const policy = test.failurePolicy ? [`--failure-policy=${test.failurePolicy}`] : [];
  const ambient = test.mesh === 'istio-ambient' ? [`--mesh=${test.mesh}`] : [];
  const ca = test.caBundle ? [`--ca-bundle=${CA_FILE}`] : [];
  if (test.exempt) ca.push(`--exempt-namespaces=${test.exempt.join(',')}`);
  const webhook = test.webhook
    ? await manifest(['--webhook', ...ambient, image, platform, ...policy, ...ca, ...pull])
    : '';
  return `${agent}\n---\n${webhook}`;
}

describe('charts/interlock', () => {
  it('is what scripts/chart.mjs generates from manifest (npm run chart)', async () => {
    for (const [name, text] of Object.entries(await chartFiles()))
      expect(readFileSync(join(chart, name), 'utf8'), `charts/interlock/${name}: run npm run chart`).toBe(text);
  });

  it('passes helm lint', () => {
    expect(helm('lint', chart)).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
  });

  it.each(CASES)("helm template renders manifest's objects: %o", async (test) => {
    const rendered = helm(
      'template',
      'interlock',
      chart,
      '--set',
      `mesh=${test.mesh}`,
      '--set',
      `webhook.enabled=${test.webhook}`,
      '--set',
      `nodeAgent.enabled=${test.nodeAgent}`,
      '--set',
      'image.repository=registry.example/team/mesh-interlock,image.tag=1.2.3',
      ...(test.failurePolicy ? ['--set', `webhook.failurePolicy=${test.failurePolicy}`] : []),
      ...(test.exempt ? ['--set', `webhook.exemptNamespaces={${test.exempt.join(',')}}`] : []),
      ...(test.cniAudit ? ['--set', 'nodeAgent.cniAudit=true'] : []),
      ...(test.pullSecrets ?? []).flatMap((name, index) => [
        '--set',
        `nodeAgent.imagePullSecrets[${index}].name=${name},webhook.imagePullSecrets[${index}].name=${name}`,
      ]),
      ...(test.caBundle ? ['--set-file', `webhook.caBundle=${CA_FILE}`] : []),
      ...(test.openshift ? ['-f', join(chart, 'values-openshift.yaml')] : []),
      ...(test.cniAudit?.valuesFile ? ['-f', join(chart, test.cniAudit.valuesFile)] : []),
    );
    const want = objects(await expected(test));
    const got = objects(rendered);
    expect([...got.keys()].sort()).toEqual([...want.keys()].sort());
    for (const [name, object] of want) expect(got.get(name), name).toEqual(object);
  });

  it('adds pull secrets, placement and the pull policy from values to the pods', () => {
    const rendered = objects(
      helm(
        'template',
        'interlock',
        chart,
        '--set',
        'mesh=linkerd,webhook.enabled=true,image.pullPolicy=Always',
        '--set',
        'nodeAgent.imagePullSecrets[0].name=regcred,nodeAgent.nodeSelector.kubernetes\\.io/os=linux',
        '--set',
        'webhook.priorityClassName=interlock-critical,webhook.tolerations=null',
      ),
    );
    const pod = (name: string) =>
      [...rendered.values()].find(
        (object) => object.kind === 'DaemonSet' && key(object).endsWith(`/${name}`),
      ) as unknown as {
        spec: { template: { spec: Record<string, unknown> & { containers: { imagePullPolicy?: string }[] } } };
      };
    const agent = pod('interlock-node-linkerd').spec.template.spec;
    expect(agent.imagePullSecrets).toEqual([{ name: 'regcred' }]);
    expect(agent.nodeSelector).toEqual({ 'kubernetes.io/os': 'linux' });
    expect(agent.containers[0]?.imagePullPolicy).toBe('Always');
    const webhook = [...rendered.values()].find((object) => object.kind === 'Deployment') as unknown as {
      spec: { template: { spec: Record<string, unknown> } };
    };
    expect(webhook.spec.template.spec.priorityClassName).toBe('interlock-critical');
    expect(webhook.spec.template.spec.tolerations).toBeUndefined();
  });

  it('refuses what manifest refuses, in its words: the CNI audit of the generic mesh', () => {
    expect(() => helm('template', 'interlock', chart, '--set', 'mesh=generic,nodeAgent.cniAudit=true')).toThrow(
      /--cni-audit with --mesh generic needs --mesh-plugin/,
    );
  });

  it('refuses the node agent without a mesh, as manifest --node-agent does; the webhook alone needs none', () => {
    expect(() => helm('template', 'interlock', chart)).toThrow(/mesh is required with nodeAgent.enabled/);
    const webhookOnly = objects(
      helm('template', 'interlock', chart, '--set', 'nodeAgent.enabled=false,webhook.enabled=true'),
    );
    expect([...webhookOnly.values()].some((object) => object.kind === 'Deployment')).toBe(true);
  });

  it("refuses a part's namespace that is not Interlock's, as manifest does", () => {
    for (const set of [
      'mesh=linkerd,nodeAgent.namespace=kube-system',
      'mesh=linkerd,webhook.enabled=true,webhook.namespace=default',
    ])
      expect(() => helm('template', 'interlock', chart, '--set', set)).toThrow(/is not Interlock's/);
  });

  it('refuses a mesh it does not know, naming it', () => {
    expect(() => helm('template', 'interlock', chart, '--set', 'mesh=consul')).toThrow(
      /mesh "consul": expected one of/,
    );
  });
});
