import type { Blocked } from './blocked.js';
import type { PodView } from './pod-view.js';
import { distrustOf, type ShippedValidator } from './validator-trust.js';

export interface CountInput {
  readonly trustedImages: readonly string[];
  readonly shipped: ShippedValidator;
  readonly windowMs: number;
  /** The agent's (monotonic) clock. */
  readonly now: number;
  /** The wall clock, the kubelet's finishedAt's. */
  readonly wallNow: number;
}

/** Counted at `at` on the agent's clock, or not counted, with the distrust to log when that is why. */
export type BreakerCount =
  { readonly counted: true; readonly at: number } | { readonly counted: false; readonly distrust?: string };

const NOT_COUNTED: BreakerCount = { counted: false };

/**
 * Whether a validator failure counts toward the breaker, and when, on the agent's clock. Only
 * failures of the node's CNI count (six pods of one misconfigured Deployment must not taint a
 * node), only of pods the agent would act on (a controller's), only runs that really were
 * Interlock as printed (validator-trust.ts: a tenant's look-alike, or the real one given another
 * port, must not open the breaker), and only runs that finished within the window by the kubelet's
 * finishedAt, so the failures of yesterday do not open the breaker again at every start of the agent.
 */
export function breakerCountOf(view: PodView, blocked: Blocked, input: CountInput): BreakerCount {
  if (!blocked.recreatable || view.ownerKind === 'Pod' || view.ownerKind === 'Node') return NOT_COUNTED;
  const distrust = distrustOf(view, input.trustedImages, input.shipped);
  if (distrust !== undefined) return { counted: false, distrust };
  const finished = view.validator?.finishedAtMs;
  if (finished === undefined) return NOT_COUNTED;
  const age = Math.max(0, input.wallNow - finished);
  if (age >= input.windowMs) return NOT_COUNTED;
  return { counted: true, at: input.now - age };
}
