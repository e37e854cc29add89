import type { Platform } from '../config/platform.js';

/**
 * The securityContext of Interlock's own long-running containers (the admission webhook, the
 * node agent): a fixed non-root uid, no privilege escalation, a read-only root, no capability
 * and the runtime's seccomp profile, which PodSecurity `restricted` admits as it is. On OpenShift
 * no uid: restricted-v2 assigns one from the namespace's range and refuses any other. A fresh
 * object each call: a YAML printer given one object twice would print an alias for the second.
 */
export function workloadSecurityContext(platform: Platform = 'kubernetes'): Record<string, unknown> {
  return {
    runAsNonRoot: true,
    ...(platform === 'openshift' ? {} : { runAsUser: 65532, runAsGroup: 65532 }),
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    capabilities: { drop: ['ALL'] },
    seccompProfile: { type: 'RuntimeDefault' },
  };
}
