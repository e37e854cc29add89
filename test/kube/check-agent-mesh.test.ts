import { expectPasteable } from '../harness/fix-line.js';
import { describe, expect, it } from 'vitest';
import { nodeAgentChecks } from '../../src/install-check/node-agent-checks.js';
import type { Found, InstallSnapshot } from '../../src/install-check/install-snapshot.js';
import { meshIdentity } from '../../src/mesh/meshes.js';

// `interlock check` compares the mesh the node agent watches with the validators the pods run:
// an agent of another mesh (or generic) ignores their failures while its DaemonSet looks healthy.
const found = (value: unknown): Found => ({ state: 'found', value });
const absent: Found = { state: 'absent' };
const validatorOf = (mesh: 'linkerd' | 'istio' | 'kuma') => meshIdentity(mesh).containers.validator;
const pod = (namespace: string, name: string, initContainer: string) => ({
  metadata: { namespace, name },
  spec: { initContainers: [{ name: initContainer }], containers: [{ name: 'app' }] },
});

function snapshot(agentArgs: readonly string[], pods: Found): InstallSnapshot {
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
          spec: { template: { spec: { containers: [{ image: 'r/interlock:1', args: ['node', ...agentArgs] }] } } },
          status: { desiredNumberScheduled: 1, numberReady: 1 },
        }),
        pods: found({ items: [] }),
      },
    ],
    nodes: found({ items: [] }),
    clusterRoles: found({ items: [] }),
    clusterRoleBindings: found({ items: [] }),
    meshPods: pods,
  };
}

const meshRow = (results: ReturnType<typeof nodeAgentChecks>) => results.find((row) => row.id === 'node-agent.mesh');

describe('interlock check: the node agent watches the mesh the pods run', () => {
  it('fails a generic agent on a cluster of Linkerd pods, naming the pods, the container and the fix', () => {
    const row = meshRow(
      nodeAgentChecks(
        snapshot(
          ['--mesh=generic'],
          found({
            items: [pod('shop', 'web-1', validatorOf('linkerd')), pod('shop', 'web-2', validatorOf('linkerd'))],
          }),
        ),
      ),
    );
    expect(row?.status).toBe('fail');
    expect(row?.message).toContain(
      `no agent in any namespace watches ${validatorOf('linkerd')}: 2 pods run it (linkerd)`,
    );
    expect(row?.message).toContain('shop/web-1');
    expect(row?.fix).toContain(
      'interlock manifest --node-agent --mesh linkerd --namespace interlock-system --image r/interlock:1',
    );
  });

  it('fails an Istio agent beside Kuma pods, and passes when it watches the only mesh found', () => {
    const pods = found({ items: [pod('a', 'p', validatorOf('istio')), pod('b', 'q', validatorOf('kuma'))] });
    expect(meshRow(nodeAgentChecks(snapshot(['--mesh=istio'], pods)))?.status).toBe('fail');
    const istioOnly = found({ items: [pod('a', 'p', validatorOf('istio'))] });
    expect(meshRow(nodeAgentChecks(snapshot(['--mesh=istio'], istioOnly)))).toMatchObject({ status: 'pass' });
  });

  it('follows --container-name: the container the agent watches is the one named', () => {
    const pods = found({ items: [pod('a', 'p', validatorOf('linkerd'))] });
    const args = ['--mesh=generic', `--container-name=${validatorOf('linkerd')}`];
    expect(meshRow(nodeAgentChecks(snapshot(args, pods)))?.status).toBe('pass');
  });

  it.each([[['--container-name=app-check']], [['--container-name', 'app-check']]])(
    "the fix for another mesh's pods leaves out the container this agent was told to watch (%j)",
    async (given) => {
      const pods = found({ items: [pod('a', 'p', validatorOf('istio'))] });
      const row = meshRow(nodeAgentChecks(snapshot(['--mesh=generic', ...given, '--action', 'label'], pods)));
      expect(row?.status).toBe('fail');
      expect(row?.fix).toBe(
        'interlock manifest --node-agent --mesh istio --namespace interlock-system --image r/interlock:1 --action label | kubectl apply -f -',
      );
      await expectPasteable(row?.fix);
    },
  );

  it('passes a mesh agent before any meshed pod, warns a generic one, and fails when the pods cannot be read', () => {
    expect(meshRow(nodeAgentChecks(snapshot(['--mesh=linkerd'], found({ items: [] }))))?.status).toBe('pass');
    expect(meshRow(nodeAgentChecks(snapshot(['--mesh=generic'], found({ items: [] }))))?.status).toBe('warn');
    const forbidden: Found = { state: 'forbidden', detail: 'GET /api/v1/pods: 403 no' };
    expect(meshRow(nodeAgentChecks(snapshot(['--mesh=linkerd'], forbidden)))?.status).not.toBe('pass');
  });
});

describe("interlock check: the node agent's fix lines are commands that run", () => {
  it('names the mesh, namespace and image the DaemonSet runs when its Namespace is gone', () => {
    const gone = { ...snapshot(['--mesh=istio'], found({ items: [] })), namespaces: found({ items: [] }) };
    const row = nodeAgentChecks(gone).find((result) => result.id === 'node-agent.namespace');
    expect(row?.status).toBe('fail');
    expect(row?.fix).toBe(
      'interlock manifest --node-agent --mesh istio --namespace interlock-system --image r/interlock:1 | kubectl apply -f -',
    );
  });

  it('when no agent is installed, names the mesh whose validators the pods run (else leaves the choice in a comment)', async () => {
    const none = { ...snapshot([], found({ items: [] })), agents: [] };
    const row = nodeAgentChecks(none).find((result) => result.id === 'node-agent.installed');
    expect(row?.fix).toMatch(
      /^# no pod runs a mesh's validator yet; for your mesh: interlock manifest --node-agent --mesh linkerd\|/,
    );
    const meshed = {
      ...none,
      meshPods: found({
        items: [
          { metadata: { namespace: 'shop', name: 'web' }, spec: { initContainers: [{ name: 'istio-validation' }] } },
        ],
      }),
    };
    const fix = nodeAgentChecks(meshed).find((result) => result.id === 'node-agent.installed')?.fix;
    expect(fix).toMatch(
      /^interlock manifest --node-agent --mesh istio --namespace interlock-system --image \S+ \| kubectl apply -f -$/,
    );
    await expectPasteable(fix);
  });
});
