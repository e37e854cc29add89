import type { NodeAction } from '../node-agent/node-action.js';
import { NODE_AGENT_NAME, nodeAgentRules, type NodeGateRights } from '../node-agent/manifest.js';
import { at, count, list, record, text } from './json-path.js';
import { installCheck, type InstallCheckResult } from './install-check-result.js';
import { podSelector, valueOf, type InstallSnapshot } from './install-snapshot.js';
import { unreadable } from './webhook-checks.js';
import { agentInstall, agentMeshCheck, agentReinstall } from './agent-mesh-check.js';
import { agentArgs, agentKey, agentName, agentViews, argValue, bindingSubject, type AgentView } from './agent-view.js';
import { agentCollisionCheck } from './agent-collision-check.js';
import { meshConditionCheck } from './mesh-condition-check.js';

/** The line that prints the agent again: with the mesh, namespace and image its DaemonSet runs, when there is one. */
function reinstall(snapshot: AgentView): string {
  if (valueOf(snapshot.daemonSet) === undefined) return agentInstall(snapshot);
  return agentReinstall(snapshot);
}

/** The ServiceAccount its pods run as. */
const agentAccount = (snapshot: AgentView): string =>
  text(at(valueOf(snapshot.daemonSet), 'spec', 'template', 'spec', 'serviceAccountName')) ?? agentName(snapshot);

export function nodeAgentInstalled(snapshot: InstallSnapshot): boolean {
  return snapshot.agents.length > 0;
}

/**
 * Each agent's checks (one runs per mesh), each result naming its agent; then, once for the
 * cluster, whether some agent watches every validator the pods run and whether two collide.
 */
export function nodeAgentChecks(snapshot: InstallSnapshot): InstallCheckResult[] {
  if (!nodeAgentInstalled(snapshot))
    return [
      installCheck(
        'node-agent',
        'installed',
        'skip',
        `not installed (no DaemonSet labelled app.kubernetes.io/name=${NODE_AGENT_NAME} ${snapshot.agentScope})`,
        agentInstall(snapshot),
      ),
    ];
  const cluster = [agentMeshCheck(snapshot), agentCollisionCheck(snapshot)];
  return [
    ...agentViews(snapshot).flatMap((agent) =>
      oneAgentChecks(agent).map((result) => ({ ...result, agent: agentKey(agent) })),
    ),
    ...cluster.filter((result): result is InstallCheckResult => result !== undefined),
  ];
}

function oneAgentChecks(snapshot: AgentView): InstallCheckResult[] {
  const checks = [namespaceCheck(snapshot), daemonSetCheck(snapshot), everyNodeCheck(snapshot), rbacCheck(snapshot)];
  // The node gate's condition, per node, when the agents report it.
  return agentMode(snapshot).gate.condition ? [...checks, meshConditionCheck(snapshot)] : checks;
}

function namespaceCheck(snapshot: AgentView): InstallCheckResult {
  const name = snapshot.nodeNamespace;
  const namespace = list(at(valueOf(snapshot.namespaces), 'items')).find(
    (item) => text(at(item, 'metadata', 'name')) === name,
  );
  if (snapshot.namespaces.state !== 'found')
    return unreadable('node-agent', 'namespace', 'the namespaces', snapshot.namespaces);
  if (!namespace)
    return installCheck('node-agent', 'namespace', 'fail', `Namespace ${name} does not exist`, reinstall(snapshot));
  const enforce = record(at(namespace, 'metadata', 'labels'))['pod-security.kubernetes.io/enforce'];
  if (enforce !== undefined && enforce !== 'privileged')
    return installCheck(
      'node-agent',
      'namespace',
      'fail',
      `Namespace ${name} enforces PodSecurity ${enforce}: it refuses the agent's host-network pods`,
      `kubectl label namespace ${name} pod-security.kubernetes.io/enforce=privileged --overwrite`,
    );
  return installCheck(
    'node-agent',
    'namespace',
    'pass',
    `Namespace ${name} admits the agent (PodSecurity ${enforce ?? 'not enforced'})`,
  );
}

function daemonSetCheck(snapshot: AgentView): InstallCheckResult {
  const name = `DaemonSet ${snapshot.nodeNamespace}/${agentName(snapshot)}`;
  const found = snapshot.daemonSet;
  if (found.state !== 'found') return unreadable('node-agent', 'daemonset', name, found);
  const desired = count(at(found.value, 'status', 'desiredNumberScheduled'));
  const ready = count(at(found.value, 'status', 'numberReady'));
  const summary = `${name}: ${ready} of ${desired} scheduled pods ready`;
  if (desired > 0 && ready >= desired) return installCheck('node-agent', 'daemonset', 'pass', summary);
  return installCheck(
    'node-agent',
    'daemonset',
    'fail',
    summary,
    `kubectl -n ${snapshot.nodeNamespace} describe daemonset ${agentName(snapshot)}`,
  );
}

const isReady = (pod: unknown): boolean =>
  list(at(pod, 'status', 'conditions')).some(
    (condition) => at(condition, 'type') === 'Ready' && at(condition, 'status') === 'True',
  );

/** Every node, by name, must run a ready agent pod: the agent protects only the node it runs on. */
function everyNodeCheck(snapshot: AgentView): InstallCheckResult {
  if (snapshot.nodes.state !== 'found') return unreadable('node-agent', 'nodes', 'the nodes', snapshot.nodes);
  if (snapshot.agentPods.state !== 'found')
    return unreadable('node-agent', 'nodes', "the agent's pods", snapshot.agentPods);
  const nodes = list(at(snapshot.nodes.value, 'items')).map((node) => text(at(node, 'metadata', 'name')) ?? '');
  const covered = new Set(
    list(at(snapshot.agentPods.value, 'items'))
      .filter(isReady)
      .map((pod) => text(at(pod, 'spec', 'nodeName'))),
  );
  const missing = nodes.filter((node) => !covered.has(node));
  if (nodes.length === 0) return installCheck('node-agent', 'nodes', 'warn', 'the cluster lists no node');
  if (missing.length === 0)
    return installCheck('node-agent', 'nodes', 'pass', `a ready agent runs on each of the ${nodes.length} nodes`);
  const named =
    missing.length > 5 ? `${missing.slice(0, 5).join(', ')} and ${missing.length - 5} more` : missing.join(', ');
  return installCheck(
    'node-agent',
    'nodes',
    'fail',
    `no ready agent on ${missing.length} of ${nodes.length} nodes: ${named}; pods failed there are not recreated`,
    `kubectl -n ${snapshot.nodeNamespace} get pods -o wide -l ${podSelector(snapshot.daemonSet)}; check the nodes' taints against the DaemonSet's tolerations`,
  );
}

/** The agent's `--action`, `--taint` and node gate, as its DaemonSet passes them. */
function agentMode(snapshot: AgentView): { action: NodeAction; taint: boolean; gate: NodeGateRights } {
  const args = agentArgs(snapshot);
  const action = argValue(args, 'action');
  return {
    action: action === 'none' || action === 'label' ? action : 'delete',
    taint: args.includes('--taint'),
    gate: {
      condition: args.includes('--report-condition'),
      startupTaint: argValue(args, 'startup-taint')?.split(':')[0],
    },
  };
}

const covers = (granted: readonly string[], wanted: string) => granted.includes('*') || granted.includes(wanted);

/** The verbs the agent needs, against the ClusterRoles bound to its ServiceAccount. */
function rbacCheck(snapshot: AgentView): InstallCheckResult {
  if (snapshot.clusterRoleBindings.state !== 'found')
    return unreadable('node-agent', 'rbac', 'the ClusterRoleBindings', snapshot.clusterRoleBindings);
  if (snapshot.clusterRoles.state !== 'found')
    return unreadable('node-agent', 'rbac', 'the ClusterRoles', snapshot.clusterRoles);
  const account = `${snapshot.nodeNamespace}/${agentAccount(snapshot)}`;
  const bound = list(at(snapshot.clusterRoleBindings.value, 'items'))
    .filter((binding) =>
      list(at(binding, 'subjects')).some(
        (subject) =>
          at(subject, 'kind') === 'ServiceAccount' &&
          `${text(at(subject, 'namespace'))}/${text(at(subject, 'name'))}` === account,
      ),
    )
    .map((binding) => text(at(binding, 'roleRef', 'name')));
  const rules = list(at(snapshot.clusterRoles.value, 'items'))
    .filter((role) => bound.includes(text(at(role, 'metadata', 'name'))))
    .flatMap((role) => list(at(role, 'rules')));
  const { action, taint, gate } = agentMode(snapshot);
  const missing = nodeAgentRules(action, taint, false, gate).flatMap((needed) =>
    needed.verbs.flatMap((verb) =>
      needed.resources
        .filter(
          (resource) =>
            !rules.some(
              (rule) =>
                covers(list(at(rule, 'apiGroups')).map(String), needed.apiGroups[0] ?? '') &&
                covers(list(at(rule, 'resources')).map(String), resource) &&
                covers(list(at(rule, 'verbs')).map(String), verb),
            ),
        )
        .map((resource) => `${verb} ${resource}`),
    ),
  );
  const mode = `--action=${action}${taint ? ' --taint' : ''}${gate.condition ? ' --report-condition' : ''}${gate.startupTaint ? ' --startup-taint' : ''}`;
  if (missing.length === 0)
    return installCheck('node-agent', 'rbac', 'pass', `ServiceAccount ${account} may do all that ${mode} needs`);
  const taken = bindingTakenBy(snapshot);
  const why = taken === undefined ? '' : `: its ClusterRoleBinding ${agentName(snapshot)} names ${taken} instead`;
  return installCheck(
    'node-agent',
    'rbac',
    'fail',
    `ServiceAccount ${account} may not ${missing.join(', ')}, which ${mode} needs${why}`,
    // Its ClusterRole has exactly these verbs: printed again with the same flags, it has them again.
    taken === undefined
      ? agentReinstall(snapshot)
      : 'keep one agent per mesh: node-agent.collision says which to remove',
  );
}

/**
 * The ServiceAccount the agent's own ClusterRoleBinding names when it is not this agent's: another
 * agent of the same mesh, in another namespace, applied after it took the binding.
 */
function bindingTakenBy(snapshot: AgentView): string | undefined {
  const subject = bindingSubject(snapshot, agentName(snapshot));
  if (subject.namespace === undefined || subject.namespace === snapshot.nodeNamespace) return undefined;
  return `ServiceAccount ${subject.namespace}/${subject.name ?? ''}`;
}
