import { nodeAgentManifest } from '../../src/node-agent/manifest.js';
import { webhookManifest } from '../../src/webhook/webhook-manifest.js';

/**
 * Pods for the Pod Security Standards evaluator, shared by its unit test
 * (pod-security-level.test.ts) and its differential test against the real API server's PodSecurity
 * admission (e2e/cluster/pod-security.test.ts): Interlock's printed pods, and the webhook's pod
 * with one field broken per row of MUTATIONS.
 */
export type Pod = { metadata?: Record<string, unknown>; spec: Record<string, unknown> };
const templateOf = (documents: readonly object[], kind: string): Pod => {
  const workload = documents.find((document) => (document as { kind?: string }).kind === kind) as {
    spec: { template: Pod };
  };
  return structuredClone(workload.spec.template);
};
export const webhookPod = () =>
  templateOf(
    webhookManifest({ image: 'mesh-interlock:1', namespace: 'w', failurePolicy: 'Ignore', metricsNamespace: 'w' }),
    'Deployment',
  );
export const agentPod = (extra: Parameters<typeof nodeAgentManifest>[0] = { image: 'mesh-interlock:1' }) =>
  templateOf(nodeAgentManifest(extra), 'DaemonSet');

export type Mutation = { check: string; to: 'privileged' | 'baseline'; sentence: string; change: (pod: Pod) => void };
export const webhookContainer = (pod: Pod) => (pod.spec.containers as Record<string, unknown>[])[0]!;
export const context = (pod: Pod) => webhookContainer(pod).securityContext as Record<string, unknown>;

/** One field broken per row, on the webhook's pod (restricted): the level drops and the check says why. */
export const MUTATIONS: Mutation[] = [
  {
    check: 'windowsHostProcess',
    to: 'privileged',
    sentence: 'container webhook: securityContext.windowsOptions.hostProcess true',
    change: (pod) => void (context(pod).windowsOptions = { hostProcess: true }),
  },
  {
    check: 'hostNamespaces',
    to: 'privileged',
    sentence: 'pod: hostPID true',
    change: (pod) => void (pod.spec.hostPID = true),
  },
  {
    check: 'privileged',
    to: 'privileged',
    sentence: 'container webhook: securityContext.privileged true',
    change: (pod) => void (context(pod).privileged = true),
  },
  {
    check: 'capabilities_baseline',
    to: 'privileged',
    sentence: 'container webhook: securityContext.capabilities.add NET_RAW',
    change: (pod) => void (context(pod).capabilities = { drop: ['ALL'], add: ['NET_RAW'] }),
  },
  {
    check: 'hostPathVolumes',
    to: 'privileged',
    sentence: 'volume tls: hostPath /etc',
    change: (pod) => void (pod.spec.volumes = [{ name: 'tls', hostPath: { path: '/etc' } }]),
  },
  {
    check: 'hostPorts',
    to: 'privileged',
    sentence: 'container webhook: ports[].hostPort 8443',
    change: (pod) => void ((webhookContainer(pod).ports as Record<string, unknown>[])[0]!.hostPort = 8443),
  },
  {
    check: 'appArmorProfile',
    to: 'privileged',
    sentence: 'pod: securityContext.appArmorProfile.type Unconfined',
    change: (pod) => void (pod.spec.securityContext = { appArmorProfile: { type: 'Unconfined' } }),
  },
  {
    check: 'seLinuxOptions',
    to: 'privileged',
    sentence: 'container webhook: securityContext.seLinuxOptions type spc_t',
    change: (pod) => void (context(pod).seLinuxOptions = { type: 'spc_t' }),
  },
  {
    check: 'procMount',
    to: 'privileged',
    sentence: 'container webhook: securityContext.procMount Unmasked',
    change: (pod) => void (context(pod).procMount = 'Unmasked'),
  },
  {
    check: 'seccompProfile_baseline',
    to: 'privileged',
    sentence: 'container webhook: securityContext.seccompProfile.type Unconfined',
    change: (pod) => void (context(pod).seccompProfile = { type: 'Unconfined' }),
  },
  {
    check: 'sysctls',
    to: 'privileged',
    sentence: 'pod: securityContext.sysctls kernel.msgmax',
    change: (pod) => void (pod.spec.securityContext = { sysctls: [{ name: 'kernel.msgmax', value: '1' }] }),
  },
  {
    check: 'restrictedVolumes',
    to: 'baseline',
    sentence: 'volume tls: nfs',
    change: (pod) => void (pod.spec.volumes = [{ name: 'tls', nfs: { server: 'nfs.example', path: '/' } }]),
  },
  {
    check: 'allowPrivilegeEscalation',
    to: 'baseline',
    sentence: 'container webhook: securityContext.allowPrivilegeEscalation unset',
    change: (pod) => void delete context(pod).allowPrivilegeEscalation,
  },
  {
    check: 'runAsNonRoot',
    to: 'baseline',
    sentence: 'container webhook: securityContext.runAsNonRoot unset, and not true on the pod',
    change: (pod) => void delete context(pod).runAsNonRoot,
  },
  {
    check: 'runAsUser',
    to: 'baseline',
    sentence: 'container webhook: securityContext.runAsUser 0',
    change: (pod) => void Object.assign(context(pod), { runAsUser: 0 }),
  },
  {
    check: 'seccompProfile_restricted',
    to: 'baseline',
    sentence: 'container webhook: securityContext.seccompProfile.type unset, and not set on the pod',
    change: (pod) => void delete context(pod).seccompProfile,
  },
  {
    check: 'capabilities_restricted',
    to: 'baseline',
    sentence: 'container webhook: securityContext.capabilities.add CHOWN',
    change: (pod) => void (context(pod).capabilities = { drop: ['ALL'], add: ['CHOWN'] }),
  },
];
