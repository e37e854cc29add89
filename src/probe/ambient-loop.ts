import type { AmbientObservation } from './ambient-capture.js';
import type { AmbientAttempt } from './ambient-attempt.js';
import type { Clock } from './clock.js';
import { certifyTableArrival, type Proof } from './proof.js';
import type { ProbeTarget } from './probe-plan.js';

export interface AmbientTiming {
  /** Absolute time (clock.now()) by which capture must have been seen. */
  readonly deadline: number;
  /** How long one connection may wait for an answer; a capture answers at once. */
  readonly attemptTimeoutMs: number;
  /** The pause between attempts: ambient may capture a running pod late, so a miss is retried. */
  readonly retryIntervalMs: number;
}

export interface AmbientResult {
  readonly target: ProbeTarget;
  readonly status: 'passed' | 'failed' | 'aborted';
  readonly attempts: number;
  /** From the first attempt's start to the end: for a pass, how long capture took to appear. */
  readonly elapsedMs: number;
  readonly proof: Proof | undefined;
  /** What decided the result: the capture, or the latest telling miss. */
  readonly last: AmbientObservation | undefined;
  readonly outcomes: Readonly<Record<string, number>>;
}

export type LaunchAmbient = (target: ProbeTarget, timeoutMs: number, signal: AbortSignal) => Promise<AmbientAttempt>;

/**
 * A silence shorter than this, cut by the deadline, tells nothing: a starved node may not have
 * run the validator. Such an attempt never replaces a telling one as the reason.
 */
const MIN_TELLING_SILENCE_MS = 250;

/**
 * Polls until the pod's socket tables show this probe accepted on ztunnel's port, or the
 * deadline. A miss is not final: istio-cni's node agent may enrol a running pod after the
 * validator started. Every attempt is a fresh connection (a NAT decision is made on a
 * connection's first packet, so an old one never turns captured).
 */
export async function pollAmbientCapture(
  target: ProbeTarget,
  timing: AmbientTiming,
  launch: LaunchAmbient,
  clock: Clock,
  signal: AbortSignal,
): Promise<AmbientResult> {
  const started = clock.now();
  const outcomes: Record<string, number> = {};
  let attempts = 0;
  let last: AmbientObservation | undefined;
  const result = (status: AmbientResult['status'], proof?: Proof): AmbientResult => ({
    target,
    status,
    attempts,
    elapsedMs: clock.now() - started,
    proof,
    last,
    outcomes,
  });
  while (!signal.aborted && clock.now() < timing.deadline) {
    const timeoutMs = Math.max(1, Math.min(timing.attemptTimeoutMs, timing.deadline - clock.now()));
    const seen = await launch(target, timeoutMs, signal);
    if (seen.kind === 'aborted') break;
    attempts++;
    outcomes[seen.kind] = (outcomes[seen.kind] ?? 0) + 1;
    if (seen.kind === 'captured') {
      const proof = certifyTableArrival(target, seen, attempts);
      last = seen;
      if (typeof proof !== 'string') return result('passed', proof);
      last = { kind: 'not-theirs', sentence: proof };
    } else if (telling(seen) || !last) last = seen;
    await clock.sleep(Math.min(timing.retryIntervalMs, Math.max(0, timing.deadline - clock.now())), signal);
  }
  return result(signal.aborted ? 'aborted' : 'failed');
}

function telling(seen: AmbientObservation): boolean {
  return seen.kind !== 'not-captured' || seen.silentMs === undefined || seen.silentMs >= MIN_TELLING_SILENCE_MS;
}

/** Whether a failed result observed anything, or only ran out of time before an attempt could tell. */
export function observedMiss(result: AmbientResult): boolean {
  return result.last !== undefined && telling(result.last);
}
