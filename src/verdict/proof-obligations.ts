import { sameIp, type Family } from '../addr/ip.js';
import { isProof, type Proof } from '../probe/proof.js';
import type { ProbeTarget } from '../probe/probe-plan.js';

/** What had to be proven for a pass: fixed before probing, from the plan and the configuration. */
export interface ProofObligations {
  /** Families the pod must be proven in (from --family and the pod's network). */
  readonly families: readonly Family[];
  /** Every planned probe target: each needs its own proof. */
  readonly targets: readonly ProbeTarget[];
  /** --rules required: the rules check must have run and passed. */
  readonly rulesRequired: boolean;
}

function sameTarget(a: ProbeTarget, b: ProbeTarget): boolean {
  return (
    a.family === b.family &&
    a.path === b.path &&
    sameIp(a.destination, b.destination) &&
    a.port === b.port &&
    a.expectedPort === b.expectedPort
  );
}

/** Why the proofs do not discharge the obligations, or undefined when they do. */
export function unmetObligation(obligations: ProofObligations, proofs: readonly Proof[]): string | undefined {
  if (obligations.families.length === 0) return 'no family had to be proven, so nothing was';
  for (const family of obligations.families) {
    if (!obligations.targets.some((target) => target.family === family)) return `no probe was planned for ${family}`;
  }
  const genuine = proofs.filter((proof) => isProof(proof));
  for (const target of obligations.targets) {
    if (!genuine.some((proof) => proof.family === target.family && sameTarget(proof.target, target))) {
      return `no proof of interception for ${target.family} port ${target.port}`;
    }
  }
  return undefined;
}
