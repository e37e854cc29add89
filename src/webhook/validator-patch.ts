import { compatModeOf, type CompatMode } from '../compat/compat-argv.js';
import { LINKERD_VALIDATOR_PATH } from '../compat/drop-in-programs.js';
import { memoryLimitNote, memoryLimitTooLow, VALIDATOR_RESOURCES } from '../inject/resources.js';
import { podIdentityEnv } from '../inject/validator-container.js';
import { isRecord, pointerSegment, sameJson, type JsonPatchOp } from './json-patch.js';
import { PODINFO, podinfoEnv, podinfoMount, podinfoVolume } from './podinfo.js';

/** The mesh validators Interlock takes the place of, by the container name their repair controllers watch. */
const MESH_VALIDATORS: Readonly<Record<string, CompatMode>> = {
  'linkerd-network-validator': 'linkerd',
  'istio-validation': 'istio',
};

/**
 * The command per drop-in mode, as Interlock's image runs it (image/Dockerfile): Linkerd's path is
 * the image's shim into Interlock's Linkerd mode; Istio's has no command, so the image's
 * entrypoint (`interlock validate`) reads the `istio-iptables ...` args. These are also the only
 * commands the node agent trusts a validator's failure from (docs/node-agent.md, trust boundary).
 * The mesh's args follow unchanged and src/compat maps them.
 */
export const DROP_IN_COMMAND: Readonly<Record<CompatMode, readonly string[] | undefined>> = {
  linkerd: [LINKERD_VALIDATOR_PATH],
  istio: undefined,
};

export interface PatchSettings {
  /** Interlock's image, the validator's new image. */
  readonly image: string;
  /** Annotations set on every patched pod (the node agent's trust annotation). */
  readonly annotations: Readonly<Record<string, string>>;
}

/** What the builder decided for one validator container, for logs and metrics. */
export interface ContainerDecision {
  readonly index: number;
  readonly name: string;
  readonly outcome: 'patched' | 'unchanged' | 'unrecognised';
}

export interface PodPatch {
  readonly ops: JsonPatchOp[];
  readonly containers: ContainerDecision[];
  /** Said back to the API server (AdmissionResponse warnings): a mesh memory limit the patch raised. */
  readonly warnings: string[];
}

/**
 * The JSON Patch that puts Interlock in place of every mesh validator of a pod: image, command,
 * env, the podinfo mount, resources and terminationMessagePolicy; name, position, args and
 * securityContext stay. Only what differs is written, so a pod already patched gives no op.
 */
export function podPatch(pod: unknown, settings: PatchSettings): PodPatch {
  const spec = isRecord(pod) && isRecord(pod.spec) ? pod.spec : {};
  const inits = Array.isArray(spec.initContainers) ? spec.initContainers : [];
  const ops: JsonPatchOp[] = [];
  const containers: ContainerDecision[] = [];
  const warnings: string[] = [];
  inits.forEach((container: unknown, index) => {
    if (!isRecord(container) || typeof container.name !== 'string') return;
    const mesh = MESH_VALIDATORS[container.name];
    if (mesh === undefined) return;
    const mode = dropInMode(container);
    if (mode !== mesh) {
      containers.push({ index, name: container.name, outcome: 'unrecognised' });
      return;
    }
    const containerOps = containerPatch(container, `/spec/initContainers/${index}`, mode, settings);
    containers.push({ index, name: container.name, outcome: containerOps.length ? 'patched' : 'unchanged' });
    // Guard the index: if the list moved under us, the API server rejects the patch instead of
    // rewriting another container.
    if (containerOps.length)
      ops.push({ op: 'test', path: `/spec/initContainers/${index}/name`, value: container.name }, ...containerOps);
    const limit = memoryLimitOf(container);
    if (limit !== undefined && memoryLimitTooLow(limit)) warnings.push(memoryLimitNote(container.name, limit));
  });
  if (containers.some((decision) => decision.outcome !== 'unrecognised'))
    ops.push(...podLevelPatch(isRecord(pod) ? pod : {}, spec, settings));
  return { ops, containers, warnings };
}

/** The drop-in mode the container runs: the mesh's argv, read by src/compat (Interlock's own commands included). */
function dropInMode(container: Record<string, unknown>): CompatMode | undefined {
  return compatModeOf([...(stringList(container.command) ?? []), ...(stringList(container.args) ?? [])]);
}

function containerPatch(
  container: Record<string, unknown>,
  at: string,
  mode: CompatMode,
  settings: PatchSettings,
): JsonPatchOp[] {
  const ops: JsonPatchOp[] = [];
  const set = (field: string, value: unknown) => {
    if (value === undefined) {
      if (container[field] !== undefined) ops.push({ op: 'remove', path: `${at}/${field}` });
    } else if (!sameJson(container[field], value)) ops.push({ op: 'add', path: `${at}/${field}`, value });
  };
  const command = DROP_IN_COMMAND[mode];
  set('image', settings.image);
  set('command', command && [...command]);
  set('env', mergedByName(container.env, [...podIdentityEnv(), ...podinfoEnv()]));
  set('volumeMounts', mergedByName(container.volumeMounts, [podinfoMount()]));
  set('resources', structuredClone(VALIDATOR_RESOURCES));
  set('terminationMessagePolicy', 'FallbackToLogsOnError');
  return ops;
}

function podLevelPatch(
  pod: Record<string, unknown>,
  spec: Record<string, unknown>,
  settings: PatchSettings,
): JsonPatchOp[] {
  const ops: JsonPatchOp[] = [];
  const volumes = Array.isArray(spec.volumes) ? spec.volumes : undefined;
  if (!volumes) ops.push({ op: 'add', path: '/spec/volumes', value: [podinfoVolume()] });
  else if (!volumes.some((volume) => isRecord(volume) && volume.name === PODINFO.volume))
    ops.push({ op: 'add', path: '/spec/volumes/-', value: podinfoVolume() });
  const metadata = isRecord(pod.metadata) ? pod.metadata : undefined;
  const annotations = metadata && isRecord(metadata.annotations) ? metadata.annotations : undefined;
  const missing = Object.entries(settings.annotations).filter(([key, value]) => annotations?.[key] !== value);
  if (missing.length === 0) return ops;
  if (!metadata) ops.push({ op: 'add', path: '/metadata', value: { annotations: Object.fromEntries(missing) } });
  else if (!annotations) ops.push({ op: 'add', path: '/metadata/annotations', value: Object.fromEntries(missing) });
  else
    for (const [key, value] of missing)
      ops.push({ op: 'add', path: `/metadata/annotations/${pointerSegment(key)}`, value });
  return ops;
}

/** The list as it is, plus each wanted entry whose name it lacks: the mesh's own entries win. */
function mergedByName(list: unknown, wanted: readonly Record<string, unknown>[]): unknown[] {
  const current: unknown[] = Array.isArray(list) ? (list as unknown[]) : [];
  const names = new Set(current.map((item) => (isRecord(item) ? item.name : undefined)));
  return [...current, ...wanted.filter((item) => !names.has(item.name))];
}

function memoryLimitOf(container: Record<string, unknown>): string | undefined {
  const limits =
    isRecord(container.resources) && isRecord(container.resources.limits) ? container.resources.limits : {};
  return typeof limits.memory === 'string' ? limits.memory : undefined;
}

function stringList(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((item) => typeof item === 'string') ? value : undefined;
}
