import { isConclusive, type AttemptOutcome } from './attempt.js';
import type { Clock } from './clock.js';
import type { StrangerArrival } from './listener.js';
import { certifyArrival, type Proof } from './proof.js';
import type { ProbeTarget } from './probe-plan.js';

export interface ProbeTiming {
  /** Absolute time (clock.now()) by which every probe must have been proven. */
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
  /** Set exactly when the status is 'passed'. */
  readonly proof: Proof | undefined;
  /** A connection at the listener that was not this process's probe: it fails the probe. */
  readonly stranger: StrangerArrival | undefined;
  readonly lastOutcome: AttemptOutcome | undefined;
  /** The latest answer from the network, which says more than a later silence. */
  readonly lastConclusive: AttemptOutcome | undefined;
  /** Outcome kinds seen, with counts: the evidence an operator reads. */
  readonly outcomes: Readonly<Record<string, number>>;
  /** Ended by a conclusive answer rather than by the deadline. */
  readonly endedEarly: boolean;
  /** The longest an unanswered attempt waited: silence is evidence only when it lasted. */
  readonly longestSilenceMs: number;
}

export type LaunchAttempt = (target: ProbeTarget, lifetimeMs: number, signal: AbortSignal) => Promise<AttemptOutcome>;

export interface ProbeHooks {
  readonly onAttempt?: (target: ProbeTarget, attempt: number, outcome: AttemptOutcome) => void;
  /** A connection at a listener that does not fail the probe (inbound traffic at the inbound port). */
  readonly onStranger?: (stranger: StrangerArrival) => void;
}

export interface LoopDeps {
  readonly launch: LaunchAttempt;
  readonly clock: Clock;
  /** Settles when a stranger reaches the port this target must arrive at. */
  readonly stranger: Promise<StrangerArrival>;
  readonly signal: AbortSignal;
  readonly hooks: ProbeHooks;
}

const MAX_IN_FLIGHT = 4;
const FIRST_BACKOFF_MS = 50;
const MAX_BACKOFF_MS = 400;

type Decision = Pick<ProbeResult, 'status'> & Partial<Pick<ProbeResult, 'proof' | 'stranger' | 'endedEarly'>>;
type Finished = { readonly id: number; readonly outcome: AttemptOutcome };

/** What the loop knows so far; one mutable record instead of a scatter of `let`s. */
interface Tally {
  readonly started: number;
  attempts: number;
  launched: number;
  interceptedAttempt: number;
  backoffMs: number;
  nextLaunchAt: number;
  firstConclusiveAt: number | undefined;
  lastOutcome: AttemptOutcome | undefined;
  lastConclusive: AttemptOutcome | undefined;
  readonly outcomes: Record<string, number>;
  readonly inFlight: Map<number, Promise<Finished>>;
  readonly launchedAt: Map<number, number>;
  longestSilenceMs: number;
}

/**
 * Proves one target. Attempts overlap: a SYN whose answer is slow (an ICMPv6 error can take a
 * second) keeps its full lifetime, while a fresh connection every interval picks up rules that
 * landed meanwhile (a retransmitted SYN reuses the old conntrack entry; only a new one is captured).
 */
export async function probeUntilDecided(
  target: ProbeTarget,
  timing: ProbeTiming,
  deps: LoopDeps,
): Promise<ProbeResult> {
  const started = deps.clock.now();
  const tally: Tally = {
    started,
    attempts: 0,
    launched: 0,
    interceptedAttempt: 0,
    backoffMs: FIRST_BACKOFF_MS,
    nextLaunchAt: started,
    firstConclusiveAt: undefined,
    lastOutcome: undefined,
    lastConclusive: undefined,
    outcomes: {},
    inFlight: new Map(),
    launchedAt: new Map(),
    longestSilenceMs: 0,
  };
  const stopAll = new AbortController();
  const stop = (): void => stopAll.abort();
  deps.signal.addEventListener('abort', stop, { once: true });
  try {
    for (;;) {
      const decision = await step(target, timing, deps, tally, stopAll.signal);
      if (decision) return resultOf(target, tally, decision, deps.clock.now());
    }
  } finally {
    deps.signal.removeEventListener('abort', stop);
    stop();
    await Promise.allSettled(tally.inFlight.values());
  }
}

async function step(
  target: ProbeTarget,
  timing: ProbeTiming,
  deps: LoopDeps,
  tally: Tally,
  stopSignal: AbortSignal,
): Promise<Decision | undefined> {
  const now = deps.clock.now();
  if (deps.signal.aborted) return { status: 'aborted' };
  if (now >= timing.deadline && tally.inFlight.size === 0) return { status: 'failed' };
  if (now >= tally.nextLaunchAt && now < timing.deadline && tally.inFlight.size < MAX_IN_FLIGHT) {
    const id = ++tally.launched;
    const lifetime = Math.min(timing.attemptTimeoutMs, timing.deadline - now);
    tally.launchedAt.set(id, now);
    tally.inFlight.set(
      id,
      deps.launch(target, lifetime, stopSignal).then((outcome) => ({ id, outcome })),
    );
    tally.nextLaunchAt = now + timing.launchIntervalMs;
  }
  const wake = Math.max(1, Math.min(tally.nextLaunchAt, timing.deadline) - now);
  // The wake-up timer is cleared once anything else wins the race: a decided probe leaves none.
  // An abort wakes the loop too, rather than waiting out the sleep with no attempt in flight.
  const wokenEarly = new AbortController();
  const wakeOnAbort = (): void => wokenEarly.abort();
  deps.signal.addEventListener('abort', wakeOnAbort, { once: true });
  const event = await Promise.race([
    ...tally.inFlight.values(),
    deps.clock.sleep(wake, wokenEarly.signal).then(() => undefined),
    deps.stranger.then((stranger) => ({ stranger })),
  ]).finally(() => {
    deps.signal.removeEventListener('abort', wakeOnAbort);
    wokenEarly.abort();
  });
  if (!event) return undefined;
  if ('stranger' in event) return { status: 'failed', stranger: event.stranger, endedEarly: true };
  tally.inFlight.delete(event.id);
  return record(target, timing, deps, tally, event);
}

function record(
  target: ProbeTarget,
  timing: ProbeTiming,
  deps: LoopDeps,
  tally: Tally,
  finished: Finished,
): Decision | undefined {
  let { outcome } = finished;
  if (outcome.kind === 'aborted') return deps.signal.aborted ? { status: 'aborted' } : undefined;
  // Only answered attempts count: ones still in flight when the probe decides are abandoned.
  tally.attempts++;
  if (outcome.kind === 'no-answer')
    tally.longestSilenceMs = Math.max(
      tally.longestSilenceMs,
      deps.clock.now() - (tally.launchedAt.get(finished.id) ?? deps.clock.now()),
    );
  if (outcome.kind === 'intercepted') {
    const proof = certifyArrival(target, outcome, finished.id);
    if (typeof proof !== 'string') {
      countOutcome(target, deps, tally, finished.id, outcome);
      tally.interceptedAttempt = finished.id;
      return { status: 'passed', proof };
    }
    outcome = { kind: 'wrong-peer', detail: proof };
  }
  countOutcome(target, deps, tally, finished.id, outcome);
  return schedule(tally, outcome, deps.clock.now(), timing);
}

function countOutcome(target: ProbeTarget, deps: LoopDeps, tally: Tally, id: number, outcome: AttemptOutcome): void {
  tally.lastOutcome = outcome;
  tally.outcomes[outcome.kind] = (tally.outcomes[outcome.kind] ?? 0) + 1;
  deps.hooks.onAttempt?.(target, id, outcome);
}

/** After an answer that was not interception: when to try again, or whether to give up now. */
function schedule(tally: Tally, outcome: AttemptOutcome, at: number, timing: ProbeTiming): Decision | undefined {
  if (isConclusive(outcome)) {
    tally.lastConclusive = outcome;
    tally.firstConclusiveAt ??= at;
    // An answer came back at once: retry soon, backing off so a refusing pod is not hammered.
    tally.nextLaunchAt = Math.min(tally.nextLaunchAt, at + tally.backoffMs);
    tally.backoffMs = Math.min(tally.backoffMs * 2, MAX_BACKOFF_MS);
  } else if (outcome.kind === 'no-answer') {
    tally.nextLaunchAt = Math.min(tally.nextLaunchAt, at);
  }
  if (tally.firstConclusiveAt === undefined) return undefined;
  if (at - tally.firstConclusiveAt >= timing.settleMs) return { status: 'failed', endedEarly: true };
  tally.nextLaunchAt = Math.min(tally.nextLaunchAt, tally.firstConclusiveAt + timing.settleMs);
  return undefined;
}

function resultOf(target: ProbeTarget, tally: Tally, decision: Decision, now: number): ProbeResult {
  return {
    target,
    status: decision.status,
    attempts: tally.attempts,
    launched: tally.launched,
    interceptedAttempt: tally.interceptedAttempt,
    elapsedMs: now - tally.started,
    proof: decision.proof,
    stranger: decision.stranger,
    lastOutcome: tally.lastOutcome,
    lastConclusive: tally.lastConclusive,
    outcomes: tally.outcomes,
    endedEarly: decision.endedEarly ?? false,
    longestSilenceMs: tally.longestSilenceMs,
  };
}

/** Settle window: at most 2 s, or a quarter of the timeout when that is shorter. */
export function settleWindowMs(timeoutMs: number): number {
  return Math.min(2000, Math.floor(timeoutMs / 4));
}
