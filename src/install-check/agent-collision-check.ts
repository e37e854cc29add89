import { NODE_AGENT_NAME, nodeAgentMetricsPort } from '../node-agent/manifest.js';
import { at } from './json-path.js';
import { installCheck, type InstallCheckResult } from './install-check-result.js';
import { valueOf, type InstallSnapshot } from './install-snapshot.js';
import { agentReinstall } from './agent-mesh-check.js';
import { agentArgs, agentKey, agentMesh, agentName, agentViews, bindingSubject, type AgentView } from './agent-view.js';

/** The port an agent's pod takes on the host network (its container's first port). */
const hostPort = (agent: AgentView): number | undefined => {
  const port = at(valueOf(agent.daemonSet), 'spec', 'template', 'spec', 'containers', 0, 'ports', 0, 'containerPort');
  return typeof port === 'number' ? port : undefined;
};

/** The port of the agent's mesh, which it listens on unless told another (`--listen`). */
const ownPort = (agent: AgentView): number => nodeAgentMetricsPort(agentMesh(agentArgs(agent)));

/** What collides, and the line that ends it. */
interface Collision {
  readonly sentence: string;
  readonly fix: string;
}

const groupBy = (agents: readonly AgentView[], key: (agent: AgentView) => string | undefined) => {
  const groups = new Map<string, AgentView[]>();
  for (const agent of agents) {
    const value = key(agent);
    if (value !== undefined) groups.set(value, [...(groups.get(value) ?? []), agent]);
  }
  return [...groups];
};

const and = (words: readonly string[]) => `${words.slice(0, -1).join(', ')} and ${words.at(-1) ?? ''}`;

/**
 * Two agents of one mesh in two namespaces share what is named by the mesh alone: the ClusterRole,
 * its binding (which names one ServiceAccount, so the other agent loses its rights) and the
 * admission policy; and, on the host network, the mesh's port (the second's pods cannot start on
 * a node the first runs on). One mesh, one agent: the fix removes the one the binding no longer names.
 */
function sameMesh(snapshot: InstallSnapshot, agents: readonly AgentView[]): Collision[] {
  const collisions = groupBy(agents, agentName).filter(([, same]) => same.length > 1);
  return collisions.map(([name, same]) => {
    const port = hostPort(same[0]!);
    const bound = bindingSubject(snapshot, name).namespace;
    const kept = same.find((agent) => agent.nodeNamespace === bound) ?? same[0]!;
    const removed = same.filter((agent) => agent !== kept).map((agent) => agent.nodeNamespace);
    // Its install record: `interlock-install-node-agent-MESH` (the single-agent release's had no mesh).
    const record = `interlock-install-node-agent${name.slice(NODE_AGENT_NAME.length)}`;
    const fix = [
      ...removed.map(
        (namespace) =>
          `kubectl -n ${namespace} delete daemonset,serviceaccount,resourcequota -l app.kubernetes.io/instance=${name} && kubectl -n ${namespace} delete configmap --ignore-not-found ${record}`,
      ),
      agentReinstall(kept),
    ].join(' && ');
    const sentence = `${same.length} agents ${name}, in ${and(same.map((agent) => agent.nodeNamespace))}, share the ClusterRole and ClusterRoleBinding ${name}, the ValidatingAdmissionPolicy ${name}-own-node-pods${port === undefined ? '' : ` and host port ${port}`}: the binding names one ServiceAccount, and one agent's pods cannot start where the other's run`;
    return { sentence, fix };
  });
}

/**
 * Agents of different meshes on one host port (a `--listen` given): the second's pods cannot
 * start on a node the first runs on. Printed again without it, each takes its mesh's own port.
 */
function samePort(agents: readonly AgentView[]): Collision[] {
  const collisions = groupBy(agents, (agent) => String(hostPort(agent) ?? '')).filter(
    ([port, same]) => port !== '' && new Set(same.map(agentName)).size > 1,
  );
  return collisions.map(([port, same]) => ({
    sentence: `agents ${and(same.map(agentKey))} listen on host port ${port}: one's pods cannot start on a node where the other's run`,
    fix: same
      .filter((agent) => hostPort(agent) !== ownPort(agent))
      .map((agent) => agentReinstall(agent))
      .join(' && '),
  }));
}

/** Whether two agents share what only one can have: their mesh's cluster-wide objects, or a host port. */
export function agentCollisionCheck(snapshot: InstallSnapshot): InstallCheckResult | undefined {
  const agents = agentViews(snapshot).filter((agent) => agent.daemonSet.state === 'found');
  if (agents.length < 2) return undefined;
  const collisions = [...sameMesh(snapshot, agents), ...samePort(agents)];
  if (collisions.length === 0)
    return installCheck(
      'node-agent',
      'collision',
      'pass',
      `${agents.length} agents, one per mesh, each on its own host port: none shares another's objects`,
    );
  const sentences = collisions.map((collision) => collision.sentence).join('; ');
  return installCheck('node-agent', 'collision', 'fail', sentences, collisions.map((c) => c.fix).join('; '));
}
