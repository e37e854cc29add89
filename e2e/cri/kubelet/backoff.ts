/**
 * Time as the kubelet's restart back-off sees it, injectable: the real clock in the scenarios, a
 * manual one where a test must see the whole back-off sequence (10 s to 5 min) without waiting.
 */
export interface Clock {
  now(): Date;
  /** Resolves after `ms`, or at once (false) when `signal` aborts: a deleted pod stops waiting. */
  sleep(ms: number, signal: AbortSignal): Promise<boolean>;
}

export const realClock: Clock = {
  now: () => new Date(),
  sleep: (ms, signal) =>
    new Promise((resolve) => {
      if (signal.aborted) return resolve(false);
      const timer = setTimeout(() => resolve(true), ms);
      signal.addEventListener('abort', () => (clearTimeout(timer), resolve(false)), { once: true });
    }),
};

/** A clock that moves only when told: each sleep is recorded and waits for `advance()`. */
export class ManualClock implements Clock {
  readonly sleeps: number[] = [];
  private current = Date.parse('2026-01-01T00:00:00Z');
  private waiting: Array<{ until: number; wake: (value: boolean) => void }> = [];
  private sleepListeners: Array<() => void> = [];

  now(): Date {
    return new Date(this.current);
  }

  sleep(ms: number, signal: AbortSignal): Promise<boolean> {
    this.sleeps.push(ms);
    for (const listener of this.sleepListeners.splice(0)) listener();
    if (signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const entry = { until: this.current + ms, wake: resolve };
      this.waiting.push(entry);
      signal.addEventListener('abort', () => {
        this.waiting = this.waiting.filter((other) => other !== entry);
        resolve(false);
      });
    });
  }

  /** Moves time on by `ms` and wakes every sleeper whose time has come. */
  advance(ms: number): void {
    this.current += ms;
    const due = this.waiting.filter((entry) => entry.until <= this.current);
    this.waiting = this.waiting.filter((entry) => entry.until > this.current);
    for (const entry of due) entry.wake(true);
  }

  /** Resolves when the n-th sleep (1-based) has begun. */
  async sleepsStarted(n: number): Promise<void> {
    while (this.sleeps.length < n) await new Promise<void>((resolve) => this.sleepListeners.push(resolve));
  }
}

/** The kubelet's container restart back-off: 10 s, doubling per failure, capped at 5 min. */
const BACKOFF_INITIAL_MS = 10_000;
const BACKOFF_MAX_MS = 300_000;

export class RestartBackOff {
  private readonly delays = new Map<string, number>();

  /** The delay before the next restart of `key` (pod uid and container name). */
  next(key: string): number {
    const previous = this.delays.get(key);
    const delay = previous === undefined ? BACKOFF_INITIAL_MS : Math.min(previous * 2, BACKOFF_MAX_MS);
    this.delays.set(key, delay);
    return delay;
  }
}

/** How the kubelet prints a back-off in its waiting message: `10s`, `1m20s`, `5m0s` (Go's Duration). */
export function goDuration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds}s`;
  return `${Math.floor(seconds / 60)}m${seconds % 60}s`;
}
