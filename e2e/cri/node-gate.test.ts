import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { nodeObject } from '../../test/harness/kube-api/pods.js';
import { startKubeApi, type KubeApi } from '../../test/harness/kube-api/server.js';
import { metric, startAgent, waitFor, type AgentProcess } from '../../test/node-agent/agent-process.js';
import { MESH_CONDITION } from '../../src/node-agent/node-gate.js';
import { pluginFailureOf } from '../../src/node-agent/sandbox-failure.js';
import type { CriNode } from './cri-node.js';
import { Kubelet, type PodRun } from './kubelet/kubelet.js';
import { ApiPublisher } from './kubelet/publisher.js';
import { bridge, conflist, MESH_PLUGIN, MESH_RULES, podOf, portmap } from './scenario.js';
import { startNode } from './suite-node.js';

// Issue 47 on the kubelet's path: the mesh plugin fails at ADD inside containerd's CRI plugin, the
// kubelet harness posts the FailedCreatePodSandBox Event with the runtime's own error text, and the
// real `interlock node --report-condition` turns the node's condition False naming the plugin, while
// the CNI audit (which reads the files, not the plugin's run) still finds the configuration healthy.
let node: CriNode;
let api: KubeApi;
let kubelet: Kubelet;
let agent: AgentProcess | undefined;
const pods: PodRun[] = [];

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}
const condition = (): Condition | undefined =>
  (
    api.store.get('nodes', undefined, 'node-a') as unknown as { status: { conditions: Condition[] } }
  ).status.conditions.find((c) => c.type === MESH_CONDITION);

beforeAll(async () => {
  node = await startNode();
  api = await startKubeApi({ bookmarkMs: 200 });
  api.store.put('nodes', nodeObject('node-a'));
  kubelet = new Kubelet({ node, nodeName: 'node-a', publisher: new ApiPublisher(api.url, 'node-a') });
}, 300_000);
afterAll(async () => {
  if (agent) {
    await Promise.race([agent.terminate(), new Promise((resolve) => setTimeout(resolve, 6000))]);
    agent.kill();
  }
  await node?.stop();
  await api?.close();
});
afterEach(async () => {
  await Promise.all(pods.splice(0).map((pod) => pod.stop()));
});

/** istio-cni chained after the primary; with a rules file that is not there, its ADD fails. */
async function cni(index: number, works: boolean): Promise<void> {
  const mesh = { type: MESH_PLUGIN.istio, rulesFile: works ? MESH_RULES.istio : `${node.root}/no-such-rules.txt` };
  await node.writeConfig('10-primary.conflist', conflist([bridge(node, index), portmap, mesh]));
  await node.waitCniLoaded(new RegExp(`ilkcri${index}\\b`));
}

describe('a mesh plugin that fails at ADD, through containerd', () => {
  it('names the plugin in the condition within the interval; the audit alone says healthy', async () => {
    await cni(71, false);
    agent = await startAgent(
      api,
      [
        '--cni-audit',
        '--cni-conf-dir',
        node.confDir,
        '--cni-bin-dir',
        node.binDir,
        '--report-condition',
        '--condition-interval',
        '1s',
        '--breaker-window',
        '5s',
      ],
      {},
      [],
      'istio',
    );
    await waitFor('the condition True on a clean audit', () => condition()?.status === 'True', 20_000);
    const run = kubelet.start(podOf('web', {}));
    pods.push(run);
    const outcome = await run.outcome;
    expect(outcome.kind).toBe('sandbox-failed');
    // The kubelet's Event, with containerd 1.6's error text for a chained plugin that exited non-zero
    // (libcni names the plugin by type, and by name only when its entry has one).
    const event = api.store.list('events').find((e) => e['reason'] === 'FailedCreatePodSandBox');
    const message = String(event?.['message']);
    expect(message).toMatch(
      new RegExp(
        `^Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "[0-9a-f]{64}": plugin type="${MESH_PLUGIN.istio}" failed \\(add\\): writing the mesh rules failed`,
      ),
    );
    expect(pluginFailureOf(message, MESH_PLUGIN.istio)?.detail).toMatch(/^writing the mesh rules failed/);
    const failing = await waitFor(
      'MeshPluginFailing',
      () => condition()?.reason === 'MeshPluginFailing' && condition(),
      20_000,
    );
    expect(failing.status).toBe('False');
    expect(failing.message).toContain(`${MESH_PLUGIN.istio} failed 1 pod sandbox(es)`);
    expect(metric(await agent.metrics(), 'interlock_node_cni_audit_healthy')).toBe(1);
    expect(metric(await agent.metrics(), 'interlock_node_mesh_ready')).toBe(0);
  });

  it('the plugin works again: the next pod gets its sandbox, and after the window the condition is True', async () => {
    await cni(72, true);
    const run = kubelet.start(podOf('web-fixed', {}));
    pods.push(run);
    expect((await run.outcome).kind).toBe('running');
    expect(condition()?.reason).toBe('MeshPluginFailing');
    await waitFor('the condition True again', () => condition()?.status === 'True', 40_000);
  });
});
