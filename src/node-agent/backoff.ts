/**
 * Per-owner memory of recreations. A Deployment's new pod has a new name, so the loop to stop is
 * the owner's: its pods recreated N times within a window are left alone and reported, and each
 * recreation waits exponentially longer than the one before.
 */
export interface BackoffPolicy {
  readonly baseMs: number;
  readonly maxMs: number;
  readonly maxRecreations: number;
  readonly windowMs: number;
}

export type BackoffState = ReadonlyMap<string, readonly number[]>;

export type BackoffVerdict =
  | { readonly kind: 'go' }
  | { readonly kind: 'wait'; readonly untilMs: number }
  | { readonly kind: 'exhausted'; readonly count: number };

function recent(state: BackoffState, owner: string, policy: BackoffPolicy, now: number): readonly number[] {
  return (state.get(owner) ?? []).filter((at) => now - at < policy.windowMs);
}

export function backoffVerdict(state: BackoffState, owner: string, policy: BackoffPolicy, now: number): BackoffVerdict {
  const times = recent(state, owner, policy, now);
  if (times.length >= policy.maxRecreations) return { kind: 'exhausted', count: times.length };
  if (times.length === 0) return { kind: 'go' };
  const delay = Math.min(policy.maxMs, policy.baseMs * 2 ** (times.length - 1));
  const untilMs = times[times.length - 1]! + delay;
  return untilMs <= now ? { kind: 'go' } : { kind: 'wait', untilMs };
}

/** The state after a recreation of `owner` at `now`, with entries older than the window dropped. */
export function recordRecreation(state: BackoffState, owner: string, policy: BackoffPolicy, now: number): BackoffState {
  const next = new Map<string, readonly number[]>();
  for (const [key, times] of state) {
    const kept = times.filter((at) => now - at < policy.windowMs);
    if (kept.length > 0) next.set(key, kept);
  }
  next.set(owner, [...(next.get(owner) ?? []), now]);
  return next;
}
