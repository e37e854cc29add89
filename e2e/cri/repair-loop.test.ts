import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { writeKubeconfig } from '../../test/harness/kube-api/kubeconfig.js';
import { nodeObject } from '../../test/harness/kube-api/pods.js';
import { startKubeApi, type KubeApi } from '../../test/harness/kube-api/server.js';
import { startAgent, waitFor, type AgentProcess } from '../../test/node-agent/agent-process.js';
import { INTERLOCK_IMAGE } from './images.js';
import type { CriNode } from './cri-node.js';
import { Kubelet } from './kubelet/kubelet.js';
import type { ContainerSpec } from './kubelet/pod-spec.js';
import { ApiPublisher } from './kubelet/publisher.js';
import { ReplicaSetStandIn } from './replica-set.js';
import { APP, bridge, conflist, manifestContainer, meshPlugin, portmap } from './scenario.js';
import { startNode } from './suite-node.js';

// The whole repair loop on a real runtime: the kubelet harness runs pods through containerd's CRI
// and publishes their status and Events to the Kubernetes API stand-in; the real `interlock node`
// watches it and acts; the ReplicaSet stand-in replaces what it deletes; kubectl reads the story.
let node: CriNode;
let api: KubeApi;
let kubelet: Kubelet;
let validator: ContainerSpec;
let dir: string;
let kubeconfig: string;
let agent: AgentProcess | undefined;
const sets: ReplicaSetStandIn[] = [];

const kubectl = async (...args: string[]): Promise<string> =>
  (
    await promisify(execFile)('kubectl', args, {
      env: { PATH: process.env.PATH, KUBECONFIG: kubeconfig, HOME: dir },
      encoding: 'utf8',
      timeout: 30_000,
    })
  ).stdout;

beforeAll(async () => {
  execFileSync('bash', [new URL('../../scripts/ensure-kubectl.sh', import.meta.url).pathname], { stdio: 'ignore' });
  node = await startNode();
  api = await startKubeApi();
  api.store.put('nodes', nodeObject('node-a'));
  dir = mkdtempSync(join(tmpdir(), 'interlock-cri-kubectl-'));
  kubeconfig = writeKubeconfig(join(dir, 'kubeconfig'), api.url);
  kubelet = new Kubelet({ node, nodeName: 'node-a', publisher: new ApiPublisher(api.url, 'node-a') });
  validator = await manifestContainer('linkerd');
}, 300_000);
afterAll(async () => {
  await node?.stop();
  await api?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});
afterEach(async () => {
  agent?.kill();
  agent = undefined;
  for (const set of sets.splice(0)) {
    await set.close();
    await Promise.all(set.runs.map((run) => run.stop()));
  }
});

let networks = 60;
/** The node's CNI: the primary alone (broken: no mesh) or with the mesh chained (fixed). */
async function cni(meshed: boolean): Promise<void> {
  networks += 1;
  await node.writeConfig(
    '10-primary.conflist',
    conflist([bridge(node, networks), portmap, ...(meshed ? [meshPlugin('linkerd')] : [])]),
  );
  await node.waitCniLoaded(new RegExp(`ilkcri${networks}\\b`));
}

const eventsOf = (name: string) =>
  api.store.list('events').filter((event) => (event['involvedObject'] as { name?: string } | undefined)?.name === name);
const reasonsOf = (name: string) => eventsOf(name).map((event) => String(event['reason']));

describe('the repair loop through the CRI', () => {
  it('deletes the blocked pod with preconditions; the replacement gets a fresh sandbox and passes once the CNI is fixed', async () => {
    await cni(false);
    const set = new ReplicaSetStandIn(api, kubelet, 'web', 'rs-web-uid', [validator], [APP], 2, () => cni(true));
    sets.push(set);
    agent = await startAgent(api, []);
    const first = await set.create();
    const second = await waitFor('the replacement', () => set.runs[1], 60_000);
    expect(await second.outcome).toMatchObject({ kind: 'running' });
    expect(second.attempts.find((attempt) => attempt.name === validator.name)?.exitCode).toBe(0);
    // The blocked pod: InterceptionMissing, deleted by uid precondition, its sandbox removed.
    const blocked = first.attempts.find((attempt) => attempt.name === validator.name);
    expect(blocked).toMatchObject({ exitCode: 95, message: expect.stringMatching(/^InterceptionMissing: /) });
    const deletion = api.requests.find(
      (request) => request.method === 'DELETE' && request.path.endsWith(`/pods/${first.pod.metadata.name}`),
    );
    expect(deletion?.body).toMatchObject({ preconditions: { uid: first.pod.metadata.uid } });
    expect(second.sandboxId).not.toBe(first.sandboxId);
    const sandboxes = ((await node.cri.call('ListPodSandbox'))['items'] as Array<{ id: string }>).map(
      (item) => item.id,
    );
    expect(sandboxes).toContain(second.sandboxId);
    expect(sandboxes).not.toContain(first.sandboxId);
    expect(reasonsOf(first.pod.metadata.name)).toEqual(
      expect.arrayContaining(['Created', 'Started', 'BackOff', 'InterlockRecreating']),
    );
    // kubectl reads the replacement's story from the API, as an operator would.
    const described = await kubectl('describe', 'pod', second.pod.metadata.name, '-n', 'default');
    expect(described).toMatch(/Status:\s+Running/);
    expect(described).toMatch(/Started\s+.*Started container linkerd-network-validator/);
    expect(described).toMatch(/Started\s+.*Started container app/);
    const history = await kubectl(
      'get',
      'events',
      '-n',
      'default',
      '--field-selector',
      `involvedObject.name=${first.pod.metadata.name}`,
    );
    expect(history).toMatch(/BackOff/);
    expect(history).toMatch(/InterlockRecreating/);
  });

  it('with the CNI still broken the breaker opens, --taint taints the node, and kubectl describe shows every Event', async () => {
    await cni(false);
    // The agent counts only failures of the validator image it is told to trust (docs/node-agent.md).
    const trusted = INTERLOCK_IMAGE.replace(/:[^/:]*$/, '');
    // Every ReplicaSet here is in one namespace: say that one namespace may open the breaker.
    agent = await startAgent(api, [
      '--breaker-threshold',
      '2',
      '--breaker-min-namespaces',
      '1',
      '--taint',
      '--trusted-image',
      trusted,
    ]);
    for (const name of ['shop', 'cart', 'pay']) {
      const set = new ReplicaSetStandIn(api, kubelet, name, `rs-${name}-uid`, [validator], [APP], 2);
      sets.push(set);
      await set.create();
    }
    const taint = await waitFor(
      'the taint',
      () =>
        (
          (
            api.store.get('nodes', undefined, 'node-a')?.['spec'] as
              { taints?: Array<{ key: string; effect: string }> } | undefined
          )?.taints ?? []
        ).find((t) => t.key === 'interlock.dev/cni-not-ready'),
      90_000,
    );
    expect(taint.effect).toBe('NoSchedule');
    const held = await waitFor(
      'a held pod',
      () => api.store.list('events').find((event) => event['reason'] === 'InterlockHeld'),
      60_000,
    );
    const heldPod = (held['involvedObject'] as { name: string }).name;
    const described = await kubectl('describe', 'pod', heldPod, '-n', 'default');
    for (const reason of ['Pulled', 'Created', 'Started', 'BackOff', 'InterlockHeld'])
      expect(described).toContain(reason);
    expect(described).toMatch(/InterceptionMissing/);
    expect(api.store.list('events').map((event) => event['reason'])).toContain('InterlockBreakerOpen');
    expect(await kubectl('describe', 'node', 'node-a')).toMatch(/interlock\.dev\/cni-not-ready:NoSchedule/);
  });
});
