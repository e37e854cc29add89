import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { writeKubeconfig } from '../harness/kube-api/kubeconfig.js';
import { RESOURCE_TABLE } from '../harness/kube-api/resources.js';
import { startKubeApi, type KubeApi } from '../harness/kube-api/server.js';
import type { Resource } from '../harness/kube-api/types.js';
import { INTERLOCK, shell as run } from '../harness/kubectl-shell.js';
import { REPO_ROOT } from '../harness/pod-namespace.js';

/**
 * Install, upgrade and uninstall as docs/operator.md tells an operator, with the real kubectl
 * against the API stand-in on a fresh cluster (only `default` and `kube-system` exist; a deleted
 * Namespace terminates and takes its contents with it, as the namespace controller does).
 */
let api: KubeApi;
let dir: string;
const env = { kubeconfig: '', home: '' };
const shell = (script: string, args: readonly string[] = [], input?: string) => run(env, script, args, input);
const printed = async (args: readonly string[]) => {
  const out = await shell(`${INTERLOCK} manifest "$@"`, args);
  expect(out.code, out.stderr).toBe(0);
  return out.stdout;
};
const apply = (args: readonly string[]) => shell(`${INTERLOCK} manifest "$@" | kubectl apply -f -`, args);
const remove = (args: readonly string[]) => shell(`${INTERLOCK} manifest "$@" | kubectl delete -f -`, args);

/** Every object in the store, as `resource namespace/name`. */
function inventory(): string[] {
  return RESOURCE_TABLE.flatMap((info) =>
    api.store
      .list(info.name as Resource)
      .map((object) => `${info.name} ${object.metadata.namespace ?? ''}/${object.metadata.name}`),
  ).sort();
}

/** The objects a printed manifest names, in the form of `inventory`. */
function objectsOf(yaml: string): string[] {
  return parseAllDocuments(yaml)
    .map(
      (document) =>
        document.toJS() as { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } },
    )
    .map((object) => {
      const info = RESOURCE_TABLE.find((candidate) => candidate.kind === object.kind)!;
      return `${info.name} ${object.metadata.namespace ?? ''}/${object.metadata.name}`;
    })
    .sort();
}

beforeAll(async () => {
  execFileSync('bash', [join(REPO_ROOT, 'scripts/ensure-kubectl.sh')], { stdio: 'ignore' });
  api = await startKubeApi({ namespaceLifecycle: true, namespaceFinalizeMs: 1500 });
  dir = mkdtempSync(join(tmpdir(), `interlock-lifecycle-${process.pid}-`));
  env.kubeconfig = writeKubeconfig(join(dir, 'kubeconfig'), api.url);
  env.home = dir;
});

afterAll(async () => {
  await api?.close();
  rmSync(dir, { recursive: true, force: true });
});

const AGENT = ['--node-agent', '--image', 'registry.example/interlock:1.0', '--cni-audit', '--mesh', 'linkerd'];
// The API server's addresses (a documentation range): without them manifest warns on stderr.
const WEBHOOK = ['--webhook', '--image', 'registry.example/interlock:1.0', '--api-server-cidr', '192.0.2.0/24'];

describe('install, upgrade and uninstall with kubectl', () => {
  it('installs the webhook on a fresh cluster: its Namespace comes first, every object is created', async () => {
    const before = inventory();
    const yaml = await printed(WEBHOOK);
    expect(parseAllDocuments(yaml)[0]!.toJS()).toMatchObject({ kind: 'Namespace' });
    expect(yaml).toMatch(/^# Needs cert-manager/m);
    const out = await apply(WEBHOOK);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stderr).toBe('');
    expect(inventory()).toEqual([...before, ...objectsOf(yaml)].sort());
  });

  it("installs the node agent beside it, in its own namespace; the agent's pods opt out of the webhook", async () => {
    const out = await apply(AGENT);
    expect(out.code, out.stderr).toBe(0);
    // Read loosely: plain parsed YAML.
    type Loose = { kind: string; metadata: { name: string }; spec: any; webhooks: any[] }; // eslint-disable-line @typescript-eslint/no-explicit-any
    const agent = parseAllDocuments(await printed(AGENT)).map((d) => d.toJS() as Loose);
    const webhook = parseAllDocuments(await printed(WEBHOOK)).map((d) => d.toJS() as Loose);
    const namespaceOf = (docs: Loose[]) => docs.find((d) => d.kind === 'Namespace')!.metadata.name;
    expect(namespaceOf(agent)).not.toBe(namespaceOf(webhook));
    const daemonSet = agent.find((d) => d.kind === 'DaemonSet')!;
    const selector = webhook.find((d) => d.kind === 'MutatingWebhookConfiguration')!.webhooks[0].objectSelector as {
      matchExpressions: { key: string; operator: string; values: string[] }[];
    };
    const podLabels = daemonSet.spec.template.metadata.labels as Record<string, string>;
    const [expression] = selector.matchExpressions;
    expect(expression!.operator).toBe('NotIn');
    expect(expression!.values).toContain(podLabels[expression!.key]);
  });

  it('adds monitoring after both parts, finds every part by its labels, and removes monitoring alone', async () => {
    const before = inventory();
    const yaml = await printed(['--monitoring']);
    const out = await apply(['--monitoring']);
    expect(out.code, out.stderr).toBe(0);
    expect(inventory()).toEqual([...before, ...objectsOf(yaml)].sort());
    const listed = await shell(
      'kubectl get namespace,serviceaccount,daemonset,deployment,service,podmonitor,prometheusrule -A -o name -l app.kubernetes.io/part-of=interlock',
    );
    expect(listed.code, listed.stderr).toBe(0);
    for (const name of [
      'namespace/interlock-system',
      'namespace/interlock-webhook',
      'daemonset.apps/interlock-node',
      'deployment.apps/interlock-webhook',
      'podmonitor.monitoring.coreos.com/interlock-webhook',
      'prometheusrule.monitoring.coreos.com/interlock',
    ])
      expect(listed.stdout.split('\n')).toContain(name);
    const removed = await remove(['--monitoring']);
    expect(removed.code, removed.stderr).toBe(0);
    expect(inventory()).toEqual(before);
  });

  it('upgrades by re-applying: changed objects are configured, the rest unchanged, the new image stored', async () => {
    const agentNext = AGENT.map((word) => word.replace(':1.0', ':1.1'));
    const webhookNext = WEBHOOK.map((word) => word.replace(':1.0', ':1.1'));
    const agent = await apply(agentNext);
    expect(agent.code, agent.stderr).toBe(0);
    expect(agent.stdout).toMatch(/^daemonset\.apps\/interlock-node configured$/m);
    expect(agent.stdout).toMatch(/^clusterrole\.rbac\.authorization\.k8s\.io\/interlock-node unchanged$/m);
    const webhook = await apply(webhookNext);
    expect(webhook.code, webhook.stderr).toBe(0);
    expect(webhook.stdout).toMatch(/^deployment\.apps\/interlock-webhook configured$/m);
    expect(webhook.stdout).toMatch(/^service\/interlock-webhook unchanged$/m);
    const daemonSet = api.store.get('daemonsets', 'interlock-system', 'interlock-node') as unknown as {
      spec: { template: { spec: { containers: { image: string; args: string[] }[] } } };
    };
    expect(daemonSet.spec.template.spec.containers[0]!.image).toBe('registry.example/interlock:1.1');
    const deployment = api.store.get('deployments', 'interlock-webhook', 'interlock-webhook') as unknown as {
      spec: { template: { spec: { containers: { image: string; args: string[] }[] } } };
    };
    expect(deployment.spec.template.spec.containers[0]!.image).toBe('registry.example/interlock:1.1');
    // The image it injects is its own container's (read from its pod): no argument keeps the old one.
    expect(deployment.spec.template.spec.containers[0]!.args.filter((arg) => arg.includes('registry.example'))).toEqual(
      [],
    );
  });

  it('re-injecting with a new image updates the validator of an applied workload', async () => {
    const fixture = join(REPO_ROOT, 'test/inject/fixtures/workloads.yaml');
    const first = await shell(
      `${INTERLOCK} inject --mesh linkerd --image registry.example/interlock:1.0 -f "$1" | kubectl apply --validate=warn -f -`,
      [fixture],
    );
    expect(first.code, first.stderr).toBe(0);
    const again = await shell(
      `${INTERLOCK} inject --mesh linkerd --image registry.example/interlock:1.0 -f "$1" | ${INTERLOCK} inject --mesh linkerd --image registry.example/interlock:1.1 | kubectl apply --validate=warn -f -`,
      [fixture],
    );
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/ configured$/m);
    const workloads = (['statefulsets', 'daemonsets', 'replicasets', 'cronjobs', 'jobs'] as const).flatMap((resource) =>
      api.store
        .list(resource)
        .filter(
          (object) =>
            !object.metadata.name.startsWith('interlock-') &&
            JSON.stringify(object).includes('registry.example/interlock'),
        ),
    );
    expect(workloads.length).toBe(5);
    for (const workload of workloads) {
      const text = JSON.stringify(workload);
      expect(text).toContain('registry.example/interlock:1.1');
      expect(text).not.toContain('registry.example/interlock:1.0');
    }
  });

  it("uninstalls the node agent: exactly its objects go, the webhook's all stay", async () => {
    const webhookObjects = objectsOf(await printed(WEBHOOK));
    const agentObjects = objectsOf(await printed(AGENT));
    const before = inventory();
    const out = await remove(AGENT);
    expect(out.code, out.stderr).toBe(0);
    const after = inventory();
    for (const object of webhookObjects) expect(after).toContain(object);
    expect(after).toEqual(before.filter((object) => !agentObjects.includes(object)));
  });

  it('uninstalls the webhook: the cluster holds what it held before the install', async () => {
    const webhookObjects = objectsOf(await printed(WEBHOOK));
    const before = inventory();
    const out = await remove(WEBHOOK);
    expect(out.code, out.stderr).toBe(0);
    expect(inventory()).toEqual(before.filter((object) => !webhookObjects.includes(object)));
    expect(inventory().filter((object) => object.includes('interlock'))).toEqual(
      inventory().filter((object) => object.startsWith('pods ')),
    );
  });

  it('a namespace shared by both outputs goes with either: the hazard the separate defaults avoid', async () => {
    const shared = ['--namespace', 'shared-ns'];
    for (const part of [AGENT, WEBHOOK])
      expect(await printed([...part, ...shared])).toMatch(
        /^# This output owns the Namespace shared-ns: kubectl delete -f of it deletes shared-ns and everything in it\.$/m,
      );
    expect((await apply([...AGENT, ...shared])).code).toBe(0);
    expect((await apply([...WEBHOOK, ...shared])).code).toBe(0);
    expect(api.store.get('deployments', 'shared-ns', 'interlock-webhook')).toBeDefined();
    const out = await remove([...AGENT, ...shared]);
    expect(out.code, out.stderr).toBe(0);
    expect(api.store.get('deployments', 'shared-ns', 'interlock-webhook')).toBeUndefined();
  });
});
