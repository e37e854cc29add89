import { POD_SECURITY_LEVELS, type PodSecurityLevel } from './pod-security-check.js';

/** The namespace labels PodSecurity admission reads (k8s.io/pod-security-admission/api). */
export const POD_SECURITY_LABEL = {
  enforce: 'pod-security.kubernetes.io/enforce',
  enforceVersion: 'pod-security.kubernetes.io/enforce-version',
  warn: 'pod-security.kubernetes.io/warn',
  audit: 'pod-security.kubernetes.io/audit',
} as const;

/** What a namespace's labels make the API server do with a pod, as api.PolicyToEvaluate reads them. */
export interface NamespacePodSecurity {
  /** Absent: privileged (the API server's default unless its AdmissionConfiguration sets another). */
  readonly enforce: PodSecurityLevel;
  /** The label as written, when it is not a level: upstream then enforces restricted. */
  readonly invalidEnforce: string | undefined;
  /** `enforce-version` unless absent or `latest`: judged here with the latest checks all the same. */
  readonly enforceVersion: string | undefined;
  /** Absent or invalid: privileged (upstream fails open for warn and audit). */
  readonly warn: PodSecurityLevel;
  readonly audit: PodSecurityLevel;
}

const isLevel = (value: string | undefined): value is PodSecurityLevel =>
  (POD_SECURITY_LEVELS as readonly string[]).includes(value ?? '');

const rank = (level: PodSecurityLevel): number => POD_SECURITY_LEVELS.indexOf(level);

/** Whether a namespace at `enforced` admits a pod whose strictest admitting level is `needed`. */
export const admits = (enforced: PodSecurityLevel, needed: PodSecurityLevel): boolean => rank(enforced) <= rank(needed);

export function namespacePodSecurity(labels: Readonly<Record<string, string>>): NamespacePodSecurity {
  const enforce = labels[POD_SECURITY_LABEL.enforce];
  const version = labels[POD_SECURITY_LABEL.enforceVersion];
  const warn = labels[POD_SECURITY_LABEL.warn];
  const audit = labels[POD_SECURITY_LABEL.audit];
  return {
    // ParseLevel: an unknown level parses as restricted, which enforce keeps (fail closed).
    enforce: enforce === undefined ? 'privileged' : isLevel(enforce) ? enforce : 'restricted',
    invalidEnforce: enforce === undefined || isLevel(enforce) ? undefined : enforce,
    enforceVersion: version === undefined || version === 'latest' ? undefined : version,
    warn: isLevel(warn) ? warn : 'privileged',
    audit: isLevel(audit) ? audit : 'privileged',
  };
}
