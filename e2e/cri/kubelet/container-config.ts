import type { Message } from '../cri-client.js';
import type { ContainerSpec, PodObject, SecurityContext } from './pod-spec.js';

/** What the kubelet masks and makes read-only in /proc and /sys for an unprivileged container (pkg/securitycontext). */
const DEFAULT_MASKED_PATHS = [
  '/proc/asound',
  '/proc/acpi',
  '/proc/kcore',
  '/proc/keys',
  '/proc/latency_stats',
  '/proc/timer_list',
  '/proc/timer_stats',
  '/proc/sched_debug',
  '/proc/scsi',
  '/sys/firmware',
  '/sys/devices/virtual/powercap',
];
const DEFAULT_READONLY_PATHS = ['/proc/bus', '/proc/fs', '/proc/irq', '/proc/sys', '/proc/sysrq-trigger'];

/** The namespaces a pod's containers share: the pod's network and IPC, their own PIDs. */
const NAMESPACES = { network: 'POD', pid: 'CONTAINER', ipc: 'POD' };

/** The container's effective security context: its own fields over the pod's (the kubelet's merge). */
function effectiveSecurityContext(pod: PodObject, container: ContainerSpec): SecurityContext {
  return { ...(pod.spec.securityContext ?? {}), ...(container.securityContext ?? {}) };
}

/** The seccomp profile: RuntimeDefault unless the pod says otherwise (a kubelet with seccompDefault on). */
function seccompOf(context: SecurityContext): Message {
  const type = context.seccompProfile?.type ?? 'RuntimeDefault';
  return { profile_type: type === 'Unconfined' ? 'Unconfined' : 'RuntimeDefault' };
}

/** The RunPodSandbox config the kubelet sends for this pod. */
export function sandboxConfig(pod: PodObject, attempt: number, logDirectory: string, cgroupParent: string): Message {
  const { name, namespace, uid } = pod.metadata;
  const context = pod.spec.securityContext ?? {};
  return {
    metadata: { name, uid, namespace, attempt },
    hostname: name,
    log_directory: logDirectory,
    labels: { 'io.kubernetes.pod.name': name, 'io.kubernetes.pod.namespace': namespace, 'io.kubernetes.pod.uid': uid },
    annotations: pod.metadata.annotations ?? {},
    linux: {
      cgroup_parent: cgroupParent,
      security_context: {
        namespace_options: NAMESPACES,
        ...(context.runAsUser === undefined ? {} : { run_as_user: { value: context.runAsUser } }),
        supplemental_groups: context.supplementalGroups ?? [],
        seccomp: seccompOf(context),
      },
    },
  };
}

/** The CreateContainer config the kubelet sends (kuberuntime_container.go generateContainerConfig). */
export function containerConfig(input: {
  readonly pod: PodObject;
  readonly container: ContainerSpec;
  readonly image: string;
  readonly attempt: number;
  readonly logPath: string;
  readonly terminationFile: string;
  readonly podIP: string;
  readonly volumeMounts?: readonly Message[];
}): Message {
  const { pod, container } = input;
  const context = effectiveSecurityContext(pod, container);
  return {
    metadata: { name: container.name, attempt: input.attempt },
    image: { image: input.image },
    command: container.command ?? [],
    args: container.args ?? [],
    // In cri-api v1 KeyValue.value is bytes.
    envs: (container.env ?? []).map((entry) => ({
      key: entry.name,
      value: Buffer.from(entry.value ?? downwardValue(pod, entry.valueFrom?.fieldRef?.fieldPath, input.podIP), 'utf8'),
    })),
    mounts: [
      {
        container_path: container.terminationMessagePath ?? '/dev/termination-log',
        host_path: input.terminationFile,
        readonly: false,
      },
      ...(input.volumeMounts ?? []),
    ],
    log_path: input.logPath,
    labels: {
      'io.kubernetes.container.name': container.name,
      'io.kubernetes.pod.name': pod.metadata.name,
      'io.kubernetes.pod.namespace': pod.metadata.namespace,
      'io.kubernetes.pod.uid': pod.metadata.uid,
    },
    annotations: { 'io.kubernetes.container.restartCount': String(input.attempt) },
    linux: { resources: resourcesOf(container), security_context: linuxSecurityContext(context) },
  };
}

/** The downward API fields a validator's env asks for. */
function downwardValue(pod: PodObject, fieldPath: string | undefined, podIP: string): string {
  const values: Record<string, string> = {
    'metadata.name': pod.metadata.name,
    'metadata.namespace': pod.metadata.namespace,
    'metadata.uid': pod.metadata.uid,
    'spec.nodeName': pod.spec.nodeName ?? '',
    'status.podIP': podIP,
  };
  return fieldPath === undefined ? '' : (values[fieldPath] ?? '');
}

const UNITS: Record<string, number> = { Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, k: 1e3, M: 1e6, G: 1e9, '': 1 };

function bytesOf(quantity: string | undefined): number {
  const match = /^(\d+)(Ki|Mi|Gi|k|M|G|)$/.exec(quantity ?? '');
  return match ? Number(match[1]) * (UNITS[match[2] as string] as number) : 0;
}

/** Memory limit and CPU shares, as the kubelet computes them (shares = millicores * 1024 / 1000, at least 2). */
function resourcesOf(container: ContainerSpec): Message {
  const cpu = /^(\d+)(m?)$/.exec(container.resources?.requests?.['cpu'] ?? '');
  const millis = cpu ? Number(cpu[1]) * (cpu[2] === 'm' ? 1 : 1000) : 0;
  return {
    cpu_shares: Math.max(2, Math.floor((millis * 1024) / 1000)),
    memory_limit_in_bytes: bytesOf(container.resources?.limits?.['memory']),
  };
}

function linuxSecurityContext(context: SecurityContext): Message {
  const privileged = context.privileged === true;
  return {
    capabilities: {
      add_capabilities: [...(context.capabilities?.add ?? [])],
      drop_capabilities: [...(context.capabilities?.drop ?? [])],
    },
    privileged,
    namespace_options: NAMESPACES,
    ...(context.runAsUser === undefined ? {} : { run_as_user: { value: context.runAsUser } }),
    ...(context.runAsGroup === undefined ? {} : { run_as_group: { value: context.runAsGroup } }),
    readonly_rootfs: context.readOnlyRootFilesystem === true,
    // The kubelet sets no_new_privs exactly when allowPrivilegeEscalation is false.
    no_new_privs: context.allowPrivilegeEscalation === false,
    masked_paths: privileged ? [] : DEFAULT_MASKED_PATHS,
    readonly_paths: privileged ? [] : DEFAULT_READONLY_PATHS,
    seccomp: privileged ? { profile_type: 'Unconfined' } : seccompOf(context),
  };
}
