import type { JudgedPod } from './pod-security-fields.js';

/** The Pod Security Standards' levels, least strict first (as the namespace labels spell them). */
export const POD_SECURITY_LEVELS = ['privileged', 'baseline', 'restricted'] as const;
export type PodSecurityLevel = (typeof POD_SECURITY_LEVELS)[number];

/** One check of a level: its upstream id and the pod's first violation of it, as a sentence. */
export interface PodSecurityCheck {
  readonly id: string;
  readonly level: Exclude<PodSecurityLevel, 'privileged'>;
  /** The baseline check this restricted one replaces at restricted (upstream's OverrideCheckIDs). */
  readonly overrides?: string;
  readonly firstViolation: (pod: JudgedPod) => string | undefined;
}
