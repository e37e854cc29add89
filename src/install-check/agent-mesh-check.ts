import { DEFAULT_IMAGE } from '../inject/validator-container.js';
import { meshIdentity, meshOfContainer, MESHES } from '../mesh/meshes.js';
import type { Mesh } from '../config/interception.js';
import { at, list, text } from './json-path.js';
import { installCheck, type InstallCheckResult } from './install-check-result.js';
import { MESH_POD_PAGE, valueOf, type InstallSnapshot } from './install-snapshot.js';
import { unreadable } from './webhook-checks.js';

/** The agent's `--mesh` and the init container it watches (`--container-name`, else the mesh's validator). */
function agentWatch(args: readonly string[]): { mesh: Mesh; container: string } {
  const value = (name: string): string | undefined => {
    const index = args.findIndex((arg) => arg === `--${name}` || arg.startsWith(`--${name}=`));
    if (index < 0) return undefined;
    const arg = args[index] ?? '';
    return arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : args[index + 1];
  };
  const given = value('mesh');
  const mesh = MESHES.find((name) => name === given) ?? 'generic';
  return { mesh, container: value('container-name') ?? meshIdentity(mesh).containers.validator };
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

const named = (pods: readonly string[]): string =>
  pods.length > 3 ? `${pods.slice(0, 3).join(', ')} and ${pods.length - 3} more` : pods.join(', ');

/**
 * The mesh the agent watches against the validators the pods run: an agent of another mesh (or
 * generic) ignores their failures, and its DaemonSet is ready all the same.
 */
/** What manifest --node-agent derives itself (the mesh given apart, its port, the trusted image): never given back. */
const DERIVED = /^--(mesh|listen|trusted-image)(=|$)/;

/**
 * The line that prints the agent again as its DaemonSet runs it: its namespace, image and every
 * node flag it was given, for `mesh` (by default the one it watches).
 */
export function agentReinstall(snapshot: InstallSnapshot, mesh?: string): string {
  const container = at(valueOf(snapshot.daemonSet), 'spec', 'template', 'spec', 'containers', 0);
  const args = list(at(container, 'args')).map(String);
  const image = text(at(container, 'image')) ?? DEFAULT_IMAGE;
  const flags = args.filter((arg) => arg !== 'node' && !DERIVED.test(arg));
  return [
    'interlock manifest --node-agent',
    `--mesh ${mesh ?? agentWatch(args).mesh}`,
    `--namespace ${snapshot.nodeNamespace}`,
    `--image ${image}`,
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

export function agentMeshCheck(snapshot: InstallSnapshot): InstallCheckResult | undefined {
  const pods = snapshot.meshPods;
  if (pods === undefined) return undefined;
  if (pods.state !== 'found') return unreadable('node-agent', 'mesh', 'the pods (for their validators)', pods);
  const daemonSet = valueOf(snapshot.daemonSet);
  const args = list(at(daemonSet, 'spec', 'template', 'spec', 'containers', 0, 'args')).map(String);
  const watch = agentWatch(args);
  const found = validatorPods(pods.value);
  const partial = text(at(pods.value, 'metadata', 'continue')) ? ` (of the first ${MESH_POD_PAGE} pods)` : '';
  const watching = `the agent watches ${watch.container} (--mesh ${watch.mesh})`;
  if (found.size === 0)
    return installCheck(
      'node-agent',
      'mesh',
      watch.mesh === 'generic' ? 'warn' : 'pass',
      `no pod runs a mesh's validator yet${partial}; ${watching}`,
    );
  const ignored = [...found].filter(([container]) => container !== watch.container);
  if (ignored.length === 0)
    return installCheck(
      'node-agent',
      'mesh',
      'pass',
      `${watching}, which ${found.get(watch.container)?.length ?? 0} pods run${partial}`,
    );
  const lines = ignored.map(
    ([container, where]) =>
      `${where.length} pods run ${container} (${meshOfContainer(container) ?? 'generic'}): ${named(where)}`,
  );
  const wanted = meshOfContainer(ignored[0]?.[0] ?? '') ?? 'generic';
  return installCheck(
    'node-agent',
    'mesh',
    'fail',
    `${watching}, but ${lines.join('; ')}${partial}; their validators' failures are ignored and the pods are never recreated`,
    agentReinstall(snapshot, wanted),
  );
}
