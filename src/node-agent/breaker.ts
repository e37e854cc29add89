/**
 * The node circuit breaker, as pure state. More than `threshold` blocked pods within `windowMs`
 * means the node, not the pods, is broken: recreating would only feed the loop, so the agent
 * stops acting. It closes only after the node stayed healthy for a whole window: no new blocked
 * pod, and the CNI audit (when one is plugged in) clean for that long.
 */
export interface BreakerPolicy {
  readonly threshold: number;
  readonly windowMs: number;
}

export interface BreakerState {
  readonly open: boolean;
  /** When each recent blocked pod was seen (within one window). */
  readonly blockedAt: readonly number[];
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

function trimmed(times: readonly number[], policy: BreakerPolicy, now: number): number[] {
  return times.filter((at) => now - at < policy.windowMs);
}

/** A blocked pod whose run ended at `at` (now by default); a run older than the window is not counted. */
export function recordBlocked(state: BreakerState, policy: BreakerPolicy, now: number, at = now): BreakerStep {
  if (now - at >= policy.windowMs) return { state, transition: undefined };
  const blockedAt = [...trimmed(state.blockedAt, policy, now), at];
  const tripped = !state.open && blockedAt.length > policy.threshold;
  return {
    state: { ...state, blockedAt, open: state.open || tripped, openedAt: tripped ? now : state.openedAt },
    transition: tripped ? 'opened' : undefined,
  };
}

/** The audit's verdict; an unhealthy audit opens the breaker at once (the CNI config is wrong). */
export function recordAudit(state: BreakerState, healthy: boolean, now: number): BreakerStep {
  if (healthy) return { state: { ...state, auditHealthySince: state.auditHealthySince ?? now }, transition: undefined };
  const opening = !state.open;
  return {
    state: { ...state, open: true, openedAt: opening ? now : state.openedAt, auditHealthySince: undefined },
    transition: opening ? 'opened' : undefined,
  };
}

/** Called on a timer: closes the breaker once a full window passed with nothing wrong. */
export function tick(state: BreakerState, policy: BreakerPolicy, now: number): BreakerStep {
  const blockedAt = trimmed(state.blockedAt, policy, now);
  if (!state.open) return { state: { ...state, blockedAt }, transition: undefined };
  const lastTrouble = Math.max(state.openedAt ?? 0, ...state.blockedAt);
  const auditOk = state.auditHealthySince !== undefined && now - state.auditHealthySince >= policy.windowMs;
  if (now - lastTrouble >= policy.windowMs && auditOk) {
    return {
      state: { open: false, blockedAt, openedAt: undefined, auditHealthySince: state.auditHealthySince },
      transition: 'closed',
    };
  }
  return { state: { ...state, blockedAt }, transition: undefined };
}
