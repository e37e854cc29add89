import type { AgentClock } from './agent-settings.js';

/** One pending retry per pod key, with how many attempts led to it: a new one replaces the old. */
export class RetryTimers {
  private readonly timers = new Map<string, { attempts: number; cancel: () => void }>();

  constructor(private readonly clock: AgentClock) {}

  attempts(key: string): number {
    return this.timers.get(key)?.attempts ?? 0;
  }

  /** Calls `fn` after `ms` (at once when negative), cancelling the key's pending retry. */
  later(key: string, ms: number, fn: () => void, attempts = this.attempts(key)): void {
    this.timers.get(key)?.cancel();
    const cancel = this.clock.later(fn, Math.max(0, ms));
    this.timers.set(key, { attempts, cancel });
  }

  /** Forgets the key's attempts; a pending retry still fires. */
  succeeded(key: string): void {
    this.timers.delete(key);
  }

  /** Cancels and forgets the key's retry: the pod is gone. */
  forget(key: string): void {
    this.timers.get(key)?.cancel();
    this.timers.delete(key);
  }

  cancelAll(): void {
    for (const timer of this.timers.values()) timer.cancel();
  }
}
