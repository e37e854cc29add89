import type { NodeAction } from '../node-agent/node-action.js';
import { NODE_AGENT_NAME, nodeAgentRules, type NodeGateRights } from '../node-agent/manifest.js';
import { MESH_CONDITION } from '../node-agent/node-gate.js';
import { at, count, list, record, text } from './json-path.js';
import { installCheck, type InstallCheckResult } from './install-check-result.js';
import { podSelector, valueOf, type InstallSnapshot } from './install-snapshot.js';
import { unreadable } from './webhook-checks.js';
import { agentInstall, agentMeshCheck, agentReinstall } from './agent-mesh-check.js';

/** The line that prints the agent again: with the mesh, namespace and image its DaemonSet runs, when there is one. */
function reinstall(snapshot: InstallSnapshot): string {
  if (valueOf(snapshot.daemonSet) === undefined) return agentInstall(snapshot);
  return agentReinstall(snapshot);
}

/** The agent's DaemonSet's name (`interlock-node-MESH`; `interlock-node` before one ran per mesh). */
const agentName = (snapshot: InstallSnapshot): string =>
  text(at(valueOf(snapshot.daemonSet), 'metadata', 'name')) ?? NODE_AGENT_NAME;

/** The ServiceAccount its pods run as. */
const agentAccount = (snapshot: InstallSnapshot): string =>
  text(at(valueOf(snapshot.daemonSet), 'spec', 'template', 'spec', 'serviceAccountName')) ?? agentName(snapshot);

export function nodeAgentInstalled(snapshot: InstallSnapshot): boolean {
  return snapshot.daemonSet.state !== 'absent';
}

export function nodeAgentChecks(snapshot: InstallSnapshot): InstallCheckResult[] {
  if (!nodeAgentInstalled(snapshot))
    return [
      installCheck(
        'node-agent',
        'installed',
        'skip',
        `not installed (no DaemonSet labelled app.kubernetes.io/name=${NODE_AGENT_NAME} in ${snapshot.nodeNamespace})`,
        reinstall(snapshot),
      ),
    ];
  const mesh = agentMeshCheck(snapshot);
  const checks = [
    namespaceCheck(snapshot),
    daemonSetCheck(snapshot),
    everyNodeCheck(snapshot),
    rbacCheck(snapshot),
    ...(mesh ? [mesh] : []),
  ];
  // The node gate's condition, per node, when the agents report it.
  return agentMode(snapshot).gate.condition ? [...checks, meshConditionCheck(snapshot)] : checks;
}

function namespaceCheck(snapshot: InstallSnapshot): InstallCheckResult {
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

function daemonSetCheck(snapshot: InstallSnapshot): InstallCheckResult {
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
function everyNodeCheck(snapshot: InstallSnapshot): InstallCheckResult {
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
function agentMode(snapshot: InstallSnapshot): { action: NodeAction; taint: boolean; gate: NodeGateRights } {
  const args = list(at(valueOf(snapshot.daemonSet), 'spec', 'template', 'spec', 'containers', 0, 'args')).map(String);
  const argValue = (name: string): string | undefined => {
    const index = args.findIndex((arg) => arg === `--${name}` || arg.startsWith(`--${name}=`));
    if (index < 0) return undefined;
    const arg = args[index] ?? '';
    return arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : args[index + 1];
  };
  const action = argValue('action');
  return {
    action: action === 'none' || action === 'label' ? action : 'delete',
    taint: args.includes('--taint'),
    gate: { condition: args.includes('--report-condition'), startupTaint: argValue('startup-taint')?.split(':')[0] },
  };
}

/** `interlock.dev/MeshCNIReady` on each node, as the agents report it (`--report-condition`). */
function meshConditionCheck(snapshot: InstallSnapshot): InstallCheckResult {
  if (snapshot.nodes.state !== 'found') return unreadable('node-agent', 'condition', 'the nodes', snapshot.nodes);
  const rows = list(at(snapshot.nodes.value, 'items')).map((node) => {
    const name = text(at(node, 'metadata', 'name')) ?? '';
    const condition = list(at(node, 'status', 'conditions')).find((item) => at(item, 'type') === MESH_CONDITION);
    const status = text(at(condition, 'status'));
    return {
      name,
      status,
      line: status ? `${name} ${status} (${text(at(condition, 'reason')) ?? ''})` : `${name} not reported`,
    };
  });
  const ready = rows.filter((row) => row.status === 'True');
  if (rows.length === 0) return installCheck('node-agent', 'condition', 'warn', 'the cluster lists no node');
  const bad = rows.filter((row) => row.status !== 'True');
  const shown = [...bad, ...ready].slice(0, 10).map((row) => row.line);
  const more = rows.length > 10 ? ` and ${rows.length - 10} more` : '';
  const message = `${MESH_CONDITION}: ${shown.join(', ')}${more}`;
  if (bad.length === 0) return installCheck('node-agent', 'condition', 'pass', message);
  return installCheck(
    'node-agent',
    'condition',
    'fail',
    message,
    `kubectl describe node ${bad
      .slice(0, 10)
      .map((row) => row.name)
      .join(' ')}  # the condition's message names the cause; the agent's Events say more`,
  );
}

const covers = (granted: readonly string[], wanted: string) => granted.includes('*') || granted.includes(wanted);

/** The verbs the agent needs, against the ClusterRoles bound to its ServiceAccount. */
function rbacCheck(snapshot: InstallSnapshot): InstallCheckResult {
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
  return installCheck(
    'node-agent',
    'rbac',
    'fail',
    `ServiceAccount ${account} may not ${missing.join(', ')}, which ${mode} needs`,
    `re-apply the node agent's manifest with the same flags (its ClusterRole ${agentName(snapshot)} has exactly these verbs)`,
  );
}
