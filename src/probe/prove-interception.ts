import type { Family } from '../addr/ip.js';
import { attemptProbe, isConclusive, type AttemptOutcome } from './attempt.js';
import type { Arrival } from './listener.js';
import { ProbeListener, type ListenError } from './listener.js';
import type { ProbeTarget } from './probe-plan.js';

export interface ProbeTiming {
  /** Absolute time (Date.now()) by which every probe must have been proven. */
  readonly deadline: number;
  /** After a conclusive failure, how long late rules still get before the probe gives up. */
  readonly settleMs: number;
  /** Per-attempt cap: a dropped SYN must not use up the whole deadline in one attempt. */
  readonly attemptTimeoutMs: number;
}

export interface ProbeResult {
  readonly target: ProbeTarget;
  readonly status: 'passed' | 'failed' | 'aborted';
  readonly attempts: number;
  readonly elapsedMs: number;
  readonly arrival: Arrival | undefined;
  readonly lastOutcome: AttemptOutcome | undefined;
  /** Outcome kinds seen, with counts: the evidence an operator reads. */
  readonly outcomes: Readonly<Record<string, number>>;
  /** Ended by a conclusive answer rather than by the deadline. */
  readonly endedEarly: boolean;
}

export type ProbeRun =
  | { readonly kind: 'listen-failed'; readonly error: ListenError }
  | { readonly kind: 'probed'; readonly results: readonly ProbeResult[] };

export interface ProbeHooks {
  readonly onAttempt?: (target: ProbeTarget, attempt: number, outcome: AttemptOutcome) => void;
}

/**
 * Proves every target concurrently, each with its own retry loop, against listeners bound where
 * the proxy will listen. Backoff keeps a pod that waits for late rules from spinning.
 */
export async function proveInterception(
  targets: readonly ProbeTarget[],
  timing: ProbeTiming,
  signal: AbortSignal,
  hooks: ProbeHooks = {},
): Promise<ProbeRun> {
  const listener = new ProbeListener();
  try {
    const portFamilies = new Map<number, Set<Family>>();
    for (const target of targets) {
      const families = portFamilies.get(target.expectedPort) ?? new Set<Family>();
      families.add(target.family);
      portFamilies.set(target.expectedPort, families);
    }
    for (const [port, families] of portFamilies) {
      const error = await listener.listen(port, [...families]);
      if (error) return { kind: 'listen-failed', error };
    }
    const results = await Promise.all(targets.map((target) => probeUntilDecided(target, listener, timing, signal, hooks)));
    return { kind: 'probed', results };
  } finally {
    await listener.close();
  }
}

async function probeUntilDecided(
  target: ProbeTarget,
  listener: ProbeListener,
  timing: ProbeTiming,
  signal: AbortSignal,
  hooks: ProbeHooks,
): Promise<ProbeResult> {
  const started = Date.now();
  const outcomes: Record<string, number> = {};
  let attempts = 0;
  let backoffMs = 50;
  let firstConclusiveAt: number | undefined;
  let lastOutcome: AttemptOutcome | undefined;
  const result = (status: ProbeResult['status'], arrival?: Arrival, endedEarly = false): ProbeResult => ({
    target, status, attempts, elapsedMs: Date.now() - started, arrival, lastOutcome, outcomes, endedEarly,
  });

  while (Date.now() < timing.deadline) {
    const attemptTimeout = Math.min(timing.attemptTimeoutMs, timing.deadline - Date.now());
    const outcome = await attemptProbe(target, listener, attemptTimeout, signal);
    attempts++;
    lastOutcome = outcome;
    outcomes[outcome.kind] = (outcomes[outcome.kind] ?? 0) + 1;
    hooks.onAttempt?.(target, attempts, outcome);
    if (outcome.kind === 'intercepted') return result('passed', outcome.arrival);
    if (outcome.kind === 'aborted') return result('aborted');
    const now = Date.now();
    if (isConclusive(outcome)) firstConclusiveAt ??= now;
    if (firstConclusiveAt !== undefined && now - firstConclusiveAt >= timing.settleMs) return result('failed', undefined, true);
    if (outcome.kind === 'no-answer') continue;
    const settleLeft = firstConclusiveAt === undefined ? Infinity : firstConclusiveAt + timing.settleMs - now;
    const pause = Math.max(0, Math.min(backoffMs, timing.deadline - now, settleLeft));
    backoffMs = Math.min(backoffMs * 2, 400);
    if (await sleep(pause, signal)) return result('aborted');
  }
  return result('failed');
}

/** Resolves true when aborted. */
function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(true);
    const onAbort = (): void => { clearTimeout(timer); resolve(true); };
    const timer = setTimeout(() => { signal.removeEventListener('abort', onAbort); resolve(false); }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Settle window: at most 2 s, or a quarter of the timeout when that is shorter. */
export function settleWindowMs(timeoutMs: number): number {
  return Math.min(2000, Math.floor(timeoutMs / 4));
}
