/**
 * The node circuit breaker, as pure state. Blocked pods of more than `threshold` distinct owners,
 * from at least `minNamespaces` namespaces, within `windowMs` mean the node, not the pods, is
 * broken: recreating would only feed the loop, so the agent stops acting. Owners, not runs or
 * pods: one pod restarting, or one Deployment's replicas, are one workload's trouble. Namespaces,
 * because owners are the pod author's to write (ownerReferences) and to create: one tenant, in its
 * namespace, must not open the breaker (and taint the node) for everyone. It closes only after the
 * node stayed healthy for a whole window: no new blocked pod, and the CNI audit (when one is
 * plugged in) clean for that long. An unhealthy audit is a prediction, not an observation: it opens
 * the breaker only together with one counted validator failure on the node within the window
 * (either may come first); alone it opens nothing.
 */
export interface BreakerPolicy {
  readonly threshold: number;
  readonly windowMs: number;
  readonly minNamespaces: number;
}

/** Whose blocked pod it was: the namespace, and the owner as `namespace/uid` (a uid from another namespace is another owner). */
export interface BlockedBy {
  readonly namespace: string;
  readonly owner: string;
}

export interface BlockedEntry extends BlockedBy {
  readonly at: number;
}

export interface BreakerState {
  readonly open: boolean;
  /** Each recent blocked pod (within one window), with its owner. */
  readonly blockedAt: readonly BlockedEntry[];
  readonly openedAt: number | undefined;
  /** Since when the CNI audit has been healthy (-Infinity with no audit); undefined while unhealthy. */
  readonly auditHealthySince: number | undefined;
}

export const CLOSED_BREAKER: BreakerState = {
  open: false,
  blockedAt: [],
  openedAt: undefined,
  auditHealthySince: Number.NEGATIVE_INFINITY,
};

export type BreakerTransition = 'opened' | 'closed' | undefined;

export interface BreakerStep {
  readonly state: BreakerState;
  readonly transition: BreakerTransition;
}

function trimmed(entries: readonly BlockedEntry[], policy: BreakerPolicy, now: number): BlockedEntry[] {
  return entries.filter((entry) => now - entry.at < policy.windowMs);
}

/** Distinct owners past the threshold, spread over enough namespaces. */
function trips(entries: readonly BlockedEntry[], policy: BreakerPolicy): boolean {
  const owners = new Set(entries.map((entry) => entry.owner));
  const namespaces = new Set(entries.map((entry) => entry.namespace));
  return owners.size > policy.threshold && namespaces.size >= policy.minNamespaces;
}

/** A blocked pod of `by` whose run ended at `at` (now by default); a run older than the window is not counted. */
export function recordBlocked(
  state: BreakerState,
  policy: BreakerPolicy,
  by: BlockedBy,
  now: number,
  at = now,
): BreakerStep {
  if (now - at >= policy.windowMs) return { state, transition: undefined };
  // One entry per owner, its newest: the window keeps what is recent, not how often one owner failed.
  const others = trimmed(state.blockedAt, policy, now).filter((entry) => entry.owner !== by.owner);
  const previous = state.blockedAt.find((entry) => entry.owner === by.owner && now - entry.at < policy.windowMs);
  const blockedAt = [...others, { ...by, at: Math.max(at, previous?.at ?? at) }];
  // While the audit fails (auditHealthySince undefined), one failure is the observation it lacked.
  const tripped = !state.open && (trips(blockedAt, policy) || state.auditHealthySince === undefined);
  return {
    state: { ...state, blockedAt, open: state.open || tripped, openedAt: tripped ? now : state.openedAt },
    transition: tripped ? 'opened' : undefined,
  };
}

/**
 * The audit's verdict. An unhealthy one opens the breaker only when a counted validator failure on
 * the node lies within the window; otherwise it is remembered, and the next failure opens it.
 */
export function recordAudit(state: BreakerState, policy: BreakerPolicy, healthy: boolean, now: number): BreakerStep {
  if (healthy) return { state: { ...state, auditHealthySince: state.auditHealthySince ?? now }, transition: undefined };
  const observed = trimmed(state.blockedAt, policy, now).length > 0;
  const opening = !state.open && observed;
  return {
    state: {
      ...state,
      open: state.open || opening,
      openedAt: opening ? now : state.openedAt,
      auditHealthySince: undefined,
    },
    transition: opening ? 'opened' : undefined,
  };
}

/** Called on a timer: closes the breaker once a full window passed with nothing wrong. */
export function tick(state: BreakerState, policy: BreakerPolicy, now: number): BreakerStep {
  const blockedAt = trimmed(state.blockedAt, policy, now);
  if (!state.open) return { state: { ...state, blockedAt }, transition: undefined };
  const lastTrouble = Math.max(state.openedAt ?? 0, ...state.blockedAt.map((entry) => entry.at));
  const auditOk = state.auditHealthySince !== undefined && now - state.auditHealthySince >= policy.windowMs;
  if (now - lastTrouble >= policy.windowMs && auditOk) {
    return {
      state: { open: false, blockedAt, openedAt: undefined, auditHealthySince: state.auditHealthySince },
      transition: 'closed',
    };
  }
  return { state: { ...state, blockedAt }, transition: undefined };
}
