import { posix } from 'node:path';
import { scalarText, type Plain } from './plain.js';
import { PODINFO } from './podinfo.js';
import { podIdentityEnv } from './validator-container.js';
import { validatorFieldProblem } from './validator-fields.js';

/** Every setting of `interlock validate` has an environment variable with this prefix (envOf). */
const SETTING_PREFIX = 'INTERLOCK_';
const DOWNWARD_ITEMS: Readonly<Record<string, string>> = {
  annotations: 'metadata.annotations',
  labels: 'metadata.labels',
};

const listOf = (value: unknown): Plain[] =>
  Array.isArray(value) ? value.filter((item): item is Plain => typeof item === 'object' && item !== null) : [];
const keysWithin = (value: Plain, allowed: readonly string[]) =>
  Object.keys(value).every((key) => allowed.includes(key));

/**
 * Why the pod would hand the validator inputs its author wrote, or undefined: the validator reads
 * the pod's annotations from the podinfo volume, and its settings from INTERLOCK_* variables, so
 * whoever writes those decides what it checks. Refused rather than overwritten: a pod that
 * forges them is either an attempt to pass unmeshed or a template that needs fixing, and a
 * silent overwrite would hide both. `ownEnv` is what Interlock itself sets (the webhook's podinfo
 * paths): equal entries pass, so a pod the webhook already patched is not refused.
 */
export function authorPlumbingProblem(
  spec: Plain,
  validator: Plain,
  ownEnv: readonly Plain[] = [],
): string | undefined {
  const volume = listOf(spec.volumes).find((item) => item.name === PODINFO.volume);
  if (volume && !isPodInfoVolume(volume))
    return `the pod defines volume ${PODINFO.volume} itself; it is Interlock's (the pod's own annotations and labels, by the downward API): remove it`;
  const name = scalarText(validator.name);
  if (validator.envFrom !== undefined)
    return `container ${name} has envFrom, which may set INTERLOCK_* settings of the validator: remove it`;
  const forged = listOf(validator.env).find(
    (entry) =>
      scalarText(entry.name).startsWith(SETTING_PREFIX) &&
      !ownEnv.some(
        (own) => own.name === entry.name && own.value === entry.value && keysWithin(entry, ['name', 'value']),
      ),
  );
  if (forged)
    return `container ${name} sets ${scalarText(forged.name)}, a setting of the validator that only Interlock writes: remove it`;
  const identity = listOf(validator.env).find((entry) => !isOwnIdentity(entry));
  if (identity)
    return `container ${name} sets ${scalarText(identity.name)} itself; Interlock reads it from the downward API, to name the pod in its termination message and Events: remove it`;
  const mount = listOf(validator.volumeMounts).find((item) => !isPodInfoMount(item) && touchesPodInfo(item));
  if (mount)
    return `container ${name} mounts ${scalarText(mount.name)} at ${scalarText(mount.mountPath)}, over ${PODINFO.mountPath} where the validator reads the pod's annotations: remove it`;
  return validatorFieldProblem(validator, isPodInfoMount);
}

/** Interlock's downward-API volume, also as the API server returns it (defaultMode, fieldRef.apiVersion filled in). */
function isPodInfoVolume(volume: Plain): boolean {
  const api = volume.downwardAPI;
  if (!keysWithin(volume, ['name', 'downwardAPI']) || typeof api !== 'object' || api === null) return false;
  if (!keysWithin(api as Plain, ['items', 'defaultMode'])) return false;
  const items = listOf((api as Plain).items);
  return (
    items.length === Object.keys(DOWNWARD_ITEMS).length &&
    items.every((item) => {
      const ref = item.fieldRef as Plain | undefined;
      return (
        keysWithin(item, ['path', 'fieldRef']) &&
        typeof ref === 'object' &&
        ref !== null &&
        keysWithin(ref, ['fieldPath', 'apiVersion']) &&
        (ref.apiVersion === undefined || ref.apiVersion === 'v1') &&
        DOWNWARD_ITEMS[scalarText(item.path)] === ref.fieldPath
      );
    }) &&
    new Set(items.map((item) => item.path)).size === items.length
  );
}

/** Interlock's read-only mount of its podinfo volume, exactly. */
export function isPodInfoMount(mount: Plain): boolean {
  return (
    mount.name === PODINFO.volume &&
    mount.mountPath === PODINFO.mountPath &&
    mount.readOnly === true &&
    keysWithin(mount, ['name', 'mountPath', 'readOnly'])
  );
}

/** A mount of the podinfo volume, or any mount at or under the directory the validator reads. */
function touchesPodInfo(mount: Plain): boolean {
  const path = posix.normalize(`${scalarText(mount.mountPath)}/`);
  return mount.name === PODINFO.volume || path.startsWith(`${PODINFO.mountPath}/`);
}

const IDENTITY_FIELDS = new Map(
  podIdentityEnv().map((entry) => [entry.name, ((entry.valueFrom as Plain).fieldRef as Plain).fieldPath]),
);

/** Not an identity variable, or Interlock's downward-API one (fieldRef.apiVersion as the API server defaults it). */
function isOwnIdentity(entry: Plain): boolean {
  const field = IDENTITY_FIELDS.get(scalarText(entry.name));
  if (field === undefined) return true;
  const from = entry.valueFrom as Plain | undefined;
  const ref = from?.fieldRef as Plain | undefined;
  return (
    keysWithin(entry, ['name', 'valueFrom']) &&
    keysWithin(from ?? {}, ['fieldRef']) &&
    typeof ref === 'object' &&
    ref !== null &&
    keysWithin(ref, ['fieldPath', 'apiVersion']) &&
    (ref.apiVersion === undefined || ref.apiVersion === 'v1') &&
    ref.fieldPath === field
  );
}
