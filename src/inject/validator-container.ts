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

export function securityContextOf(mesh: Mesh, rulesCheck: boolean): Container {
  const uid = rulesCheck ? 0 : meshIdentity(mesh).validatorUid;
  return {
    runAsNonRoot: !rulesCheck,
    runAsUser: uid,
    runAsGroup: uid,
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
    securityContext: securityContextOf(options.mesh, options.rulesCheck),
    ...(readsPodInfo(options.mesh) ? { volumeMounts: [podinfoMount()] } : {}),
    terminationMessagePolicy: 'FallbackToLogsOnError',
  };
}
