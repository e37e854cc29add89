import { MESHES, type Mesh } from '../mesh/meshes.js';
import { NODE_AGENT_NAME } from '../node-agent/manifest.js';
import { at, list, text } from './json-path.js';
import { valueOf, type AgentFound, type Found, type InstallSnapshot } from './install-snapshot.js';

/**
 * The snapshot as one node agent's checks read it: the cluster's objects, and this agent's
 * namespace, DaemonSet and pods. One agent runs per mesh, so each is judged on its own.
 */
export interface AgentView extends InstallSnapshot {
  readonly daemonSet: Found;
  readonly agentPods: Found;
}

const agentView = (snapshot: InstallSnapshot, agent: AgentFound): AgentView => ({
  ...snapshot,
  nodeNamespace: agent.namespace,
  daemonSet: agent.daemonSet,
  agentPods: agent.pods,
});

/** The agent's DaemonSet's name (`interlock-node-MESH`; `interlock-node` before one ran per mesh). */
export const agentName = (agent: Pick<AgentView, 'daemonSet'>): string =>
  text(at(valueOf(agent.daemonSet), 'metadata', 'name')) ?? NODE_AGENT_NAME;

/** `NAMESPACE/NAME`: how the report and `-o json` tell the agents apart. */
export const agentKey = (agent: Pick<AgentView, 'daemonSet' | 'nodeNamespace'>): string =>
  `${agent.nodeNamespace}/${agentName(agent)}`;

/** The agent's container's args, as its DaemonSet passes them. */
export const agentArgs = (agent: Pick<AgentView, 'daemonSet'>): string[] =>
  list(at(valueOf(agent.daemonSet), 'spec', 'template', 'spec', 'containers', 0, 'args')).map(String);

/** One flag's value in args (`--name=value` or `--name value`). */
export function argValue(args: readonly string[], name: string): string | undefined {
  const index = args.findIndex((arg) => arg === `--${name}` || arg.startsWith(`--${name}=`));
  if (index < 0) return undefined;
  const arg = args[index] ?? '';
  return arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : args[index + 1];
}

/** Every agent of the snapshot, as its checks read it. */
export const agentViews = (snapshot: InstallSnapshot): AgentView[] =>
  snapshot.agents.map((agent) => agentView(snapshot, agent));

/** The mesh the agent was given (`--mesh`), `generic` when none or one no release knows. */
export function agentMesh(args: readonly string[]): Mesh {
  const given = argValue(args, 'mesh');
  return MESHES.find((mesh) => mesh === given) ?? 'generic';
}

/** The ServiceAccount the ClusterRoleBinding `name` binds (its first subject): the agent that keeps the rights. */
export function bindingSubject(
  snapshot: Pick<InstallSnapshot, 'clusterRoleBindings'>,
  name: string,
): { readonly namespace?: string; readonly name?: string } {
  const binding = list(at(valueOf(snapshot.clusterRoleBindings), 'items')).find(
    (item) => text(at(item, 'metadata', 'name')) === name,
  );
  const subject = at(binding, 'subjects', 0);
  const namespace = text(at(subject, 'namespace'));
  const account = text(at(subject, 'name'));
  return { ...(namespace === undefined ? {} : { namespace }), ...(account === undefined ? {} : { name: account }) };
}
