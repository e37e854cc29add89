import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ClusterAccess } from '../../src/kube/cluster-access.js';
import { patchNodeCondition, readNodeState, type NodeCondition } from '../../src/kube/node-status.js';
import { removeNodeTaints, type Taint } from '../../src/kube/nodes-taint.js';
import { call } from '../../src/kube/pods-api.js';
import { MESH_CONDITION } from '../../src/node-agent/node-gate.js';
import { nodeObject } from '../harness/kube-api/pods.js';
import { startKubeApi, type KubeApi } from '../harness/kube-api/server.js';

// The node gate's two writes against the API stand-in, in the API server's wire format: a strategic
// merge patch of nodes/status (conditions merge by type) and the taint list replaced under a
// resourceVersion precondition.
const STARTUP: Taint = { key: 'readiness.k8s.io/mesh-not-ready', value: 'pending', effect: 'NoSchedule' };
const OTHER: Taint = { key: 'example.com/dedicated', value: 'db', effect: 'NoExecute' };

let api: KubeApi;
let access: ClusterAccess;
beforeEach(async () => {
  api = await startKubeApi();
  access = { server: api.url, insecureSkipTlsVerify: false, origin: 'test' };
  const node = nodeObject('node-a');
  node.spec = { ...(node.spec as object), taints: [STARTUP, OTHER] };
  api.store.put('nodes', node);
});
afterEach(async () => api.close());

const stored = () =>
  api.store.get('nodes', undefined, 'node-a') as unknown as {
    spec: { taints?: Taint[] };
    status: { conditions: NodeCondition[] };
  };
const condition = (status: NodeCondition['status'], message: string): NodeCondition => ({
  type: MESH_CONDITION,
  status,
  reason: status === 'True' ? 'MeshCNIReady' : 'CNIConfigBroken',
  message,
  lastHeartbeatTime: '2026-11-28T10:00:00Z',
  lastTransitionTime: '2026-11-28T10:00:00Z',
});

describe('nodes/status: the condition merged by type', () => {
  it("adds the condition beside the kubelet's and replaces it on the next write", async () => {
    const kubelet = stored().status.conditions.map((c) => c.type);
    expect(kubelet).toContain('Ready');
    expect((await patchNodeCondition(access, 'node-a', condition('False', 'broken'), 5000)).ok).toBe(true);
    expect((await patchNodeCondition(access, 'node-a', condition('True', 'clean'), 5000)).ok).toBe(true);
    const conditions = stored().status.conditions;
    expect(conditions.map((c) => c.type)).toEqual([...kubelet, MESH_CONDITION]);
    expect(conditions.at(-1)).toMatchObject({ status: 'True', message: 'clean' });
    const state = await readNodeState(access, 'node-a', 5000);
    expect(state.ok && state.value.conditions.at(-1)?.type).toBe(MESH_CONDITION);
  });

  it('changes no spec through nodes/status, and no status through the node itself (the API server strategies)', async () => {
    const patch = (path: string, body: object) =>
      call(
        access,
        { method: 'PATCH', path, body, contentType: 'application/strategic-merge-patch+json', timeoutMs: 5000 },
        [200],
      );
    await patch('/api/v1/nodes/node-a/status', {
      spec: { taints: null },
      status: { conditions: [condition('True', 'x')] },
    });
    expect(stored().spec.taints).toEqual([STARTUP, OTHER]);
    await patch('/api/v1/nodes/node-a', { status: { conditions: [condition('False', 'forged')] } });
    expect(stored().status.conditions.at(-1)?.message).toBe('x');
  });
});

describe('removeNodeTaints: lifts the start-up taint and nothing else, never adds one', () => {
  it('removes every taint of the key (any effect) and keeps the others', async () => {
    expect(await removeNodeTaints(access, 'node-a', { key: STARTUP.key }, 5000)).toEqual({
      ok: true,
      value: 'changed',
    });
    expect(stored().spec.taints).toEqual([OTHER]);
    expect(await removeNodeTaints(access, 'node-a', { key: STARTUP.key }, 5000)).toEqual({
      ok: true,
      value: 'unchanged',
    });
  });

  it('leaves a taint of the key with another effect when the effect is named', async () => {
    expect(await removeNodeTaints(access, 'node-a', { key: STARTUP.key, effect: 'NoExecute' }, 5000)).toEqual({
      ok: true,
      value: 'unchanged',
    });
    expect(stored().spec.taints).toEqual([STARTUP, OTHER]);
  });

  it('never clobbers a taint another writer added between the read and the write: 409, read again, keep it', async () => {
    const added: Taint = { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' };
    api.faults.add({
      method: 'PATCH',
      path: /^\/api\/v1\/nodes\/node-a$/,
      fault: { kind: 'delay', ms: 200 },
      times: 1,
    });
    const removal = removeNodeTaints(access, 'node-a', { key: STARTUP.key }, 5000);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const node = api.store.get('nodes', undefined, 'node-a')!;
    api.store.put('nodes', { ...node, spec: { ...(node.spec as object), taints: [STARTUP, OTHER, added] } });
    expect(await removal).toEqual({ ok: true, value: 'changed' });
    expect(stored().spec.taints).toEqual([OTHER, added]);
    expect(api.requests.filter((r) => r.method === 'PATCH').map((r) => r.status)).toEqual([409, 200]);
  });
});
