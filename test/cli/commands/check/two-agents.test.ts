import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { runCheck } from '../../../../src/cli/commands/check/run.js';
import { runManifest } from '../../../../src/cli/commands/manifest/run.js';
import type { InstallCheckResult } from '../../../../src/install-check/install-check-result.js';
import { writeKubeconfig } from '../../../harness/kube-api/kubeconfig.js';
import { startKubeApi, type KubeApi } from '../../../harness/kube-api/server.js';
import type { KubeObject } from '../../../harness/kube-api/types.js';
import { shell } from '../../../harness/kubectl-shell.js';
import { REPO_ROOT } from '../../../harness/pod-namespace.js';
import { expectPasteable } from '../../../harness/fix-line.js';

/**
 * `interlock check` on a cluster of two meshes, one node agent each (issue 46): every agent is
 * judged and named, the validators are judged against all of them, and two agents of one mesh
 * (which share its cluster-scoped objects and host port) are a failure. The agents are our own
 * printed manifests applied with the real kubectl; the meshed pods are upstream's injected
 * Deployments' pod templates (Linkerd edge-25.8.4, Istio 1.28.0, both with their CNI validator).
 */
const IMAGE = 'registry.example/interlock:1.0';
const NODES = ['node-a', 'node-b'];
const MESHED = {
  linkerd: 'test/fixtures/meshes/linkerd/edge-25.8.4/inject_emojivoto_deployment_no_init_container.golden.yml',
  istio: 'test/fixtures/meshes/istio/1.28.0/hello.yaml.cni.injected',
} as const;

type Template = { metadata: { labels: Record<string, string> }; spec: Record<string, unknown> };
type Workload = KubeObject & { spec: { template: Template } };

let api: KubeApi;
let dir: string;
const env = { kubeconfig: '', home: '' };

/** Prints the node agent with the flags given and applies it with kubectl, as the operator does. */
async function install(mesh: string, namespace: string, ...flags: string[]): Promise<string> {
  const argv = ['--node-agent', '--mesh', mesh, '--namespace', namespace, '--image', IMAGE, ...flags];
  const printed = await runManifest(argv, {});
  expect(printed.exitCode, printed.stderr).toBe(0);
  const applied = await shell(env, 'kubectl apply -f -', [], printed.stdout);
  expect(applied.code, applied.stderr).toBe(0);
  const daemonSet = parseAllDocuments(printed.stdout)
    .map((document) => document.toJS() as Workload)
    .find((object) => object.kind === 'DaemonSet')!;
  return `${namespace}/${daemonSet.metadata.name}`;
}

/** What the DaemonSet controller and kubelets write once an agent runs: its status and a ready pod per node. */
function running(agent: string, ready = NODES.length): void {
  const [namespace, name] = agent.split('/') as [string, string];
  const daemonSet = api.store.get('daemonsets', namespace, name) as Workload;
  api.store.put('daemonsets', {
    ...daemonSet,
    status: { desiredNumberScheduled: NODES.length, numberReady: ready },
  } as KubeObject);
  for (const node of NODES)
    api.store.put('pods', {
      metadata: { name: `${name}-${node}`, namespace, labels: daemonSet.spec.template.metadata.labels },
      spec: { ...daemonSet.spec.template.spec, nodeName: node },
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
    } as KubeObject);
}

/** The pods upstream's injector's Deployment makes, one, in `namespace`. */
function meshedPod(mesh: keyof typeof MESHED, namespace: string): void {
  const deployment = parseAllDocuments(readFileSync(join(REPO_ROOT, MESHED[mesh]), 'utf8'))
    .map((document) => document.toJS() as Workload)
    .find((object) => object.kind === 'Deployment')!;
  const template = deployment.spec.template;
  api.store.put('namespaces', { metadata: { name: namespace } } as KubeObject);
  api.store.put('pods', {
    metadata: { ...template.metadata, name: `${deployment.metadata.name}-0`, namespace },
    spec: template.spec,
  } as KubeObject);
}

async function check(...flags: string[]): Promise<{
  exitCode: number;
  results: InstallCheckResult[];
  text: string;
  agents: string[] | undefined;
}> {
  const json = await runCheck(['-o', 'json', ...flags], { KUBECONFIG: env.kubeconfig });
  expect(json.stderr).toBe('');
  const report = JSON.parse(json.stdout) as { checks: InstallCheckResult[]; agents?: string[]; nodeNamespace: string };
  const results = report.checks;
  for (const result of results) await expectPasteable(result.fix);
  const text = await runCheck(flags, { KUBECONFIG: env.kubeconfig });
  return { exitCode: json.exitCode, results, text: text.stdout, agents: report.agents };
}

const rows = (results: readonly InstallCheckResult[], id: string) => results.filter((result) => result.id === id);
const failed = (results: readonly InstallCheckResult[]) => results.filter((result) => result.status === 'fail');

beforeAll(() => {
  execFileSync('bash', [join(REPO_ROOT, 'scripts/ensure-kubectl.sh')], { stdio: 'ignore' });
  dir = mkdtempSync(join(tmpdir(), `interlock-check-agents-${process.pid}-`));
  env.home = dir;
});

beforeEach(async () => {
  api = await startKubeApi({ namespaceLifecycle: true });
  env.kubeconfig = writeKubeconfig(join(dir, 'kubeconfig'), api.url);
  for (const name of ['default', 'kube-system']) api.store.put('namespaces', { metadata: { name } } as KubeObject);
  for (const node of NODES) api.store.put('nodes', { metadata: { name: node } } as KubeObject);
});

afterEach(async () => {
  await api?.close();
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('interlock check with a node agent per mesh', () => {
  const layouts = [
    ['two namespaces', 'interlock-system', 'interlock-istio'],
    ['one namespace', 'interlock-system', 'interlock-system'],
  ] as const;

  it.each(layouts)('Linkerd and Istio agents in %s, both meshes meshed: passes, each agent judged', async (_, a, b) => {
    const agents = [await install('linkerd', a), await install('istio', b)];
    for (const agent of agents) running(agent);
    meshedPod('linkerd', 'emojivoto');
    meshedPod('istio', 'shop');
    const { exitCode, results, text, agents: listed } = await check();
    expect(failed(results)).toEqual([]);
    // -o json lists the agents judged, as each of their checks names them.
    expect(listed).toEqual([...agents].sort());
    // Two agents, no webhook: installed, and not said otherwise.
    expect(rows(results, 'cluster.installed')).toEqual([]);
    expect(rows(results, 'node-agent.installed')).toEqual([]);
    expect(exitCode).toBe(0);
    for (const id of ['node-agent.daemonset', 'node-agent.nodes', 'node-agent.rbac', 'node-agent.namespace'])
      expect(
        rows(results, id)
          .map((row) => row.agent)
          .sort(),
        id,
      ).toEqual([...agents].sort());
    expect(rows(results, 'node-agent.daemonset').map((row) => row.message)).toEqual(
      expect.arrayContaining(agents.map((agent) => `DaemonSet ${agent}: 2 of 2 scheduled pods ready`)),
    );
    expect(rows(results, 'node-agent.mesh')).toMatchObject([{ status: 'pass' }]);
    expect(rows(results, 'node-agent.mesh')[0]?.message).toMatch(/linkerd-network-validator.*istio-validation/);
    expect(text).toMatch(new RegExp(`^node agent interlock-node-linkerd \\(namespace ${a}\\)$`, 'm'));
    expect(text).toMatch(new RegExp(`^node agent interlock-node-istio \\(namespace ${b}\\)$`, 'm'));
  });

  it.each([0, 1])(
    'fails naming the agent whose DaemonSet is not ready (agent %i), passing the other',
    async (index) => {
      const agents = [await install('linkerd', 'interlock-system'), await install('istio', 'interlock-istio')];
      agents.forEach((agent, i) => running(agent, i === index ? 1 : NODES.length));
      const { exitCode, results } = await check();
      expect(exitCode).toBe(69);
      const broken = agents[index]!;
      expect(failed(results)).toMatchObject([
        { id: 'node-agent.daemonset', agent: broken, message: `DaemonSet ${broken}: 1 of 2 scheduled pods ready` },
      ]);
      expect(failed(results)[0]?.fix).toBe(
        `kubectl -n ${broken.split('/')[0]} describe daemonset ${broken.split('/')[1]}`,
      );
    },
  );

  it.each([0, 1])('fails naming the agent whose ClusterRoleBinding is deleted (agent %i)', async (index) => {
    const agents = [await install('linkerd', 'interlock-system'), await install('istio', 'interlock-istio')];
    for (const agent of agents) running(agent);
    const broken = agents[index]!;
    api.store.remove('clusterrolebindings', undefined, broken.split('/')[1]!);
    const { exitCode, results } = await check();
    expect(exitCode).toBe(69);
    expect(failed(results)).toMatchObject([{ id: 'node-agent.rbac', agent: broken }]);
    expect(failed(results)[0]?.message).toMatch(new RegExp(`^ServiceAccount ${broken} may not `));
    // The fix prints that agent again, which applies its binding again.
    const [namespace, name] = broken.split('/') as [string, string];
    expect(failed(results)[0]?.fix).toBe(
      `interlock manifest --node-agent --mesh ${name.replace('interlock-node-', '')} --namespace ${namespace} --image ${IMAGE} --action=delete | kubectl apply -f -`,
    );
  });

  it("Linkerd and Istio pods with only Linkerd's agent: fails naming the Istio pods, the fix installs Istio's agent", async () => {
    running(await install('linkerd', 'interlock-system'));
    meshedPod('linkerd', 'emojivoto');
    meshedPod('istio', 'shop');
    const { exitCode, results } = await check();
    expect(exitCode).toBe(69);
    expect(failed(results)).toMatchObject([{ id: 'node-agent.mesh' }]);
    const [mesh] = failed(results);
    expect(mesh?.message).toMatch(
      /no agent in any namespace watches istio-validation: 1 pods run it \(istio\): shop\/hello-0/,
    );
    expect(mesh?.message).not.toMatch(/emojivoto/);
    // Istio's agent beside Linkerd's, with the flags Linkerd's runs with.
    expect(mesh?.fix).toBe(
      `interlock manifest --node-agent --mesh istio --namespace interlock-system --image ${IMAGE} --action=delete | kubectl apply -f -`,
    );
    // The fix, applied, is what makes it pass.
    running(await install('istio', 'interlock-system'));
    expect((await check()).exitCode).toBe(0);
  });

  it('two Linkerd agents in two namespaces: fails naming both and what they share', async () => {
    const agents = [await install('linkerd', 'interlock-system'), await install('linkerd', 'linkerd-agents')];
    for (const agent of agents) running(agent);
    const { exitCode, results } = await check();
    expect(exitCode).toBe(69);
    const [collision] = rows(results, 'node-agent.collision');
    expect(collision?.status).toBe('fail');
    expect(collision?.message).toMatch(
      /^2 agents interlock-node-linkerd, in interlock-system and linkerd-agents, share the ClusterRole and ClusterRoleBinding interlock-node-linkerd, the ValidatingAdmissionPolicy interlock-node-linkerd-own-node-pods and host port 9478/,
    );
    // The binding names the agent applied last: that one keeps its rights, the other one goes.
    expect(collision?.fix).toBe(
      [
        'kubectl -n interlock-system delete daemonset,serviceaccount,resourcequota -l app.kubernetes.io/instance=interlock-node-linkerd',
        'kubectl -n interlock-system delete configmap --ignore-not-found interlock-install-node-agent-linkerd',
        `interlock manifest --node-agent --mesh linkerd --namespace linkerd-agents --image ${IMAGE} --action=delete | kubectl apply -f -`,
      ].join(' && '),
    );
    expect(rows(results, 'node-agent.rbac').filter((row) => row.status === 'fail')).toMatchObject([
      {
        agent: 'interlock-system/interlock-node-linkerd',
        message: expect.stringMatching(
          /: its ClusterRoleBinding interlock-node-linkerd names ServiceAccount linkerd-agents\/interlock-node-linkerd instead$/,
        ),
        fix: expect.stringContaining('node-agent.collision'),
      },
    ]);
    // The fix's deletions done (the rest re-applies what is there): one agent, nothing collides.
    for (const kind of ['daemonsets', 'serviceaccounts', 'resourcequotas'] as const)
      api.store.remove(kind, 'interlock-system', 'interlock-node-linkerd');
    const after = await check();
    expect(rows(after.results, 'node-agent.collision')).toEqual([]);
    expect(after.exitCode).toBe(0);
  });

  it("Linkerd's agent told to --listen on Istio's port: fails naming both and the port; the fix moves it back", async () => {
    const agents = [
      await install('linkerd', 'interlock-system', '--listen', '0.0.0.0:9479'),
      await install('istio', 'interlock-istio'),
    ];
    for (const agent of agents) running(agent);
    const { exitCode, results } = await check();
    expect(exitCode).toBe(69);
    expect(failed(results)).toMatchObject([
      {
        id: 'node-agent.collision',
        message:
          "agents interlock-istio/interlock-node-istio and interlock-system/interlock-node-linkerd listen on host port 9479: one's pods cannot start on a node where the other's run",
        fix: `interlock manifest --node-agent --mesh linkerd --namespace interlock-system --image ${IMAGE} --action=delete | kubectl apply -f -`,
      },
    ]);
  });

  it('no agent, with or without --node-namespace: not installed, where it looked, and the fix installs there', async () => {
    const anywhere = await check();
    expect(anywhere.exitCode).toBe(69);
    expect(rows(anywhere.results, 'cluster.installed')[0]?.message).toMatch(/no node agent in any namespace$/);
    const elsewhere = await check('--node-namespace', 'agents');
    expect(rows(elsewhere.results, 'node-agent.installed')[0]).toMatchObject({
      status: 'skip',
      message: 'not installed (no DaemonSet labelled app.kubernetes.io/name=interlock-node in namespace agents)',
    });
    expect(rows(elsewhere.results, 'cluster.installed')[0]?.fix).toMatch(/in agents: manifest --node-agent --mesh /);
    // An agent elsewhere is not this namespace's.
    running(await install('linkerd', 'interlock-system'));
    expect(rows((await check('--node-namespace', 'agents')).results, 'node-agent.installed')).toHaveLength(1);
    expect(rows((await check()).results, 'node-agent.installed')).toEqual([]);
  });

  it('--node-namespace judges only the agents of that namespace', async () => {
    const agents = [await install('linkerd', 'interlock-system'), await install('istio', 'interlock-istio')];
    for (const agent of agents) running(agent);
    const { exitCode, results } = await check('--node-namespace', 'interlock-istio');
    expect(exitCode).toBe(0);
    expect(rows(results, 'node-agent.daemonset').map((row) => row.agent)).toEqual([
      'interlock-istio/interlock-node-istio',
    ]);
    // The validators are judged against the agents looked at, and the message says where those were.
    meshedPod('linkerd', 'emojivoto');
    const scoped = await check('--node-namespace', 'interlock-istio');
    expect(rows(scoped.results, 'node-agent.mesh')[0]?.message).toMatch(
      /no agent in namespace interlock-istio watches linkerd-network-validator: 1 pods run it/,
    );
    expect((await check()).exitCode).toBe(0);
  });
});
