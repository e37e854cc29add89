import type { Platform } from '../config/platform.js';
import { meshIdentity, type Mesh } from '../mesh/meshes.js';
import { PODINFO, podinfoMount } from './podinfo.js';
import { VALIDATOR_RESOURCES } from './resources.js';

export const DEFAULT_IMAGE = 'mesh-interlock:dev';

export interface ValidatorOptions {
  readonly mesh: Mesh;
  readonly image: string;
  /** uid 0 with NET_ADMIN and NET_RAW: the only way a kubelet gives a process effective capabilities. */
  readonly rulesCheck: boolean;
  readonly reportEvent: boolean;
  /** Validate flags beyond `--mesh` (compat mapping of an existing validator's args, say). */
  readonly extraArgs?: readonly string[];
  /** openshift: no runAsUser/runAsGroup, which restricted-v2 assigns from the namespace's range. */
  readonly platform?: Platform;
}

export type Container = Record<string, unknown>;

/** Only a mesh whose CNI plugin reads the pod's metadata has annotations for the validator to read. */
export const readsPodInfo = (mesh: Mesh): boolean => meshIdentity(mesh).podMetadata !== undefined;

/** The image's entrypoint is `interlock validate`, so args start at the flags (as Istio's args do). */
export function validatorArgs(options: ValidatorOptions): string[] {
  return [
    '--mesh',
    options.mesh,
    ...(options.rulesCheck ? ['--rules', 'required'] : []),
    ...(options.reportEvent ? ['--report-event'] : []),
    ...(options.extraArgs ?? []),
    ...(readsPodInfo(options.mesh)
      ? ['--pod-annotations', `${PODINFO.mountPath}/annotations`, '--pod-labels', `${PODINFO.mountPath}/labels`]
      : []),
  ];
}

/** The downward API values the termination message and the failure Event name the pod by. */
export function podIdentityEnv(): Container[] {
  return [
    { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
    { name: 'POD_UID', valueFrom: { fieldRef: { fieldPath: 'metadata.uid' } } },
  ];
}

/**
 * The validator's securityContext. The rules check needs uid 0 on every platform (only root gets
 * effective capabilities from the kubelet). Otherwise OpenShift gets no uid: restricted-v2 assigns
 * one from the namespace's range at admission and refuses a fixed one outside it
 * (linkerd/linkerd2#11520); ambient's and Linkerd's rules know no validator uid, and the range is
 * never a proxy's fixed uid.
 */
export function securityContextOf(mesh: Mesh, rulesCheck: boolean, platform: Platform = 'kubernetes'): Container {
  const uid = rulesCheck ? 0 : meshIdentity(mesh).validatorUid;
  const assigned = platform === 'openshift' && !rulesCheck;
  return {
    runAsNonRoot: !rulesCheck,
    ...(assigned ? {} : { runAsUser: uid, runAsGroup: uid }),
    allowPrivilegeEscalation: false,
    capabilities: rulesCheck ? { drop: ['ALL'], add: ['NET_ADMIN', 'NET_RAW'] } : { drop: ['ALL'] },
    readOnlyRootFilesystem: true,
    seccompProfile: { type: 'RuntimeDefault' },
  };
}

/** The whole init container, as plain data, in the field order `kubectl` prints. */
export function validatorContainer(options: ValidatorOptions): Container {
  return {
    // The name the mesh's repair controller looks for (exit 95 / 126 in lastState).
    name: meshIdentity(options.mesh).containers.validator,
    image: options.image,
    args: validatorArgs(options),
    env: podIdentityEnv(),
    resources: structuredClone(VALIDATOR_RESOURCES),
    securityContext: securityContextOf(options.mesh, options.rulesCheck, options.platform),
    ...(readsPodInfo(options.mesh) ? { volumeMounts: [podinfoMount()] } : {}),
    terminationMessagePolicy: 'FallbackToLogsOnError',
  };
}

/**
 * A mesh's own validator kept in place (inject, the webhook's drop-in) on OpenShift: the fixed uid
 * its injector writes (Linkerd's 65534) is the one restricted-v2 refuses, so it goes and the SCC
 * assigns one. A uid the injector took from the namespace's range (Istio on OpenShift) stays.
 */
export function withoutFixedUid(securityContext: unknown, mesh: Mesh, platform: Platform): unknown {
  if (platform !== 'openshift' || typeof securityContext !== 'object' || securityContext === null)
    return securityContext;
  const context = securityContext as Container;
  if (context.runAsUser !== meshIdentity(mesh).validatorUid) return securityContext;
  const { runAsUser: _uid, runAsGroup: _gid, ...rest } = context;
  return rest;
}
