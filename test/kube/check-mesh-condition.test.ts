import { describe, expect, it } from 'vitest';
import { nodeAgentChecks } from '../../src/install-check/node-agent-checks.js';
import type { Found, InstallSnapshot } from '../../src/install-check/install-snapshot.js';
import { nodeAgentManifest } from '../../src/node-agent/manifest.js';
import { MESH_CONDITION } from '../../src/node-agent/node-gate.js';

// `interlock check` shows the node gate's condition per node, read from the nodes as the API lists them.
const found = (value: unknown): Found => ({ state: 'found', value });
const condition = (status: string, reason: string) => ({ type: MESH_CONDITION, status, reason, message: 'm' });
const node = (name: string, ...conditions: object[]) => ({
  metadata: { name },
  status: { conditions: [{ type: 'Ready', status: 'True' }, ...conditions] },
});

function snapshot(args: readonly string[], nodes: readonly object[]): InstallSnapshot {
  const docs = nodeAgentManifest({
    image: 'ghcr.io/example/interlock:1',
    mesh: 'istio',
    gate: { condition: args.includes('--report-condition'), startupTaint: undefined },
  }) as Record<string, unknown>[];
  const role = docs.find((doc) => doc.kind === 'ClusterRole');
  const binding = docs.find((doc) => doc.kind === 'ClusterRoleBinding');
  const absent: Found = { state: 'absent' };
  return {
    now: new Date(),
    server: 'https://api',
    origin: 'test',
    version: absent,
    namespaces: found({ items: [{ metadata: { name: 'interlock-system' } }] }),
    webhookNamespace: 'interlock-webhook',
    configuration: absent,
    service: absent,
    endpoints: absent,
    deployment: absent,
    tlsSecret: absent,
    nodeNamespace: 'interlock-system',
    agentScope: 'in any namespace',
    agents: [
      {
        namespace: 'interlock-system',
        daemonSet: found({
          metadata: { name: 'interlock-node-istio' },
          spec: {
            template: {
              spec: {
                serviceAccountName: 'interlock-node-istio',
                containers: [{ args: ['node', '--mesh=istio', ...args] }],
              },
            },
          },
          status: { desiredNumberScheduled: nodes.length, numberReady: nodes.length },
        }),
        pods: found({ items: [] }),
      },
    ],
    nodes: found({ items: nodes }),
    clusterRoles: found({ items: [role] }),
    clusterRoleBindings: found({ items: [binding] }),
  };
}

describe('interlock check: the node gate condition per node', () => {
  const args = ['--cni-audit', '--report-condition'];

  it('passes when every node reports True, naming each', () => {
    const results = nodeAgentChecks(
      snapshot(args, [node('a', condition('True', 'MeshCNIReady')), node('b', condition('True', 'MeshCNIReady'))]),
    );
    expect(results.find((r) => r.id === 'node-agent.condition')).toMatchObject({
      status: 'pass',
      message: `${MESH_CONDITION}: a True (MeshCNIReady), b True (MeshCNIReady)`,
    });
    expect(results.find((r) => r.id === 'node-agent.rbac')?.status).toBe('pass');
  });

  it('fails naming the nodes not ready first, with their reasons, and a node that reports nothing', () => {
    const results = nodeAgentChecks(
      snapshot(args, [
        node('a', condition('True', 'MeshCNIReady')),
        node('b', condition('False', 'MeshPluginFailing')),
        node('c'),
      ]),
    );
    expect(results.find((r) => r.id === 'node-agent.condition')).toMatchObject({
      status: 'fail',
      message: `${MESH_CONDITION}: b False (MeshPluginFailing), c not reported, a True (MeshCNIReady)`,
    });
  });

  it('shows no condition row when the agents do not report it (the check output is unchanged)', () => {
    const results = nodeAgentChecks(snapshot(['--cni-audit'], [node('a')]));
    expect(results.map((r) => r.id)).not.toContain('node-agent.condition');
  });

  it("fails the rbac check when the ClusterRole lacks the gate's nodes/status patch", () => {
    const broken = snapshot(args, [node('a', condition('True', 'MeshCNIReady'))]);
    const roles = (broken.clusterRoles as { value: { items: { rules: { resources: string[] }[] }[] } }).value.items;
    roles[0]!.rules = roles[0]!.rules.filter((rule) => !rule.resources.includes('nodes/status'));
    expect(nodeAgentChecks(broken).find((r) => r.id === 'node-agent.rbac')).toMatchObject({
      status: 'fail',
      message: expect.stringContaining('patch nodes/status'),
    });
  });
});
