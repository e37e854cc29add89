import { at, list, text } from './json-path.js';
import { installCheck, type InstallCheckResult } from './install-check-result.js';
import { valueOf, type InstallSnapshot } from './install-snapshot.js';
import { agentReinstall } from './agent-mesh-check.js';
import { agentName, agentViews, type AgentView } from './agent-view.js';

/** The port an agent's pod takes on the host network (its container's first port). */
const hostPort = (agent: AgentView): number | undefined => {
  const port = at(valueOf(agent.daemonSet), 'spec', 'template', 'spec', 'containers', 0, 'ports', 0, 'containerPort');
  return typeof port === 'number' ? port : undefined;
};

/** The namespace whose ServiceAccount the agent's ClusterRoleBinding names: the one that keeps its rights. */
function boundNamespace(snapshot: InstallSnapshot, name: string): string | undefined {
  const binding = list(at(valueOf(snapshot.clusterRoleBindings), 'items')).find(
    (item) => text(at(item, 'metadata', 'name')) === name,
  );
  return text(at(binding, 'subjects', 0, 'namespace'));
}

/**
 * Two agents of one mesh in two namespaces share what is named by the mesh alone: the ClusterRole,
 * its binding (which names one ServiceAccount, so the other agent loses its rights) and the
 * admission policy; and, on the host network, the mesh's port (the second's pods cannot start on
 * a node the first runs on). One mesh, one agent: the fix removes the one the binding no longer names.
 */
export function agentCollisionCheck(snapshot: InstallSnapshot): InstallCheckResult | undefined {
  const agents = agentViews(snapshot).filter((agent) => agent.daemonSet.state === 'found');
  const byName = new Map<string, AgentView[]>();
  for (const agent of agents) byName.set(agentName(agent), [...(byName.get(agentName(agent)) ?? []), agent]);
  const collisions = [...byName].filter(([, same]) => new Set(same.map((a) => a.nodeNamespace)).size > 1);
  if (agents.length < 2) return undefined;
  if (collisions.length === 0)
    return installCheck(
      'node-agent',
      'collision',
      'pass',
      `${agents.length} agents, one per mesh: none shares another's objects`,
    );
  const sentences = collisions.map(([name, same]) => {
    const namespaces = same.map((agent) => agent.nodeNamespace);
    const port = hostPort(same[0]!);
    return `${same.length} agents ${name}, in ${namespaces.slice(0, -1).join(', ')} and ${namespaces.at(-1)}, share the ClusterRole and ClusterRoleBinding ${name}, the ValidatingAdmissionPolicy ${name}-own-node-pods${port === undefined ? '' : ` and host port ${port}`}: the binding names one ServiceAccount, and one agent's pods cannot start where the other's run`;
  });
  const fixes = collisions.map(([name, same]) => {
    const bound = boundNamespace(snapshot, name);
    const kept = same.find((agent) => agent.nodeNamespace === bound) ?? same[0]!;
    const removed = same.filter((agent) => agent !== kept).map((agent) => agent.nodeNamespace);
    const mesh = name.replace(/^interlock-node-/, '');
    return [
      ...removed.map(
        (namespace) =>
          `kubectl -n ${namespace} delete daemonset,serviceaccount,resourcequota -l app.kubernetes.io/instance=${name} && kubectl -n ${namespace} delete configmap --ignore-not-found interlock-install-node-agent-${mesh}`,
      ),
      agentReinstall(kept),
    ].join(' && ');
  });
  return installCheck('node-agent', 'collision', 'fail', sentences.join('; '), fixes.join('; '));
}
