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
