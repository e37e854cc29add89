import { mkdtemp, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeObject } from '../../test/harness/kube-api/pods.js';
import { startKubeApi, type KubeApi } from '../../test/harness/kube-api/server.js';
import { metric, startAgent, waitFor, type AgentProcess } from '../../test/node-agent/agent-process.js';
import { MESH_CONDITION } from '../../src/node-agent/node-gate.js';
import type { CriNode } from './cri-node.js';
import { bridge, conflist, meshPlugin, portmap } from './scenario.js';
import { startNode } from './suite-node.js';

// The real `interlock node --cni-audit --recheck-interval`: its audit asks containerd, on the
// re-check's CRI client, what it loaded. An installer's atomic rename that containerd 1.6 does not
// see makes the prediction and the runtime disagree: the condition says so, naming both files,
// and says True again once containerd has loaded the file.
let node: CriNode;
let api: KubeApi;
let agent: AgentProcess | undefined;

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}
const condition = (): Condition | undefined =>
  (
    api.store.get('nodes', undefined, 'node-a') as unknown as { status: { conditions?: Condition[] } }
  ).status.conditions?.find((c) => c.type === MESH_CONDITION);

beforeAll(async () => {
  node = await startNode();
  api = await startKubeApi({ bookmarkMs: 200 });
  api.store.put('nodes', nodeObject('node-a'));
}, 300_000);
afterAll(async () => {
  if (agent) {
    await Promise.race([agent.terminate(), new Promise((resolve) => setTimeout(resolve, 6000))]);
    agent.kill();
  }
  await node?.clearConfigs();
  await node?.stop();
  await api?.close();
});

const withMesh = (index: number) => conflist([bridge(node, index), portmap, meshPlugin('linkerd')]);

describe("the agent's audit against containerd's loaded configuration", () => {
  it('agrees, then names both files while containerd holds the old one, then agrees again', async () => {
    await node.writeConfig('10-primary.conflist', withMesh(81));
    await node.waitCniLoaded('ilkcri81');
    agent = await startAgent(api, [
      '--cni-audit',
      '--cni-conf-dir',
      node.confDir,
      '--cni-bin-dir',
      node.binDir,
      '--recheck-interval',
      '1m',
      '--cri-endpoint',
      `unix://${node.socket}`,
      '--report-condition',
      '--condition-interval',
      '1s',
    ]);
    await waitFor('the condition True on a clean audit', () => condition()?.status === 'True', 30_000);

    const aside = await mkdtemp(join(node.root, 'aside-'));
    await writeFile(join(aside, '05-new.conflist'), withMesh(82));
    await rename(join(aside, '05-new.conflist'), join(node.confDir, '05-new.conflist'));
    const broken = await waitFor(
      'CNIConfigBroken naming both files',
      () => condition()?.reason === 'CNIConfigBroken' && condition(),
      40_000,
    );
    expect((await node.cniState()).config).toContain('ilkcri81');
    expect(broken.status).toBe('False');
    expect(broken.message).toMatch(/containerd loaded 10-primary\.conflist .*the audit predicts 05-new\.conflist/);
    expect(metric(await agent.metrics(), 'interlock_node_cni_audit_healthy')).toBe(0);

    // The next write there: containerd loads it, the audit agrees again.
    await node.writeConfig('05-new.conflist', withMesh(82));
    await node.waitCniLoaded('ilkcri82');
    await waitFor('the condition True again', () => condition()?.status === 'True', 40_000);
  });
});
