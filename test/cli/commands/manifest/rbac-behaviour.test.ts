import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runManifest } from '../../../../src/cli/commands/manifest/run.js';
import { reportFailureEvent } from '../../../../src/kube/report-failure-event.js';
import { writeKubeconfig } from '../../../harness/kube-api/kubeconfig.js';
import { crashLoopPod, nodeObject } from '../../../harness/kube-api/pods.js';
import { startKubeApi, type KubeApi } from '../../../harness/kube-api/server.js';
import { startAgent, waitFor, type AgentProcess } from '../../../node-agent/agent-process.js';
import { cniNodeDir } from '../../../node-agent/cni-node-dir.js';

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}
interface RbacObject {
  kind: string;
  rules?: Rule[];
  spec?: { template: { spec: { containers: Array<{ args: string[] }> } } };
}

const RESOURCES = ['pods', 'events', 'nodes'];

/** The verb a request exercises, as the API server's authorizer names it. */
function verbOf(method: string, path: string, watch: boolean): string {
  const named = !RESOURCES.includes(path.split('/').filter(Boolean).at(-1) ?? '');
  if (method === 'GET') return watch ? 'watch' : named ? 'get' : 'list';
  return { POST: 'create', PATCH: 'patch', PUT: 'update', DELETE: 'delete' }[method] ?? method;
}

/** `resource verb` for every API request the code made, open watches included (discovery aside). */
function used(api: KubeApi): string[] {
  const pairs = api.arrivals.flatMap((arrival) => {
    const [method = '', path = '', watch] = arrival.split(' ');
    const resource = RESOURCES.find((name) => path.split('/').includes(name));
    // A subresource is its own resource to the authorizer: nodes/status.
    const status = path.endsWith('/status') ? '/status' : '';
    return resource ? [`${resource}${status} ${verbOf(method, path.replace(/\/status$/, ''), watch === 'watch')}`] : [];
  });
  return [...new Set(pairs)].sort();
}

/** `resource verb` for every core-group rule of the printed Role or ClusterRole. */
function granted(objects: readonly RbacObject[]): string[] {
  const role = objects.find((object) => object.kind === 'Role' || object.kind === 'ClusterRole');
  return (role?.rules ?? [])
    .flatMap((rule) => rule.resources.flatMap((resource) => rule.verbs.map((verb) => `${resource} ${verb}`)))
    .sort();
}

const printed = async (argv: string[]) =>
  parseAllDocuments((await runManifest(argv, {})).stdout).map((doc) => doc.toJS() as RbacObject);

const scratch = mkdtempSync(join(tmpdir(), `interlock-rbac-${process.pid}-`));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * The agent's own pod, as the DaemonSet's downward API names it (POD_NAME, POD_NAMESPACE): it
 * reads it for the image it trusts without --trusted-image.
 */
function ownPod(kube: KubeApi): Record<string, string> {
  kube.store.put('pods', {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'interlock-node-x1', namespace: 'interlock-system', uid: 'agent-uid', resourceVersion: '1' },
    spec: { nodeName: 'node-b', containers: [{ name: 'node-agent', image: 'registry.example/interlock:1.0.0' }] },
  });
  return { POD_NAME: 'interlock-node-x1', POD_NAMESPACE: 'interlock-system' };
}

let api: KubeApi;
let agent: AgentProcess | undefined;
beforeEach(async () => {
  api = await startKubeApi({ bookmarkMs: 200 });
});
afterEach(async () => {
  agent?.kill();
  agent = undefined;
  await api.close();
});

describe('RBAC equals behaviour: every verb the code uses is granted by the printed role, and nothing more', () => {
  it('validate --report-event: create, then get and patch the existing Event on a repeated failure', async () => {
    const kubeconfig = writeKubeconfig(join(scratch, 'kc'), api.url);
    const env = { KUBECONFIG: kubeconfig, POD_NAME: 'web-1', POD_NAMESPACE: 'shop', POD_UID: 'u-1' };
    const log = { info: () => undefined, warn: (_: object, message: string) => expect.fail(message) };
    for (let failure = 0; failure < 2; failure++) {
      const reported = await reportFailureEvent({
        env,
        reason: 'PodNetworkMissing',
        terminationMessage: 'PodNetworkMissing: no route',
        log,
        serviceAccountDir: '/nonexistent',
        timeoutMs: 5000,
      });
      expect(reported).toBe(true);
    }
    expect(used(api)).toEqual(['events create', 'events get', 'events patch']);
    expect(granted(await printed(['--rbac', '--namespace', 'shop']))).toEqual(used(api));
  });

  for (const action of ['delete', 'label', 'none'] as const) {
    it(`node agent --action ${action}: the ClusterRole printed for it covers exactly what the agent does`, async () => {
      api.store.put('nodes', nodeObject('node-a'));
      const objects = await printed(['--node-agent', '--mesh', 'linkerd', '--action', action]);
      const daemonSet = objects.find((object) => object.kind === 'DaemonSet');
      // The agent runs with the printed DaemonSet's own args (its listen address aside: a test port).
      const args = daemonSet!.spec!.template.spec.containers[0]!.args.filter(
        (arg) => !['node', '--mesh=linkerd'].includes(arg) && !arg.startsWith('--listen'),
      );
      agent = await startAgent(api, args, ownPod(api));
      api.store.put('pods', crashLoopPod({ name: 'web-1' }));
      const acted = () => api.requests.some((request) => request.method === 'POST' && request.path.endsWith('/events'));
      await waitFor('the Event on web-1', acted);
      await waitFor(
        'the action',
        () => action === 'none' || api.requests.some((r) => ['DELETE', 'PATCH'].includes(r.method)),
      );
      // Without --trusted-image (the manifest prints none) it trusts its own pod's image's repository.
      expect(agent.logs.find((line) => line.msg === 'node agent started')?.trustedImages).toEqual([
        'registry.example/interlock',
      ]);
      const expected = granted(objects).filter((pair) => !pair.startsWith('nodes '));
      expect(used(api)).toEqual(expected);
    });
  }

  it('node agent --report-condition --startup-taint: the node gate is granted exactly its reads and writes of the Node and the sandbox Events', async () => {
    const dir = await cniNodeDir(true);
    try {
      const node = nodeObject('node-a');
      node.spec = {
        ...(node.spec as object),
        taints: [{ key: 'readiness.k8s.io/mesh-not-ready', effect: 'NoSchedule' }],
      };
      api.store.put('nodes', node);
      const flags = [...dir.auditArgs, '--report-condition', '--startup-taint', 'readiness.k8s.io/mesh-not-ready'];
      const objects = await printed(['--node-agent', '--mesh', 'istio', '--action', 'none', ...flags]);
      const daemonSet = objects.find((object) => object.kind === 'DaemonSet');
      const args = daemonSet!.spec!.template.spec.containers[0]!.args.filter(
        (arg) => !['node', '--mesh=istio'].includes(arg) && !arg.startsWith('--listen'),
      );
      agent = await startAgent(api, args, ownPod(api), [], 'istio');
      await waitFor(
        'the taint lifted',
        () => api.requests.some((r) => r.method === 'PATCH' && r.path === '/api/v1/nodes/node-a'),
        20_000,
      );
      await waitFor('the condition', () => api.requests.some((r) => r.path === '/api/v1/nodes/node-a/status'), 20_000);
      await waitFor(
        'the Event',
        () => api.requests.some((r) => r.method === 'POST' && r.path.endsWith('/events')),
        20_000,
      );
      expect(used(api)).toEqual(granted(objects));
      expect(granted(objects)).toEqual([
        'events create',
        'events list',
        'events watch',
        'nodes get',
        'nodes patch',
        'nodes/status patch',
        'pods get',
        'pods list',
        'pods watch',
      ]);
    } finally {
      await dir.remove();
    }
  });
});
