import type { PodSecurityCheck } from './pod-security-check.js';
import {
  field,
  firstContainer,
  isJson,
  isWindowsPod,
  items,
  podContainers,
  podSecurityContext,
  shown,
  words,
  type Json,
} from './pod-security-fields.js';

// The restricted level of k8s.io/pod-security-admission's policy package, at its latest version in
// Kubernetes v1.33 (pod-security-level.ts names the source): baseline's checks, three of them
// replaced by stricter ones, and five more.

/** check_restrictedVolumes.go: the only inline volume sources restricted admits. */
const RESTRICTED_VOLUME_SOURCES = new Set([
  'configMap',
  'csi',
  'downwardAPI',
  'emptyDir',
  'ephemeral',
  'image',
  'persistentVolumeClaim',
  'projected',
  'secret',
]);
const PROFILE_TYPES = new Set(['RuntimeDefault', 'Localhost']);

/**
 * A volume's source outside the set. A volume with no source at all is an emptyDir: the API server
 * defaults it so before admission (SetDefaults_Volume), and a printed manifest is judged as admitted.
 */
function restrictedVolumes(spec: unknown): string | undefined {
  for (const volume of items(field(spec, 'volumes'))) {
    const sources = Object.keys(volume).filter((key) => key !== 'name' && volume[key] !== null);
    const bad = sources.find((key) => !RESTRICTED_VOLUME_SOURCES.has(key));
    if (bad !== undefined) return `volume ${shown(volume.name)}: ${bad}`;
  }
  return undefined;
}

/** The pod-level value a container inherits: pod false is itself a violation, pod true covers unset containers. */
function runAsNonRoot(spec: unknown): string | undefined {
  const atPod = podSecurityContext(spec)?.runAsNonRoot;
  if (atPod === false) return 'pod: securityContext.runAsNonRoot false';
  const explicit = firstContainer(spec, 'securityContext.runAsNonRoot', ({ securityContext }) =>
    securityContext?.runAsNonRoot === false ? 'false' : undefined,
  );
  if (explicit !== undefined || atPod === true) return explicit;
  return firstContainer(spec, 'securityContext.runAsNonRoot', ({ securityContext }) =>
    typeof securityContext?.runAsNonRoot === 'boolean' ? undefined : 'unset, and not true on the pod',
  );
}

function runAsUser(spec: unknown): string | undefined {
  if (podSecurityContext(spec)?.runAsUser === 0) return 'pod: securityContext.runAsUser 0';
  return firstContainer(spec, 'securityContext.runAsUser', ({ securityContext }) =>
    securityContext?.runAsUser === 0 ? '0' : undefined,
  );
}

const badProfile = (context: Json | undefined): string | undefined => {
  const profile = context?.seccompProfile;
  if (!isJson(profile)) return undefined;
  return PROFILE_TYPES.has(profile.type as string) ? undefined : shown(profile.type ?? 'unset');
};

/** Set on the pod (to an allowed type) or on every container; a bad type anywhere fails. */
function seccompRestricted(spec: unknown): string | undefined {
  if (isWindowsPod(spec)) return undefined;
  const atPod = badProfile(podSecurityContext(spec));
  if (atPod !== undefined) return `pod: securityContext.seccompProfile.type ${atPod}`;
  const name = 'securityContext.seccompProfile.type';
  const explicit = firstContainer(spec, name, ({ securityContext }) => badProfile(securityContext));
  if (explicit !== undefined || isJson(podSecurityContext(spec)?.seccompProfile)) return explicit;
  return firstContainer(spec, name, ({ securityContext }) =>
    isJson(securityContext?.seccompProfile) ? undefined : 'unset, and not set on the pod',
  );
}

/** Every container drops ALL and adds nothing but NET_BIND_SERVICE. */
function capabilitiesRestricted(spec: unknown): string | undefined {
  if (isWindowsPod(spec)) return undefined;
  for (const { name, securityContext } of podContainers(spec)) {
    const capabilities = field(securityContext, 'capabilities');
    if (!words(field(capabilities, 'drop')).includes('ALL'))
      return `container ${name}: securityContext.capabilities.drop lacks ALL`;
    const added = words(field(capabilities, 'add')).find((cap) => cap !== 'NET_BIND_SERVICE');
    if (added !== undefined) return `container ${name}: securityContext.capabilities.add ${added}`;
  }
  return undefined;
}

/** Restricted's own checks, in the order the standard lists its controls. */
export const RESTRICTED_CHECKS: readonly PodSecurityCheck[] = [
  {
    id: 'restrictedVolumes',
    level: 'restricted',
    overrides: 'hostPathVolumes',
    firstViolation: ({ spec }) => restrictedVolumes(spec),
  },
  {
    id: 'allowPrivilegeEscalation',
    level: 'restricted',
    firstViolation: ({ spec }) =>
      isWindowsPod(spec)
        ? undefined
        : firstContainer(spec, 'securityContext.allowPrivilegeEscalation', ({ securityContext }) =>
            securityContext?.allowPrivilegeEscalation === false
              ? undefined
              : shown(securityContext?.allowPrivilegeEscalation ?? 'unset'),
          ),
  },
  { id: 'runAsNonRoot', level: 'restricted', firstViolation: ({ spec }) => runAsNonRoot(spec) },
  { id: 'runAsUser', level: 'restricted', firstViolation: ({ spec }) => runAsUser(spec) },
  {
    id: 'seccompProfile_restricted',
    level: 'restricted',
    overrides: 'seccompProfile_baseline',
    firstViolation: ({ spec }) => seccompRestricted(spec),
  },
  {
    id: 'capabilities_restricted',
    level: 'restricted',
    overrides: 'capabilities_baseline',
    firstViolation: ({ spec }) => capabilitiesRestricted(spec),
  },
];
