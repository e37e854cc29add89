import { afterAll, describe, expect, it } from 'vitest';
import { nodeAgentMetricsPort } from '../../src/node-agent/manifest.js';
import type { Mesh } from '../../src/mesh/meshes.js';
import type { InstallCheckResult } from '../../src/install-check/install-check-result.js';
import { IMAGE, interlock, interlockRun, kubectl, waitFor } from './cluster.js';

// Two meshes on one cluster, one agent each (issue 46): both apply as printed, both run Ready on
// the node's host network, each on its own port, and removing one by its install record leaves the
// other running, its RBAC and port intact. Each agent in its own namespace, as docs/operator.md
// says (an output's delete removes its Namespace).
const AGENTS: ReadonlyArray<{ mesh: Mesh; namespace: string }> = [
  { mesh: 'linkerd', namespace: 'ilk-agent-linkerd' },
  { mesh: 'istio', namespace: 'ilk-agent-istio' },
];
const NODE_IP = '10.231.0.2';

const record = (mesh: Mesh) => `interlock-install-node-agent-${mesh}`;

/** Removes an agent as docs/operator.md's one-part uninstall does: by its install record. */
async function uninstall(mesh: Mesh, namespace: string): Promise<string> {
  const objects = await kubectl([
    ...['get', 'configmap', record(mesh), '-n', namespace, '--ignore-not-found'],
    ...['-o', 'jsonpath={.data.objects}'],
  ]);
  return objects.trim() === '' ? '' : kubectl(['delete', '--ignore-not-found', '--wait=true', '-f', '-'], objects);
}

const readyz = async (mesh: Mesh): Promise<number> =>
  (await fetch(`http://${NODE_IP}:${nodeAgentMetricsPort(mesh)}/readyz`, { signal: AbortSignal.timeout(5000) })).status;

afterAll(async () => {
  for (const { mesh, namespace } of AGENTS) await uninstall(mesh, namespace).catch(() => undefined);
  for (const { namespace } of AGENTS)
    await kubectl(['delete', 'namespace', namespace, '--ignore-not-found', '--wait=false']).catch(() => undefined);
}, 300_000);

describe('two node agents, two meshes, one cluster', () => {
  it('both apply as printed and run Ready, each answering on its own host port', async () => {
    for (const { mesh, namespace } of AGENTS) {
      await kubectl(['delete', 'namespace', namespace, '--ignore-not-found', '--wait=true', '--timeout=120s']);
      const printed = await interlock([
        'manifest',
        '--node-agent',
        '--mesh',
        mesh,
        '--namespace',
        namespace,
        '--image',
        IMAGE,
      ]);
      await kubectl(['apply', '-f', '-'], printed);
    }
    for (const { mesh, namespace } of AGENTS) {
      await kubectl(['rollout', 'status', `daemonset/interlock-node-${mesh}`, '-n', namespace, '--timeout=180s']);
      const ready = await kubectl([
        ...['get', 'daemonset', `interlock-node-${mesh}`, '-n', namespace],
        ...['-o', 'jsonpath={.status.numberReady}/{.status.desiredNumberScheduled}'],
      ]);
      expect(ready, mesh).toMatch(/^([1-9]\d*)\/\1$/);
      expect(await waitFor(`${mesh}'s agent to answer /readyz`, async () => (await readyz(mesh)) === 200, 60_000)).toBe(
        true,
      );
    }
    const bindings = await kubectl([
      'get',
      'clusterrolebinding',
      '-l',
      'app.kubernetes.io/name=interlock-node',
      '-o',
      'json',
    ]);
    const subjects = (
      JSON.parse(bindings) as { items: Array<{ subjects: Array<{ namespace: string }> }> }
    ).items.flatMap((binding) => binding.subjects.map((subject) => subject.namespace));
    for (const { namespace } of AGENTS) expect(subjects).toContain(namespace);
  }, 420_000);

  it('interlock check judges both agents, each by name, and passes them; neither collides', async () => {
    const agentRows = (checks: readonly InstallCheckResult[], agent: string) =>
      checks.filter((check) => check.agent === agent);
    const checks = await waitFor(
      'check to pass both agents',
      async () => {
        const ran = await interlockRun(['check', '-o', 'json']);
        const { checks: all } = JSON.parse(ran.stdout) as { checks: InstallCheckResult[] };
        const judged = AGENTS.map(({ mesh, namespace }) => agentRows(all, `${namespace}/interlock-node-${mesh}`));
        return judged.every((rows) => rows.length > 0 && rows.every((row) => row.status === 'pass')) ? all : undefined;
      },
      120_000,
    );
    for (const { mesh, namespace } of AGENTS)
      expect(
        agentRows(checks, `${namespace}/interlock-node-${mesh}`)
          .map((row) => row.id)
          .sort(),
      ).toEqual(['node-agent.daemonset', 'node-agent.namespace', 'node-agent.nodes', 'node-agent.rbac']);
    expect(checks.find((check) => check.id === 'node-agent.collision')?.status).toBe('pass');
  }, 180_000);

  it("removing one by its install record leaves the other's DaemonSet, RBAC and port working", async () => {
    const [kept, removed] = AGENTS as [(typeof AGENTS)[0], (typeof AGENTS)[0]];
    const out = await uninstall(removed.mesh, removed.namespace);
    expect(out).toMatch(
      new RegExp(`clusterrolebinding.rbac.authorization.k8s.io "interlock-node-${removed.mesh}" deleted`),
    );
    await expect(readyz(removed.mesh)).rejects.toThrow();
    await kubectl(['get', 'clusterrolebinding', `interlock-node-${kept.mesh}`]);
    await kubectl(['get', 'clusterrole', `interlock-node-${kept.mesh}`]);
    await kubectl([
      'rollout',
      'status',
      `daemonset/interlock-node-${kept.mesh}`,
      '-n',
      kept.namespace,
      '--timeout=60s',
    ]);
    expect(await readyz(kept.mesh)).toBe(200);
    // It may still list and watch pods: it is not just alive, it can do its work.
    const may = await kubectl([
      ...['auth', 'can-i', 'watch', 'pods', '--all-namespaces'],
      `--as=system:serviceaccount:${kept.namespace}:interlock-node-${kept.mesh}`,
    ]);
    expect(may.trim()).toBe('yes');
  }, 300_000);
});
