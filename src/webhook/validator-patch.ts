import { compatModeOf, compatToValidate } from '../compat/compat-argv.js';
import { authorPlumbingProblem } from '../inject/author-plumbing.js';
import { containerValidatorConfig } from '../compat/validator-config.js';
import { dropInMeshes, meshIdentity, meshOfContainer, type Mesh } from '../mesh/meshes.js';
import { memoryLimitNote, memoryLimitTooLow, VALIDATOR_RESOURCES } from '../inject/resources.js';
import { podIdentityEnv } from '../inject/validator-container.js';
import { isRecord, pointerSegment, sameJson, type JsonPatchOp } from './json-patch.js';
import { PODINFO, podinfoEnv, podinfoMount, podinfoVolume } from './podinfo.js';

/**
 * The mesh validators Interlock takes the place of, by the container name their repair controllers
 * watch: each mesh with a drop-in (src/mesh/).
 */
const MESH_VALIDATORS: ReadonlyMap<string, Mesh> = new Map(
  dropInMeshes().map(({ mesh }) => [meshIdentity(mesh).containers.validator, mesh] as const),
);

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
  /** refused: Interlock's validator would exit 64 on this container's argv and env, so it is not put there. */
  readonly outcome: 'patched' | 'unchanged' | 'unrecognised' | 'refused';
}

export interface PodPatch {
  readonly ops: JsonPatchOp[];
  readonly containers: ContainerDecision[];
  /** Said back to the API server (AdmissionResponse warnings): a mesh memory limit the patch raised. */
  readonly warnings: string[];
  /** Why the pod is denied instead (plumbing its author wrote, src/inject/author-plumbing.ts); no ops then. */
  readonly denial?: string;
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
  const seen = new Set<string>();
  let denial: string | undefined;
  inits.forEach((container: unknown, index) => {
    if (!isRecord(container) || typeof container.name !== 'string') return;
    const mesh = MESH_VALIDATORS.get(container.name);
    // A second container of the same name makes the pod invalid (the API server refuses it after
    // admission): patching it too would only let one request grow the response without bound.
    if (mesh === undefined || seen.has(container.name)) return;
    seen.add(container.name);
    const mode = dropInMode(container);
    if (mode !== mesh) {
      containers.push({ index, name: container.name, outcome: 'unrecognised' });
      return;
    }
    denial ??= authorPlumbingProblem(spec, container, podinfoEnv());
    const containerOps = containerPatch(container, `/spec/initContainers/${index}`, mode, settings);
    // The mesh's own argv refused (a help or version switch, which its binary answers with exit 0 and
    // no verdict): patched all the same, so Interlock's validator refuses it and the pod does not start.
    const argvRefusal = refusalOf(container);
    const settingsRefusal = argvRefusal === undefined ? patchedRefusal(container, containerOps) : undefined;
    if (settingsRefusal) {
      containers.push({ index, name: container.name, outcome: 'refused' });
      warnings.push(`interlock webhook: ${container.name} left as the mesh wrote it: ${settingsRefusal}`);
      return;
    }
    containers.push({ index, name: container.name, outcome: containerOps.length ? 'patched' : 'unchanged' });
    // Guard the index: if the list moved under us, the API server rejects the patch instead of
    // rewriting another container.
    if (containerOps.length)
      ops.push({ op: 'test', path: `/spec/initContainers/${index}/name`, value: container.name }, ...containerOps);
    if (argvRefusal !== undefined) warnings.push(`${container.name}: ${argvRefusal}`);
    const limit = memoryLimitOf(container);
    if (limit !== undefined && memoryLimitTooLow(limit)) warnings.push(memoryLimitNote(container.name, limit));
  });
  if (denial) return { ops: [], containers, warnings: [], denial };
  ops.push(...validatorFirst(inits, containers));
  if (containers.some((decision) => decision.outcome !== 'unrecognised'))
    ops.push(...podLevelPatch(isRecord(pod) ? pod : {}, spec, settings));
  return { ops, containers, warnings };
}

/**
 * Moves the one validator ahead of the application's init containers, which would otherwise run
 * before capture is proven (Kuma renders kuma-validation after them unless `kuma.io/init-first`):
 * unless a mesh container precedes it (a rules writer must run first), or several validators are.
 */
function validatorFirst(inits: readonly unknown[], containers: readonly ContainerDecision[]): JsonPatchOp[] {
  const ours = containers.filter((decision) => decision.outcome !== 'unrecognised' && decision.outcome !== 'refused');
  const [validator] = ours;
  if (ours.length !== 1 || validator === undefined || validator.index === 0) return [];
  const before = inits.slice(0, validator.index);
  if (before.some((container) => isRecord(container) && meshOfContainer(String(container.name)) !== undefined))
    return [];
  const from = `/spec/initContainers/${validator.index}`;
  return [
    { op: 'test', path: `${from}/name`, value: validator.name },
    { op: 'move', from, path: '/spec/initContainers/0' },
  ];
}

/** The drop-in mode the container runs: the mesh's argv, read by src/compat (Interlock's own commands included). */
function dropInMode(container: Record<string, unknown>): Mesh | undefined {
  return compatModeOf([...(stringList(container.command) ?? []), ...(stringList(container.args) ?? [])]);
}

/** Why Interlock's validator will refuse the container's argv (a help switch, an unknown option), if it will. */
function refusalOf(container: Record<string, unknown>): string | undefined {
  const mapped = compatToValidate(
    [...(stringList(container.command) ?? []), ...(stringList(container.args) ?? [])],
    {},
  );
  return mapped !== undefined && !mapped.ok ? mapped.error.message : undefined;
}

function containerPatch(
  container: Record<string, unknown>,
  at: string,
  mode: Mesh,
  settings: PatchSettings,
): JsonPatchOp[] {
  const ops: JsonPatchOp[] = [];
  const set = (field: string, value: unknown) => {
    if (value === undefined) {
      if (container[field] !== undefined) ops.push({ op: 'remove', path: `${at}/${field}` });
    } else if (!sameJson(container[field], value)) ops.push({ op: 'add', path: `${at}/${field}`, value });
  };
  // The mesh's args follow unchanged and src/compat maps them.
  const command = meshIdentity(mode).dropIn?.command;
  set('image', settings.image);
  set('command', command && [...command]);
  ops.push(...appendedByName(container.env, `${at}/env`, [...podIdentityEnv(), ...podinfoEnv()]));
  ops.push(...appendedByName(container.volumeMounts, `${at}/volumeMounts`, [podinfoMount()]));
  set('resources', structuredClone(VALIDATOR_RESOURCES));
  set('terminationMessagePolicy', 'FallbackToLogsOnError');
  return ops;
}

/**
 * What the patch would make the container run, through the validator's own configuration check
 * (src/compat, as the image runs it): a patch must never print a validator that exits 64.
 */
function patchedRefusal(container: Record<string, unknown>, ops: readonly JsonPatchOp[]): string | undefined {
  const config = containerValidatorConfig(patchedContainer(container, ops));
  return config.ok ? undefined : `Interlock's validator would refuse it and exit 64: ${config.error.message}`;
}

/** The container with its own ops applied: a field set or removed, or an item appended to a field's list (`…/env/-`). */
function patchedContainer(container: Record<string, unknown>, ops: readonly JsonPatchOp[]): Record<string, unknown> {
  const patched: Record<string, unknown> = { ...container };
  for (const op of ops) {
    const [field, item] = op.path.split('/').slice(4);
    if (field === undefined || op.op === 'test' || op.op === 'move') continue;
    if (op.op === 'remove') delete patched[field];
    else if (item === '-')
      patched[field] = [...(Array.isArray(patched[field]) ? (patched[field] as unknown[]) : []), op.value];
    else if (item === undefined) patched[field] = op.value;
  }
  return patched;
}

export function podLevelPatch(
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

/**
 * Each wanted entry whose name the list lacks, appended (`add …/-`): the pod's own entries are
 * never sent back, so nothing the author wrote is re-encoded in the response.
 */
export function appendedByName(list: unknown, at: string, wanted: readonly Record<string, unknown>[]): JsonPatchOp[] {
  if (!Array.isArray(list)) return [{ op: 'add', path: at, value: wanted }];
  const names = new Set(list.map((item: unknown) => (isRecord(item) ? item.name : undefined)));
  return wanted.filter((item) => !names.has(item.name)).map((value) => ({ op: 'add', path: `${at}/-`, value }));
}

function memoryLimitOf(container: Record<string, unknown>): string | undefined {
  const limits =
    isRecord(container.resources) && isRecord(container.resources.limits) ? container.resources.limits : {};
  return typeof limits.memory === 'string' ? limits.memory : undefined;
}

function stringList(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((item) => typeof item === 'string') ? value : undefined;
}
