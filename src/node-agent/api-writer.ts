import type { ApiFailure } from '../kube/pods-api.js';
import type { AgentMetrics } from './agent-metrics.js';
import type { AgentClock, AgentLog } from './agent-settings.js';
import { RateLimiter } from './rate-limiter.js';
import { retryDelayMs, type RetryPolicy } from './retry-delay.js';

export type ApiCall<T> = () => Promise<{ ok: true; value: T } | { ok: false; error: ApiFailure }>;

export interface ApiWriterPorts {
  readonly metrics: Pick<AgentMetrics, 'apiError' | 'action'>;
  readonly log: Pick<AgentLog, 'warn'>;
  readonly clock: AgentClock;
  readonly random: () => number;
}

export interface WritePolicy {
  readonly retry: RetryPolicy;
  /** Every API write (delete, patch, Event, taint) shares one token bucket. */
  readonly writesPerSecond: number;
  readonly writeBurst: number;
}

/**
 * The agent's one path to the API for writes: rate-limited, and a failure pauses every write (a
 * 429 or 500 is about the API server, not this pod) for the Retry-After or an exponential delay,
 * so failures never become a storm.
 */
export class ApiWriter {
  private readonly limiter: RateLimiter;
  private pauseAttempts = 0;
  private paused = 0;

  constructor(
    private readonly policy: WritePolicy,
    private readonly ports: ApiWriterPorts,
  ) {
    this.limiter = new RateLimiter(policy.writesPerSecond, policy.writeBurst, ports.clock.now());
  }

  /** Until when (on the agent's clock) every write waits after a failure. */
  get pausedUntil(): number {
    return this.paused;
  }

  /** One write: its value, or undefined when the API refused it (counted, logged, paused). */
  async write<T>(operation: string, call: ApiCall<T>): Promise<T | undefined> {
    await this.waitForTurn();
    const answer = await call();
    if (answer.ok) {
      this.pauseAttempts = 0;
      return answer.value;
    }
    const { status, retryAfterSeconds, message } = answer.error;
    const { metrics, clock, log } = this.ports;
    metrics.apiError(operation, status);
    if (operation === 'delete' || operation === 'label') metrics.action(operation, 'error');
    const delay = retryDelayMs(this.pauseAttempts++, retryAfterSeconds, this.policy.retry, this.ports.random);
    this.paused = Math.max(this.paused, clock.now() + delay);
    log.warn({ operation, status, retryInMs: delay }, message);
    return undefined;
  }

  private async waitForTurn(): Promise<void> {
    const { clock } = this.ports;
    for (;;) {
      const now = clock.now();
      if (now < this.paused) {
        await clock.sleep(this.paused - now);
        continue;
      }
      const wait = this.limiter.tryTake(now);
      if (wait === 0) return;
      await clock.sleep(wait);
    }
  }
}
