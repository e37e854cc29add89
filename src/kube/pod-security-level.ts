import { BASELINE_CHECKS } from './pod-security-baseline.js';
import type { PodSecurityCheck, PodSecurityLevel } from './pod-security-check.js';
import type { JudgedPod } from './pod-security-fields.js';
import { RESTRICTED_CHECKS } from './pod-security-restricted.js';

/**
 * The Pod Security Standards, judged as the API server's PodSecurity admission judges a pod: the
 * checks of kubernetes/kubernetes staging/src/k8s.io/pod-security-admission/policy/ at tag
 * v1.33.13 (the Go module k8s.io/pod-security-admission v0.33.13; our cluster's version), each at
 * its latest version (`enforce-version: latest`), with upstream's defaults: the
 * UserNamespacesPodSecurityStandards relaxation (alpha, off) is not applied. Init, app and
 * ephemeral containers are all judged; the pod-level securityContext stands in for a container's
 * where upstream lets it (runAsNonRoot, seccompProfile) and is judged itself where upstream judges
 * it (runAsUser, seLinuxOptions, appArmorProfile, seccompProfile, sysctls, windowsOptions).
 */

/** What a pod needs of its namespace's `pod-security.kubernetes.io/enforce` label. */
export interface PodSecurityVerdict {
  /** The strictest level that admits the pod (`privileged` admits every pod). */
  readonly level: PodSecurityLevel;
  /** For each level that refuses the pod, its first violation: `container X: FIELD VALUE`. */
  readonly violations: Readonly<Partial<Record<Exclude<PodSecurityLevel, 'privileged'>, PodSecurityViolation>>>;
}

export interface PodSecurityViolation {
  /** Upstream's check id (check_*.go): `hostNamespaces`, `capabilities_baseline`. */
  readonly check: string;
  readonly sentence: string;
}

/** Restricted is baseline with three checks replaced by stricter ones, and five more. */
const RESTRICTED_LEVEL: readonly PodSecurityCheck[] = [
  ...BASELINE_CHECKS.filter((check) => !RESTRICTED_CHECKS.some((stricter) => stricter.overrides === check.id)),
  ...RESTRICTED_CHECKS,
];

function firstViolation(checks: readonly PodSecurityCheck[], pod: JudgedPod): PodSecurityViolation | undefined {
  for (const check of checks) {
    const sentence = check.firstViolation(pod);
    if (sentence !== undefined) return { check: check.id, sentence };
  }
  return undefined;
}

/** The strictest level that admits the pod, and the first violation of each level that does not. */
export function podSecurityLevel(pod: JudgedPod): PodSecurityVerdict {
  const baseline = firstViolation(BASELINE_CHECKS, pod);
  const restricted = firstViolation(RESTRICTED_LEVEL, pod);
  const violations = { ...(baseline ? { baseline } : {}), ...(restricted ? { restricted } : {}) };
  const level: PodSecurityLevel = baseline ? 'privileged' : restricted ? 'baseline' : 'restricted';
  return { level, violations };
}
