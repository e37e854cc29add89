import type { PodSecurityCheck } from './pod-security-check.js';
import {
  field,
  firstContainer,
  isJson,
  items,
  podSecurityContext,
  shown,
  words,
  type Json,
} from './pod-security-fields.js';

// The baseline level of k8s.io/pod-security-admission's policy package, at its latest version in
// Kubernetes v1.33 (pod-security-level.ts names the source). Each list below is upstream's data.

/** check_capabilities_baseline.go: the container runtime's default set. */
const BASELINE_CAPABILITIES = new Set([
  'AUDIT_WRITE',
  'CHOWN',
  'DAC_OVERRIDE',
  'FOWNER',
  'FSETID',
  'KILL',
  'MKNOD',
  'NET_BIND_SERVICE',
  'SETFCAP',
  'SETGID',
  'SETPCAP',
  'SETUID',
  'SYS_CHROOT',
]);

/** check_sysctls.go, sysctlsAllowedV1Dot32 (the set from v1.32 on). */
const SAFE_SYSCTLS = new Set([
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_unprivileged_port_start',
  'net.ipv4.ip_local_reserved_ports',
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
  'net.ipv4.tcp_rmem',
  'net.ipv4.tcp_wmem',
]);

/** check_seLinuxOptions.go, selinuxAllowedTypes1_31 ("" is the unset type). */
const SELINUX_TYPES = new Set(['', 'container_t', 'container_init_t', 'container_kvm_t', 'container_engine_t']);
const PROFILE_TYPES = new Set(['RuntimeDefault', 'Localhost']);
const APPARMOR_ANNOTATION = 'container.apparmor.security.beta.kubernetes.io/';

const hostNamespaces = (spec: unknown): string | undefined => {
  const shared = ['hostNetwork', 'hostPID', 'hostIPC'].find((name) => field(spec, name) === true);
  return shared === undefined ? undefined : `pod: ${shared} true`;
};

const hostPathVolumes = (spec: unknown): string | undefined => {
  const volume = items(field(spec, 'volumes')).find((item) => item.hostPath !== undefined && item.hostPath !== null);
  return volume === undefined
    ? undefined
    : `volume ${shown(volume.name)}: hostPath ${shown(field(volume, 'hostPath', 'path'))}`;
};

const hostPorts = (spec: unknown): string | undefined =>
  firstContainer(spec, 'ports[].hostPort', ({ container }) => {
    const port = items(container.ports).find((item) => item.hostPort !== undefined && item.hostPort !== 0);
    return port === undefined ? undefined : shown(port.hostPort);
  });

/** seLinuxOptions with a type outside the allowed set, or any user or role. */
function seLinuxProblem(options: unknown): string | undefined {
  if (!isJson(options)) return undefined;
  const type = typeof options.type === 'string' ? options.type : '';
  if (!SELINUX_TYPES.has(type)) return `type ${type}`;
  if (typeof options.user === 'string' && options.user !== '') return `user ${options.user}`;
  if (typeof options.role === 'string' && options.role !== '') return `role ${options.role}`;
  return undefined;
}

/** A pod-level then per-container question about one securityContext field, as several checks ask. */
function podThenContainers(spec: unknown, name: string, bad: (context: Json | undefined) => string | undefined) {
  const atPod = bad(podSecurityContext(spec));
  if (atPod !== undefined) return `pod: securityContext.${name} ${atPod}`;
  return firstContainer(spec, `securityContext.${name}`, ({ securityContext }) => bad(securityContext));
}

const profileType = (key: string) => (context: Json | undefined) => {
  const profile = context?.[key];
  if (!isJson(profile)) return undefined;
  return PROFILE_TYPES.has(profile.type as string) ? undefined : shown(profile.type ?? 'unset');
};

function appArmor(pod: { metadata?: unknown; spec: unknown }): string | undefined {
  const byField = podThenContainers(pod.spec, 'appArmorProfile.type', profileType('appArmorProfile'));
  if (byField !== undefined) return byField;
  const annotations = field(pod.metadata, 'annotations');
  const entry = Object.entries(isJson(annotations) ? annotations : {}).find(
    ([key, value]) =>
      key.startsWith(APPARMOR_ANNOTATION) &&
      typeof value === 'string' &&
      !(value === '' || value === 'runtime/default' || value.startsWith('localhost/')),
  );
  return entry === undefined ? undefined : `annotation ${entry[0]}: ${shown(entry[1])}`;
}

const sysctls = (spec: unknown): string | undefined => {
  const names = items(podSecurityContext(spec)?.sysctls).map((sysctl) => shown(sysctl.name));
  const unsafe = names.find((name) => !SAFE_SYSCTLS.has(name));
  return unsafe === undefined ? undefined : `pod: securityContext.sysctls ${unsafe}`;
};

/** Baseline's checks, in the order the standard lists its controls. */
export const BASELINE_CHECKS: readonly PodSecurityCheck[] = [
  {
    id: 'windowsHostProcess',
    level: 'baseline',
    firstViolation: ({ spec }) =>
      podThenContainers(spec, 'windowsOptions.hostProcess', (context) =>
        field(context, 'windowsOptions', 'hostProcess') === true ? 'true' : undefined,
      ),
  },
  { id: 'hostNamespaces', level: 'baseline', firstViolation: ({ spec }) => hostNamespaces(spec) },
  {
    id: 'privileged',
    level: 'baseline',
    firstViolation: ({ spec }) =>
      firstContainer(spec, 'securityContext.privileged', ({ securityContext }) =>
        securityContext?.privileged === true ? 'true' : undefined,
      ),
  },
  {
    id: 'capabilities_baseline',
    level: 'baseline',
    firstViolation: ({ spec }) =>
      firstContainer(spec, 'securityContext.capabilities.add', ({ securityContext }) =>
        words(field(securityContext, 'capabilities', 'add')).find((cap) => !BASELINE_CAPABILITIES.has(cap)),
      ),
  },
  { id: 'hostPathVolumes', level: 'baseline', firstViolation: ({ spec }) => hostPathVolumes(spec) },
  { id: 'hostPorts', level: 'baseline', firstViolation: ({ spec }) => hostPorts(spec) },
  { id: 'appArmorProfile', level: 'baseline', firstViolation: appArmor },
  {
    id: 'seLinuxOptions',
    level: 'baseline',
    firstViolation: ({ spec }) =>
      podThenContainers(spec, 'seLinuxOptions', (context) => seLinuxProblem(context?.seLinuxOptions)),
  },
  {
    id: 'procMount',
    level: 'baseline',
    firstViolation: ({ spec }) =>
      firstContainer(spec, 'securityContext.procMount', ({ securityContext }) => {
        const mount = securityContext?.procMount;
        return mount === undefined || mount === null || mount === 'Default' ? undefined : shown(mount);
      }),
  },
  {
    id: 'seccompProfile_baseline',
    level: 'baseline',
    firstViolation: ({ spec }) => podThenContainers(spec, 'seccompProfile.type', profileType('seccompProfile')),
  },
  { id: 'sysctls', level: 'baseline', firstViolation: ({ spec }) => sysctls(spec) },
];
