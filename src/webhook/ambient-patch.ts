import { captureExclusion } from '../inject/ambient-enrolment.js';
import { authorPlumbingProblem, isPodInfoMount } from '../inject/author-plumbing.js';
import { foreignSettingProblem } from '../inject/validator-fields.js';
import { capturingMesh, type Mesh } from '../mesh/meshes.js';
import { VALIDATOR_RESOURCES } from '../inject/resources.js';
import { podinfoMount } from '../inject/podinfo.js';
import { podIdentityEnv, validatorContainer } from '../inject/validator-container.js';
import { fieldOps, isRecord, sameJson, type JsonPatchOp } from './json-patch.js';
import {
  appendedByName,
  podLevelPatch,
  type ContainerDecision,
  type PatchSettings,
  type PodPatch,
} from './validator-patch.js';

type Json = Record<string, unknown>;
const listOf = (value: unknown): Json[] => (Array.isArray(value) ? value.filter(isRecord) : []);
const nameOf = (item: Json): string => (typeof item.name === 'string' ? item.name : '');

/** The validator as printed, with and without the rules check and the Event: the four shapes Interlock ships. */
function printedVariants(mesh: Mesh, settings: PatchSettings): Json[] {
  const { image, platform } = settings;
  return [false, true].flatMap((rulesCheck) =>
    [false, true].map((reportEvent) =>
      validatorContainer({ mesh, image, rulesCheck, reportEvent, ...(platform ? { platform } : {}) }),
    ),
  );
}

/**
 * The patch for a pod sent on the ambient path: the API server sends it only when the namespace
 * or the pod carries `istio.io/dataplane-mode=ambient` and the pod's label is not `none` (the
 * selectors of webhook-manifest.ts, which only the API server can evaluate: the review carries no
 * namespace labels). Here the pod itself is checked again, and a sidecar pod is left alone.
 * The validator goes first, before any init container of the pod's own that might use the network.
 */
export function ambientPatch(pod: unknown, settings: PatchSettings): PodPatch {
  const root = isRecord(pod) ? pod : {};
  const capturing = capturingMesh();
  // The API server sends a typed Pod; anything else gets no patch, which could not apply to it.
  if (!capturing || !isRecord(root.spec)) return { ops: [], containers: [], warnings: [] };
  const spec = root.spec;
  const metadata = isRecord(root.metadata) ? root.metadata : undefined;
  if (captureExclusion(capturing.capturedPods, { metadata, spec })) return { ops: [], containers: [], warnings: [] };
  const canonical = validatorContainer({
    mesh: capturing.mesh,
    image: settings.image,
    rulesCheck: false,
    reportEvent: false,
    ...(settings.platform ? { platform: settings.platform } : {}),
  });
  const name = nameOf(canonical);
  const inits = listOf(spec.initContainers);
  if (listOf(spec.containers).some((item) => nameOf(item) === name))
    return denied(
      `container ${name} is an app container, not an init container; it is not Interlock's validator: rename it`,
    );
  const index = inits.findIndex((item) => nameOf(item) === name);
  const existing = index >= 0 ? inits[index]! : canonical;
  const denial =
    authorPlumbingProblem(spec, existing) ?? foreignSettingProblem(existing, podIdentityEnv(), isPodInfoMount);
  if (denial) return denied(denial);
  const ops: JsonPatchOp[] = [];
  let decision: ContainerDecision;
  if (index < 0) {
    ops.push(
      Array.isArray(spec.initContainers)
        ? { op: 'add', path: '/spec/initContainers/0', value: canonical }
        : { op: 'add', path: '/spec/initContainers', value: [canonical] },
    );
    decision = { index: 0, name, outcome: 'patched' };
  } else {
    const at = `/spec/initContainers/${index}`;
    const containerOps = existingValidatorOps(existing, at, printedVariants(capturing.mesh, settings));
    if (containerOps.length) ops.push({ op: 'test', path: `${at}/name`, value: name }, ...containerOps);
    // First, as when added: an init container of the pod's own must not reach the network before capture is proven.
    if (index > 0)
      ops.push(
        { op: 'test', path: `${at}/name`, value: name },
        { op: 'move', from: at, path: '/spec/initContainers/0' },
      );
    decision = { index: 0, name, outcome: ops.length ? 'patched' : 'unchanged' };
  }
  // The volume index shifts nothing: it is added by name, and annotations by key.
  ops.push(...podLevelPatch(root, spec, settings));
  return { ops, containers: [decision], warnings: [] };
}

function denied(denial: string): PodPatch {
  return { ops: [], containers: [], warnings: [], denial };
}

/**
 * An init container already named as the ambient validator (the pod's author ran `interlock
 * inject`, or this is a reinvocation): made Interlock's, whatever it was. Its args and
 * securityContext stay only when they are one printed shape (the rules check, the Event);
 * otherwise the default shape replaces them. Only what differs is written, so a pod patched
 * before gives no op, also after the API server defaulted it.
 */
function existingValidatorOps(container: Json, at: string, variants: readonly Json[]): JsonPatchOp[] {
  const ops: JsonPatchOp[] = [];
  const set = (field: string, value: unknown) => ops.push(...fieldOps(container, at, field, value));
  const shape = variants.find((variant) => sameJson(variant.args, container.args)) ?? variants[0]!;
  set('image', shape.image);
  set('command', undefined);
  set('args', shape.args);
  set('securityContext', shape.securityContext);
  ops.push(...appendedByName(container.env, `${at}/env`, podIdentityEnv()));
  ops.push(...appendedByName(container.volumeMounts, `${at}/volumeMounts`, [podinfoMount()]));
  set('resources', structuredClone(VALIDATOR_RESOURCES));
  set('terminationMessagePolicy', 'FallbackToLogsOnError');
  return ops;
}
