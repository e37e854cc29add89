import { DEFAULT_IMAGE } from '../inject/validator-container.js';
import { meshIdentity, meshOfContainer, MESHES } from '../mesh/meshes.js';
import type { Mesh } from '../config/interception.js';
import { at, list, text } from './json-path.js';
import { installCheck, type InstallCheckResult } from './install-check-result.js';
import { MESH_POD_PAGE, valueOf, type InstallSnapshot } from './install-snapshot.js';
import { agentArgs, agentKey, agentMesh, agentViews, argValue, type AgentView } from './agent-view.js';
import { unreadable } from './webhook-checks.js';

/** The agent's `--mesh` and the init container it watches (`--container-name`, else the mesh's validator). */
function agentWatch(args: readonly string[]): { mesh: Mesh; container: string } {
  const mesh = agentMesh(args);
  return { mesh, container: argValue(args, 'container-name') ?? meshIdentity(mesh).containers.validator };
}

/** A mesh's validator init container (not its rules writer, istio-init or linkerd-init). */
function isValidator(name: string | undefined): name is string {
  const mesh = name === undefined ? undefined : meshOfContainer(name);
  return mesh !== undefined && meshIdentity(mesh).containers.validator === name;
}

/** The pods running a mesh's validator, by the init container's name (`namespace/name` each). */
function validatorPods(pods: unknown): Map<string, string[]> {
  const byContainer = new Map<string, string[]>();
  for (const pod of list(at(pods, 'items'))) {
    const where = `${text(at(pod, 'metadata', 'namespace')) ?? ''}/${text(at(pod, 'metadata', 'name')) ?? ''}`;
    for (const container of list(at(pod, 'spec', 'initContainers'))) {
      const name = text(at(container, 'name'));
      if (!isValidator(name)) continue;
      byContainer.set(name, [...(byContainer.get(name) ?? []), where]);
    }
  }
  return byContainer;
}

/** Whether args[i] is the flag `pattern` matches, or the value after it (`--flag value`). */
function named(args: readonly string[], i: number, pattern: RegExp | undefined): boolean {
  if (pattern === undefined) return false;
  const arg = args[i] ?? '';
  const before = args[i - 1] ?? '';
  return pattern.test(arg) || (!before.includes('=') && pattern.test(before) && !arg.startsWith('--'));
}

const podList = (pods: readonly string[]): string =>
  pods.length > 3 ? `${pods.slice(0, 3).join(', ')} and ${pods.length - 3} more` : pods.join(', ');

/** What manifest --node-agent derives itself (the mesh given apart, its port, the trusted image): never given back. */
const DERIVED = /^--(mesh|listen|trusted-image)(=|$)/;

/**
 * The line that prints the agent again as its DaemonSet runs it: its namespace, image and every
 * node flag it was given, for `mesh` (by default the one it watches).
 */
export function agentReinstall(snapshot: Pick<AgentView, 'daemonSet' | 'nodeNamespace'>, mesh?: Mesh): string {
  const args = agentArgs(snapshot);
  const image = text(at(valueOf(snapshot.daemonSet), 'spec', 'template', 'spec', 'containers', 0, 'image'));
  const own = agentWatch(args).mesh;
  // Another mesh's agent watches that mesh's validator, not the container this one was told to.
  const other = mesh !== undefined && mesh !== own ? /^--container-name(=|$)/ : undefined;
  const flags = args.filter((arg, i) => arg !== 'node' && !named(args, i, DERIVED) && !named(args, i, other));
  return [
    'interlock manifest --node-agent',
    `--mesh ${mesh ?? own}`,
    `--namespace ${snapshot.nodeNamespace}`,
    `--image ${image ?? DEFAULT_IMAGE}`,
    ...flags,
    '| kubectl apply -f -',
  ].join(' ');
}

/**
 * What installs the agent where none runs: one per mesh whose validators the pods run, with the
 * default image unless `check --image` named one; with no meshed pod yet, the choice of mesh is
 * the operator's, named in a comment.
 */
export function agentInstall(snapshot: InstallSnapshot): string {
  const image = snapshot.dataPlane?.image ?? DEFAULT_IMAGE;
  const line = (mesh: string) =>
    `interlock manifest --node-agent --mesh ${mesh} --namespace ${snapshot.nodeNamespace} --image ${image} | kubectl apply -f -`;
  const pods = snapshot.meshPods?.state === 'found' ? snapshot.meshPods.value : undefined;
  const meshes = [...new Set([...validatorPods(pods).keys()].map((container) => meshOfContainer(container)))];
  const known = meshes.filter((mesh): mesh is Mesh => mesh !== undefined);
  if (known.length > 0) return known.map(line).join('; ');
  return `# no pod runs a mesh's validator yet; for your mesh: ${line(MESHES.join('|'))}`;
}

/**
 * The validators the pods run against the meshes the agents watch, once for the cluster: a
 * validator no agent watches fails its pods unseen (an agent of another mesh, or generic, ignores
 * them while its DaemonSet is ready all the same); the fix installs the missing mesh's agent.
 */
export function agentMeshCheck(snapshot: InstallSnapshot): InstallCheckResult | undefined {
  const pods = snapshot.meshPods;
  if (pods === undefined) return undefined;
  if (pods.state !== 'found') return unreadable('node-agent', 'mesh', 'the pods (for their validators)', pods);
  const agents = agentViews(snapshot);
  const watches = agents.map((agent) => ({ agent, ...agentWatch(agentArgs(agent)) }));
  const found = validatorPods(pods.value);
  const partial = text(at(pods.value, 'metadata', 'continue')) ? ` (of the first ${MESH_POD_PAGE} pods)` : '';
  const watching = `${watches.length === 1 ? 'the agent watches' : 'the agents watch'} ${watches
    .map((watch) => `${watch.container} (--mesh ${watch.mesh}, ${agentKey(watch.agent)})`)
    .join(', ')}`;
  if (found.size === 0) {
    const status = watches.every((watch) => watch.mesh === 'generic') ? 'warn' : 'pass';
    return installCheck('node-agent', 'mesh', status, `no pod runs a mesh's validator yet${partial}; ${watching}`);
  }
  const watched = new Set(watches.map((watch) => watch.container));
  const ignored = [...found].filter(([container]) => !watched.has(container));
  if (ignored.length === 0) {
    const counts = [...found].map(([container, where]) => `${where.length} pods run ${container}`).join(', ');
    return installCheck('node-agent', 'mesh', 'pass', `${watching}; ${counts}${partial}`);
  }
  const lines = ignored.map(
    ([container, where]) =>
      `no agent ${snapshot.agentScope} watches ${container}: ${where.length} pods run it (${meshOfContainer(container) ?? 'generic'}): ${podList(where)}`,
  );
  const wanted = [...new Set(ignored.flatMap(([container]) => meshOfContainer(container) ?? []))];
  const first = agents[0];
  const fix = wanted.map((mesh) => (first ? agentReinstall(first, mesh) : '')).join('; ');
  return installCheck(
    'node-agent',
    'mesh',
    'fail',
    `${watching}; ${lines.join('; ')}${partial}: their validators' failures are ignored and the pods are never recreated`,
    fix,
  );
}
