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
  /** How long one connection may wait for its answer. */
  readonly attemptTimeoutMs: number;
  /** How often a fresh connection is started while earlier ones are still unanswered. */
  readonly launchIntervalMs: number;
}

export interface ProbeResult {
  readonly target: ProbeTarget;
  readonly status: 'passed' | 'failed' | 'aborted';
  /** Attempts that were answered (or timed out) before the probe decided. */
  readonly attempts: number;
  /** Attempts started, and which of them was intercepted (0 when none). */
  readonly launched: number;
  readonly interceptedAttempt: number;
  readonly elapsedMs: number;
  readonly arrival: Arrival | undefined;
  readonly lastOutcome: AttemptOutcome | undefined;
  /** The latest answer from the network, which says more than a later silence. */
  readonly lastConclusive: AttemptOutcome | undefined;
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
  let lastConclusive: AttemptOutcome | undefined;
  let launched = 0;
  let nextLaunchAt = started;
  // Attempts overlap: a SYN whose answer is slow (an ICMPv6 error can take a second) keeps its
  // full lifetime, while a fresh connection every interval picks up rules that landed meanwhile
  // (a retransmitted SYN reuses the old conntrack entry, so only a new connection can be captured).
  const stopAll = new AbortController();
  const stop = (): void => stopAll.abort();
  signal.addEventListener('abort', stop, { once: true });
  const inFlight = new Map<number, Promise<{ id: number; outcome: AttemptOutcome }>>();
  let interceptedAttempt = 0;
  const result = (status: ProbeResult['status'], arrival?: Arrival, endedEarly = false): ProbeResult => {
    stop();
    return { target, status, attempts, launched, interceptedAttempt, elapsedMs: Date.now() - started, arrival, lastOutcome, lastConclusive, outcomes, endedEarly };
  };

  try {
    for (;;) {
      const now = Date.now();
      if (signal.aborted) return result('aborted');
      if (now >= timing.deadline && inFlight.size === 0) return result('failed');
      if (now >= nextLaunchAt && now < timing.deadline && inFlight.size < MAX_IN_FLIGHT) {
        const id = ++launched;
        const lifetime = Math.min(timing.attemptTimeoutMs, timing.deadline - now);
        inFlight.set(id, attemptProbe(target, listener, lifetime, stopAll.signal).then((outcome) => ({ id, outcome })));
        nextLaunchAt = now + timing.launchIntervalMs;
      }
      const wake = Math.max(1, Math.min(nextLaunchAt, timing.deadline) - Date.now());
      const finished = await Promise.race([...inFlight.values(), delay(wake)]);
      if (!finished) continue;
      inFlight.delete(finished.id);
      const { outcome } = finished;
      if (outcome.kind === 'aborted') {
        if (signal.aborted) return result('aborted');
        continue;
      }
      // Only answered attempts count: ones still in flight when the probe decides are abandoned.
      attempts++;
      lastOutcome = outcome;
      outcomes[outcome.kind] = (outcomes[outcome.kind] ?? 0) + 1;
      hooks.onAttempt?.(target, finished.id, outcome);
      if (outcome.kind === 'intercepted') {
        interceptedAttempt = finished.id;
        return result('passed', outcome.arrival);
      }
      const at = Date.now();
      if (isConclusive(outcome)) {
        lastConclusive = outcome;
        firstConclusiveAt ??= at;
        // An answer came back at once: retry soon, backing off so a refusing pod is not hammered.
        nextLaunchAt = Math.min(nextLaunchAt, at + backoffMs);
        backoffMs = Math.min(backoffMs * 2, 400);
      } else if (outcome.kind === 'no-answer') {
        nextLaunchAt = Math.min(nextLaunchAt, at);
      }
      if (firstConclusiveAt !== undefined && at - firstConclusiveAt >= timing.settleMs) return result('failed', undefined, true);
      if (firstConclusiveAt !== undefined) nextLaunchAt = Math.min(nextLaunchAt, firstConclusiveAt + timing.settleMs);
    }
  } finally {
    signal.removeEventListener('abort', stop);
    stop();
    await Promise.allSettled(inFlight.values());
  }
}

const MAX_IN_FLIGHT = 4;

function delay(ms: number): Promise<undefined> {
  return new Promise((resolve) => setTimeout(() => resolve(undefined), ms));
}

/** Settle window: at most 2 s, or a quarter of the timeout when that is shorter. */
export function settleWindowMs(timeoutMs: number): number {
  return Math.min(2000, Math.floor(timeoutMs / 4));
}
