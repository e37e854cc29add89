import type { Platform } from '../config/platform.js';
import { compatToValidate } from '../compat/compat-argv.js';
import { containerValidatorConfig } from '../compat/validator-config.js';
import { GENERIC } from '../mesh/generic.js';
import { hasOwnPorts, meshIdentities, meshIdentity, meshOfContainer, MESHES, type Mesh } from '../mesh/meshes.js';
import { fail, ok, type Result } from '../reason/result.js';
import { captureExclusion } from './ambient-enrolment.js';
import type { CapturedPods } from '../mesh/mesh-identity.js';
import { annotationFlags } from './annotation-flags.js';
import { authorPlumbingProblem } from './author-plumbing.js';
import { admissionMesh, type NamespaceInjection } from './mesh-admission.js';
import { memoryLimitNote, memoryLimitTooLow, VALIDATOR_RESOURCES } from './resources.js';
import { PODINFO, podinfoMount, podinfoVolume } from './podinfo.js';
import {
  podIdentityEnv,
  readsPodInfo,
  securityContextOf,
  withoutFixedUid,
  validatorArgs,
  validatorContainer,
} from './validator-container.js';

import { scalarText, type Plain } from './plain.js';

export interface InjectOptions {
  /** Unset: from the pod (an existing validator, the proxy or its init container), else an error. */
  readonly mesh?: Mesh;
  readonly image: string;
  readonly rulesCheck: boolean;
  readonly reportEvent: boolean;
  readonly nativeSidecar: boolean;
  /** Init containers that write the rules besides istio-init and linkerd-init: the validator goes after them. */
  readonly afterContainers?: readonly string[];
  /** validate flags as pairs (the generic preset's ports): a new container's; an existing one keeps its own and gains those it lacks. */
  readonly extraArgs?: readonly string[];
  /** openshift: the validator gets no uid; a mesh validator's fixed one is removed. */
  readonly platform?: Platform;
}

/** One pod template, as plain data. */
export interface PodInput {
  readonly label: string;
  readonly spec: Plain;
  readonly metadata?: Plain;
  readonly namespace?: NamespaceInjection;
}

/** Where the validator goes: a new item at `index`, or the item at `index` replaced. */
export interface Plan {
  readonly kind: 'insert' | 'replace';
  readonly index: number;
  readonly container: Plain;
  /** The downward-API volume the container mounts, when the pod does not have it yet. */
  readonly volume?: Plain;
  readonly notes: readonly string[];
}

export type InjectReason = 'ManifestRefused' | 'ManifestOrder' | 'ConfigInvalid';

/** The containers inject rewrites in place: each mesh's validator, by the name its injector gives it. */
export const VALIDATOR_NAMES: ReadonlySet<string> = new Set(
  meshIdentities().map((identity) => identity.containers.validator),
);
/** Init containers the meshes inject that write the NAT rules (no CNI plugin). */
const RULES_WRITERS = meshIdentities().flatMap((identity) => identity.containers.rulesWriter ?? []);
/** Flags Interlock manages itself; everything else in an existing validator's args is kept. */
const MANAGED = new Map([
  ['--mesh', 1],
  ['--rules', 1],
  ['--report-event', 0],
  ['--pod-annotations', 1],
  ['--pod-labels', 1],
]);

const nameOf = (item: unknown): string =>
  typeof item === 'object' && item !== null ? scalarText((item as Plain).name) : '';
const listOf = (value: unknown): Plain[] => (Array.isArray(value) ? (value as Plain[]) : []);

/** Decides where and what the validator is in one pod spec, or why the pod is refused. */
export function planPodSpec(pod: PodInput, options: InjectOptions): Result<Plan, InjectReason> {
  const refused = refusal(pod, options);
  if (refused) return fail('ManifestRefused', `${pod.label}: ${refused}`);
  const inits = listOf(pod.spec.initContainers);
  const names = [...inits.map(nameOf), ...listOf(pod.spec.containers).map(nameOf)];
  const index = inits.findIndex((item) => VALIDATOR_NAMES.has(nameOf(item)));
  const existing = index >= 0 ? inits[index] : undefined;
  const mesh = options.mesh ?? meshOfContainer(nameOf(existing)) ?? names.map(meshOfContainer).find(Boolean);
  if (!mesh)
    return fail(
      'ConfigInvalid',
      `${pod.label}: cannot tell which mesh injects this pod (no validator, proxy or init container of a mesh); give --mesh ${MESHES.join('|')}`,
    );
  const order = orderProblem(pod.label, inits, index, options);
  if (order?.startsWith('error:')) return fail('ManifestOrder', order.slice('error: '.length));
  const notes = order ? [order] : [];
  if (existing) {
    const mapped = equivalentArgs(existing, pod.label);
    if (!mapped.ok) return mapped;
    const args = withMissingFlags(mapped.value, options.extraArgs ?? []);
    const container = updated(existing, mesh, [...args, ...annotationFlags(mesh, pod.metadata, args)], options);
    const unstartable = printedRefusal(pod.label, container);
    if (unstartable) return unstartable;
    return ok({
      kind: 'replace',
      index,
      container,
      ...volumeOf(pod.spec, mesh),
      notes: [...notes, ...memoryNote(pod.label, existing)],
    });
  }
  const args = newArgs(pod, inits, mesh, options);
  if (!args.ok) return args;
  const at = insertionIndex(inits, options);
  const container = validatorContainer({ ...options, mesh, extraArgs: args.value });
  const unstartable = printedRefusal(pod.label, container);
  if (unstartable) return unstartable;
  return ok({
    kind: 'insert',
    index: at,
    container,
    ...volumeOf(pod.spec, mesh),
    notes: [...notes, ...uninjectedNote(pod.label, mesh, names)],
  });
}

/**
 * A pod without the mesh's proxy has not met the mesh's injector yet: where the injector adds the
 * proxy at admission it adds its own validator too, under the name inject just gave Interlock's,
 * and the API server refuses the pod for the duplicate. The webhook replaces it after the injector.
 */
function uninjectedNote(label: string, mesh: Mesh, names: readonly string[]): string[] {
  const { containers, admission } = meshIdentity(mesh);
  if (containers.proxy === undefined || admission === undefined || names.includes(containers.proxy)) return [];
  return [
    `warning: ${label} has no ${containers.proxy} container: if ${mesh}'s injector adds it at admission, it adds its own ${containers.validator} too, a duplicate init container name the API server refuses; for pods the injector injects use the webhook (interlock manifest --webhook), or inject what the mesh's own inject printed`,
  ];
}

/**
 * What inject prints must start: the validator's own configuration check (validate's, through
 * src/compat for a drop-in's argv) runs on it now, so a pod is refused here rather than blocked
 * at every start by exit 64.
 */
function printedRefusal(label: string, container: Plain): Result<never, 'ConfigInvalid'> | undefined {
  const config = containerValidatorConfig(container);
  return config.ok
    ? undefined
    : fail(
        'ConfigInvalid',
        `${label}: container ${nameOf(container)}: the validator would refuse it and exit 64: ${config.error.message}`,
      );
}

/** The pod-info volume to add, unless the pod has it (or the mesh reads no annotations). */
function volumeOf(spec: Plain, mesh: Mesh): { volume?: Plain } {
  if (!readsPodInfo(mesh) || listOf(spec.volumes).some((volume) => nameOf(volume) === PODINFO.volume)) return {};
  return { volume: podinfoVolume() };
}

/** Why this pod must not be injected, or undefined. */
function refusal(pod: PodInput, options: InjectOptions): string | undefined {
  const { spec } = pod;
  if (spec.hostNetwork === true)
    return "hostNetwork: true; a validator there would probe the node's network, not a meshed pod's";
  const inits = spec.initContainers;
  for (const [key, value] of [
    ['initContainers', inits],
    ['volumes', spec.volumes],
  ] as const)
    if (value !== undefined && value !== null && !Array.isArray(value))
      return `${key} is a ${typeof value === 'object' ? 'map' : typeof value}, not a list; fix the manifest first`;
  const names = [...listOf(inits), ...listOf(spec.containers)];
  const impostor =
    names.find((item) => VALIDATOR_NAMES.has(nameOf(item)) && !listOf(inits).includes(item)) ??
    listOf(inits).find(
      (item) => nameOf(item) === GENERIC.containers.validator && !isInterlockImage(item.image, options.image),
    );
  if (impostor)
    return `a container named ${nameOf(impostor)} (image ${scalarText(impostor.image)}) is not Interlock's validator; rename it`;
  const plumbing = authorPlumbingProblem(spec, listOf(inits).find((item) => VALIDATOR_NAMES.has(nameOf(item))) ?? {});
  if (plumbing) return plumbing;
  const admission = admissionMesh(pod.metadata, names.map(nameOf), pod.namespace);
  const captured = options.mesh === undefined ? undefined : meshIdentity(options.mesh).capturedPods;
  if (options.mesh !== undefined && captured) return captureRefusal(options.mesh, captured, pod, admission);
  if (admission)
    return `${meshIdentity(admission).admission?.injector ?? admission} injects this pod at admission and adds its own validator there; use the admission path (\`interlock webhook\`, deployed by \`interlock manifest --webhook\`; docs/admission.md), not inject`;
  return undefined;
}

/**
 * Why a mesh that captures pods by itself (ambient) will not capture this one: then its validator
 * would fail at every start. A pod a mesh's injector will give a sidecar at admission is a sidecar pod too.
 */
function captureRefusal(
  mesh: Mesh,
  selection: CapturedPods,
  pod: PodInput,
  admission: Mesh | undefined,
): string | undefined {
  const excluded = captureExclusion(selection, { metadata: pod.metadata, spec: pod.spec });
  const injector = admission === undefined ? undefined : meshIdentity(admission).admission?.injector;
  const why = excluded ?? (injector === undefined ? undefined : `${injector} injects its proxy into it at admission`);
  return why === undefined
    ? undefined
    : `--mesh ${mesh} does not capture this pod (${why}); a validator there would fail at every start: leave --mesh ${mesh} off for it`;
}

/** Interlock's image: the one given, or any tag or digest of a `mesh-interlock` repository. */
function isInterlockImage(image: unknown, expected: string): boolean {
  const text = scalarText(image);
  const repository = text.split('@')[0]?.replace(/:[^/:]*$/, '') ?? '';
  return text === expected || repository.split('/').at(-1) === 'mesh-interlock';
}

/** After the last init container that writes the rules (and before any native sidecar). */
function insertionIndex(inits: readonly Plain[], options: InjectOptions): number {
  const writers = new Set([...RULES_WRITERS, ...(options.afterContainers ?? [])]);
  let last = -1;
  inits.forEach((item, at) => {
    if (writers.has(nameOf(item))) last = at;
  });
  return last + 1;
}

/**
 * An existing validator must run after every rules writer (else it checks rules not yet written)
 * and before a native sidecar proxy (else the proxy holds the port it binds).
 */
function orderProblem(
  label: string,
  inits: readonly Plain[],
  index: number,
  options: InjectOptions,
): string | undefined {
  if (index < 0) {
    const at = insertionIndex(inits, options);
    const sidecar = inits.slice(0, at).find((item) => item.restartPolicy === 'Always');
    return sidecar
      ? `error: ${label}: the native sidecar ${nameOf(sidecar)} runs before the init container that writes the rules; the validator cannot go after one and before the other`
      : undefined;
  }
  const writers = new Set([...RULES_WRITERS, ...(options.afterContainers ?? [])]);
  const writer = inits.slice(index + 1).find((item) => writers.has(nameOf(item)));
  if (writer)
    return `error: ${label}: the validator runs before ${nameOf(writer)}, which writes the rules it checks; move it after ${nameOf(writer)}`;
  const before = inits
    .slice(0, index)
    .filter((item) => item.restartPolicy === 'Always')
    .map(nameOf);
  if (before.length === 0) return undefined;
  const sentence = `${label}: the validator runs after the native sidecar ${before.join(', ')}, whose port it must bind first; move it before ${before.join(', ')}`;
  return options.nativeSidecar ? `error: ${sentence}` : `warning: ${sentence}`;
}

/** A new validator's flags: the rules writer's own argv mapped, or the pod's annotations. */
function newArgs(
  pod: PodInput,
  inits: readonly Plain[],
  mesh: Mesh,
  options: InjectOptions,
): Result<string[], InjectReason> {
  const identity = meshIdentity(mesh);
  const validation = identity.dropIn?.rulesWriterValidation;
  const writer = inits.find((item) => nameOf(item) === identity.containers.rulesWriter);
  const base: string[] = [...(options.extraArgs ?? [])];
  if (validation && writer) {
    // The rules writer's options with validation only describe what it wrote (istio-init).
    const args = [...listOf(writer.args).map(String), ...validation];
    const mapped = equivalentArgs({ ...writer, args }, pod.label);
    if (!mapped.ok) return mapped;
    base.push(...mapped.value);
  } else if (!hasOwnPorts(mesh) && !(base.includes('--inbound-port') && base.includes('--outbound-port'))) {
    return fail(
      'ConfigInvalid',
      `${pod.label}: --mesh ${mesh} needs --inbound-port and --outbound-port (the proxy's redirect ports)`,
    );
  }
  return ok([...base, ...annotationFlags(mesh, pod.metadata, base)]);
}

/**
 * The existing validator's flags, plus each of the operator's (`--inbound-port 1`, as pairs) that
 * it does not set: its own stay, and a generic validator without ports gets the ones given
 * instead of being printed to exit 64 at every start.
 */
function withMissingFlags(existing: readonly string[], given: readonly string[]): string[] {
  const has = (name: string) => existing.some((arg) => arg === name || arg.startsWith(`${name}=`));
  const added: string[] = [];
  for (let index = 0; index < given.length; index += 2)
    if (!has(given[index] ?? '')) added.push(given[index] ?? '', given[index + 1] ?? '');
  return [...existing, ...added];
}

/** The validate flags equivalent to what the container runs now: the mesh's own argv, mapped, or Interlock's. */
function equivalentArgs(container: Plain, label: string): Result<string[], 'ConfigInvalid'> {
  const strings = (value: unknown) => (Array.isArray(value) ? value.map(String) : []);
  const args = strings(container.args);
  const mapped = compatToValidate([...strings(container.command), ...args], {});
  if (mapped && !mapped.ok)
    return fail('ConfigInvalid', `${label}: container ${nameOf(container)}: ${mapped.error.message}`);
  const validate = mapped ? mapped.value.slice(1) : args[0] === 'validate' ? args.slice(1) : args;
  // Kept, a help or version switch would make the validator print and never judge.
  const switched = validate.find((flag) => /^(?:--help|-h|--version)(?:=|$)/.test(flag));
  if (switched !== undefined)
    return fail(
      'ConfigInvalid',
      `${label}: container ${nameOf(container)}: ${switched} is not a verdict: a validator exits 0 only on proof; remove it from the args`,
    );
  const extra: string[] = [];
  for (let index = 0; index < validate.length; index++) {
    const flag = validate[index] ?? '';
    const arity = MANAGED.get(flag.split('=')[0] ?? '');
    if (arity === undefined) extra.push(flag);
    else if (!flag.includes('=')) index += arity;
  }
  return ok(extra);
}

/** The existing container with Interlock's image, args, identity env and termination policy; its other fields kept. */
function updated(existing: Plain, mesh: Mesh, extraArgs: string[], options: InjectOptions): Plain {
  const container: Plain = { ...existing, image: options.image, args: validatorArgs({ ...options, mesh, extraArgs }) };
  delete container.command;
  const env = listOf(existing.env);
  const present = new Set(env.map(nameOf));
  container.env = [...env, ...podIdentityEnv().filter((entry) => !present.has(nameOf(entry)))];
  if (options.rulesCheck) container.securityContext = securityContextOf(mesh, true);
  else if (existing.securityContext !== undefined)
    container.securityContext = withoutFixedUid(existing.securityContext, mesh, options.platform ?? 'kubernetes');
  const mounts = listOf(existing.volumeMounts);
  if (readsPodInfo(mesh) && !mounts.some((mount) => nameOf(mount) === PODINFO.volume))
    container.volumeMounts = [...mounts, podinfoMount()];
  container.terminationMessagePolicy = 'FallbackToLogsOnError';
  if (tooLowLimit(existing) !== undefined) raiseMemoryLimit(container);
  return container;
}

/** The mesh's memory limit, when it is below the rule (resources.ts) and must be raised. */
function tooLowLimit(container: Plain): string | undefined {
  const limits = (container.resources as Plain | undefined)?.limits as Plain | undefined;
  const limit = limits?.memory === undefined ? undefined : scalarText(limits.memory);
  return limit !== undefined && memoryLimitTooLow(limit) ? limit : undefined;
}

/** The webhook's rule, applied here too: the limit is raised, every other resource kept. */
function raiseMemoryLimit(container: Plain): void {
  const resources = (container.resources ?? {}) as Plain;
  const limits = (resources.limits ?? {}) as Plain;
  container.resources = { ...resources, limits: { ...limits, memory: VALIDATOR_RESOURCES.limits.memory } };
}

function memoryNote(label: string, existing: Plain): string[] {
  const limit = tooLowLimit(existing);
  return limit === undefined ? [] : [`note: ${label}: ${memoryLimitNote(nameOf(existing), limit)}`];
}
