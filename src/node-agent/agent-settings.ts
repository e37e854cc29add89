import type { BackoffPolicy } from './backoff.js';
import type { BreakerPolicy } from './breaker.js';
import type { NodeAction } from './node-action.js';
import type { RetryPolicy } from './retry-delay.js';
import type { ShippedValidator } from './validator-trust.js';
import type { GateSettings } from './node-gate.js';

export interface AgentSettings {
  readonly node: string;
  readonly container: string;
  readonly failureExitCode: number;
  readonly action: NodeAction;
  readonly taint: boolean;
  readonly backoff: BackoffPolicy;
  readonly breaker: BreakerPolicy;
  readonly retry: RetryPolicy;
  /** Pods waiting for work at once; more are refused and picked up by a rescan, never dropped. */
  readonly queueCapacity: number;
  /** Every API write (delete, patch, Event, taint) shares one token bucket. */
  readonly writesPerSecond: number;
  readonly writeBurst: number;
  /**
   * Image repositories (or `sha256:` digests) whose runs are Interlock's own verdicts: only those
   * count toward the breaker (see validator-trust.ts). Empty: no validator failure counts.
   */
  readonly trustedImages: readonly string[];
  /** The validator as the printers print it for this mesh: only runs in that shape count (validator-trust.ts). */
  readonly shipped: ShippedValidator;
  /** Only pods in these namespaces are looked at; undefined: every namespace. */
  readonly namespaces?: readonly string[];
  /** The node gate (`--report-condition`, `--startup-taint`); undefined: off. */
  readonly gate?: GateSettings;
}

/**
 * Time, as a port: tests may drive it by hand; production uses the real clock. `now` measures
 * windows, back-offs and rates, so it is monotonic (a wall-clock step moves none of them); `wall`
 * is only for timestamps people read (Events).
 */
export interface AgentClock {
  now(): number;
  sleep(ms: number): Promise<void>;
  later(fn: () => void, ms: number): () => void;
  wall?(): Date;
}

export const REAL_CLOCK: AgentClock = {
  now: () => performance.now(),
  wall: () => new Date(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms).unref()),
  later: (fn, ms) => {
    const timer = setTimeout(fn, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
};

/** The logger the agent needs (pino's shape). */
export interface AgentLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}
